import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// Under ``Durability/interval(seconds:)`` the sync thread rolls a full segment: the commits that
/// fill it never wait for the disk, the segment grows at most a quarter past its limit meanwhile, and
/// a roll that fails on that thread reaches the next committer.
@Suite struct BackgroundRollTests {
    static let limit = 32 << 10
    static var slack: Int { limit / 4 }
    /// 160 bytes that do not compress: about 230 bytes in the segment per epoch.
    static func value(_ index: Int) -> [UInt8] {
        var state = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<160).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    /// A journal with small segments, by default under interval durability whose interval never
    /// comes: only a roll wakes its sync thread.
    private func open(
        _ directory: TemporaryDirectory, _ fileSystem: FaultInjectingFileSystem,
        durability: Durability = .interval(seconds: 3600)
    ) throws -> Journal {
        try Journal.open(
            path: directory.path, options: testOptions(durability: durability, segmentSizeLimit: Self.limit),
            fileSystem: fileSystem)
    }

    private func activeSegment(_ journal: Journal) -> (sequence: UInt64, size: Int64) {
        journal.condition.lock()
        defer { journal.condition.unlock() }
        return (journal.segment.header.sequence, journal.segment.size)
    }

    /// Commits one epoch putting a path of its own, and records it.
    private func commitOne(_ journal: Journal, _ index: Int, _ model: Locked<[RestorationPath: [UInt8]]>) throws {
        let path = RestorationPath(["Board", "Card-\(index)"])
        try journal.commit([.put(path, Self.value(index))])
        model.withLock { $0[path] = Self.value(index) }
    }

    private func waitUntil(_ deadline: Date = Date(timeIntervalSinceNow: 120), _ condition: () -> Bool) -> Bool {
        while !condition() {
            if Date() > deadline { return false }
            usleep(1_000)
        }
        return true
    }

    /// Opens the store again: it holds `model`, with nothing damaged or cut (and nothing else left
    /// over, unless `leftovers`).
    private func expectReopensWith(
        _ directory: TemporaryDirectory, _ model: [RestorationPath: [UInt8]], leftovers: [String] = []
    ) throws {
        let reopened = try openJournal(directory.path)
        defer { try? reopened.close() }
        #expect(reopened.recoveryReport.damage == nil && reopened.recoveryReport.truncatedTailBytes == 0)
        #expect(reopened.recoveryReport.removedLeftovers == leftovers)
        #expect(reopened.recoveredState.entries == model)
    }

    @Test func commitsThatFillASegmentGoOnWhileTheSyncThreadWaitsForTheDiskToRollIt() throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        let journal = try open(directory, fileSystem)
        let model = Locked<[RestorationPath: [UInt8]]>([:])
        let first = activeSegment(journal).sequence
        // Every sync the roll makes (the directory's, the sealed segment's) waits until released.
        fileSystem.hold([.fullSync])
        let committed = Locked<Result<Int, any Error>?>(nil)
        let writer = Thread {
            let result = Result {
                var index = 0
                while activeSegment(journal).size < Int64(Self.limit) {
                    try commitOne(journal, index, model)
                    index += 1
                }
                // Past the limit, as many epochs again as a twentieth of the limit holds.
                for _ in 0..<(Self.limit / 20 / 230) {
                    try commitOne(journal, index, model)
                    index += 1
                }
                return index
            }
            committed.withLock { $0 = result }
        }
        writer.start()
        defer { fileSystem.release() }
        #expect(
            fileSystem.waitForHeldCall(until: Date(timeIntervalSinceNow: 120)),
            "the roll starts and waits for the disk")
        #expect(
            waitUntil { committed.withLock { $0 } != nil },
            "the commits past the limit do not wait for the roll's syncs")
        let epochs = try #require(try committed.withLock { $0 }?.get())
        #expect(activeSegment(journal).sequence == first, "the roll has not switched while the disk holds it")
        #expect(activeSegment(journal).size > Int64(Self.limit))

        fileSystem.release()
        #expect(
            waitUntil { activeSegment(journal).sequence != first }, "the sync thread switches once the disk answers")
        for index in epochs..<(epochs + 20) { try commitOne(journal, index, model) }
        try journal.close()
        try expectReopensWith(directory, model.withLock { $0 })
    }

    @Test func aSegmentGrowsAtMostAQuarterPastItsLimitWhileTheSyncThreadRollsIt() throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        let journal = try open(directory, fileSystem)
        let model = Locked<[RestorationPath: [UInt8]]>([:])
        let epochs = 4 * Self.limit / 230
        fileSystem.hold([.fullSync])
        let progress = Locked(0)
        let finished = Locked<Result<Void, any Error>?>(nil)
        let writer = Thread {
            let result = Result {
                for index in 0..<epochs {
                    try commitOne(journal, index, model)
                    progress.withLock { $0 = index + 1 }
                }
            }
            finished.withLock { $0 = result }
        }
        writer.start()
        defer { fileSystem.release() }
        #expect(waitUntil { activeSegment(journal).size >= Int64(Self.limit + Self.slack) })
        // The commit that finds the segment that large waits for the roll under way: the count of
        // commits settles (or the writer finishes, which fails below).
        var stalledAt = -1
        #expect(
            waitUntil {
                let before = progress.withLock { $0 }
                usleep(100_000)
                guard progress.withLock({ $0 }) == before else { return false }
                stalledAt = before
                return true
            })
        usleep(200_000)
        #expect(progress.withLock { $0 } == stalledAt, "no commit goes on past the slack while the roll waits")
        #expect(finished.withLock { $0 } == nil)
        #expect(activeSegment(journal).size < Int64(Self.limit + Self.slack + 300))

        fileSystem.release()
        #expect(waitUntil { finished.withLock { $0 } != nil })
        try #require(try finished.withLock { $0 }?.get())
        try journal.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where name.hasPrefix("segment-") {
            let size = try fileSize(directory.appending(name))
            #expect(size < Int64(Self.limit + Self.slack + 300), "\(name) holds \(size) bytes")
        }
        try expectReopensWith(directory, model.withLock { $0 })
    }

    @Test func aRollThatFailsOnTheSyncThreadIsThrownToTheNextCommitThatFindsTheSegmentFull() throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        let journal = try open(directory, fileSystem)
        let model = Locked<[RestorationPath: [UInt8]]>([:])
        // The next segment cannot be created: the disk is full.
        fileSystem.arm(FaultPlan(at: 1, of: [.open], fault: .error(ENOSPC), persistent: true))
        var index = 0
        var failure: JournalError?
        while failure == nil && index < 4 * Self.limit / 230 {
            do {
                try commitOne(journal, index, model)
                index += 1
            } catch let error as JournalError {
                failure = error
            }
        }
        let error = try #require(failure, "a commit past the limit reports that no new segment could be made")
        #expect(error.code == .ioFailure)
        #expect((error.cause as? SystemError)?.errno == ENOSPC)
        #expect(activeSegment(journal).size < Int64(Self.limit + Self.slack + 300))

        // Once there is room again, the next commit rolls, and nothing acknowledged was lost.
        fileSystem.arm(nil)
        let first = activeSegment(journal).sequence
        try commitOne(journal, index, model)
        #expect(activeSegment(journal).sequence != first)
        try journal.close()
        try expectReopensWith(directory, model.withLock { $0 })
    }

    @Test func anEpochHeldOpenDoesNotHoldUpTheSyncsOfTheSyncThreadWaitingToRoll() throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        let journal = try open(directory, fileSystem, durability: .interval(seconds: 0.2))
        let model = Locked<[RestorationPath: [UInt8]]>([:])
        var index = 0
        while activeSegment(journal).size < Int64(Self.limit) {
            try commitOne(journal, index, model)
            index += 1
        }
        let full = try #require(journal.lastCommitted)
        // This epoch finds the segment full and asks the sync thread to roll, which waits for it to end.
        let held = try journal.beginEpoch()
        try held.put(RestorationPath(["Board", "Held"]), Self.value(index))
        #expect(
            waitUntil(Date(timeIntervalSinceNow: 60)) { (journal.lastDurable?.epoch ?? 0) >= full.epoch },
            "the epochs committed before it are synced within about an interval meanwhile")
        try held.commit()
        model.withLock { $0[RestorationPath(["Board", "Held"])] = Self.value(index) }
        #expect(waitUntil { activeSegment(journal).size < Int64(Self.limit) }, "the roll follows the epoch")
        try journal.close()
        try expectReopensWith(directory, model.withLock { $0 })
    }

    @Test func aManifestThatFailsAfterTheSyncThreadSwitchedLeavesTheNextRollToThatThreadAgain() throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        let journal = try open(directory, fileSystem)
        let model = Locked<[RestorationPath: [UInt8]]>([:])
        let first = activeSegment(journal).sequence
        // The manifest is replaced by a rename: the first one after the switch fails.
        fileSystem.arm(FaultPlan(at: 1, of: [.rename], fault: .error(EIO)))
        var index = 0
        while activeSegment(journal).sequence == first && index < 4 * Self.limit / 230 {
            try commitOne(journal, index, model)
            index += 1
        }
        #expect(waitUntil { fileSystem.faultsFired == 1 && journal.condition.withLock { journal.state.roll == .none } })
        #expect(activeSegment(journal).sequence != first, "the switch stands")
        #expect(journal.condition.withLock { journal.backgroundRoll } == .idle, "the sync thread rolls the next one")
        for next in index..<(index + 20) { try commitOne(journal, next, model) }
        try journal.close()
        // The rename that failed left its temporary file, which opening removes.
        try expectReopensWith(directory, model.withLock { $0 }, leftovers: ["MANIFEST.tmp"])
    }

    @Test func everyThreadWaitingToBeginAnEpochHearsOfARollThatFailed() throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        let journal = try open(directory, fileSystem, durability: .none)
        // One epoch fills the segment while two other threads wait to begin theirs.
        let filling = try journal.beginEpoch()
        for index in 0..<(Self.limit / 150) {
            try filling.put(RestorationPath(["Board", "Card-\(index)"]), Self.value(index))
        }
        // Whether each waiter's commit succeeded.
        let outcomes = Locked<[Bool]>([])
        for index in 0..<2 {
            Thread {
                let committed = (try? journal.commit([.put(RestorationPath(["Waiting", "\(index)"]), [1])])) != nil
                outcomes.withLock { $0.append(committed) }
            }.start()
        }
        #expect(waitUntil { journal.condition.withLock { journal.epochWaiters.count } == 2 })
        // The next segment cannot be created: the first waiter rolls, fails and throws.
        fileSystem.arm(FaultPlan(at: 1, of: [.open], fault: .error(ENOSPC), persistent: true))
        try filling.commit()
        #expect(
            waitUntil(Date(timeIntervalSinceNow: 60)) { outcomes.withLock { $0.count } == 2 },
            "neither waiter sleeps on with no epoch open")
        #expect(outcomes.withLock { $0 } == [false, false], "each waiter finds the segment full and fails to roll")
        guard outcomes.withLock({ $0.count }) == 2 else { return }
        fileSystem.arm(nil)
        try journal.commit([.put(RestorationPath(["After"]), [2])])
        try journal.close()
    }
}
