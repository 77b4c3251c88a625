import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Aborted epochs leave no trace; concurrent commits all land, each whole.
@Suite struct EpochLifecycleTests {
    @Test func anAbortedEpochNeverAppearsAndTheNextEpochReusesItsNumber() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store)
        try journal.commit([.put(RestorationPath("Main"), [1]), .put(RestorationPath("Other"), [9])])
        let segment = store + "/" + (try Corruption.segmentNames(in: store)).last!
        let size = writtenEnd(of: journal)

        var random = SplitMix64(seed: 1)
        let epoch = try journal.beginEpoch()
        #expect(epoch.epoch == 2)
        for index in 0..<30 { try epoch.put(RestorationPath("Gone", "\(index)"), random.bytes(2000)) }
        try epoch.put(RestorationPath("Main"), [2])
        try epoch.removeAll()
        #expect(writtenEnd(of: journal) > size)
        epoch.abort()
        #expect(writtenEnd(of: journal) == size)
        #expect(try fileSize(segment) == size, "the aborted epoch's bytes are cut")
        journalError(.closed) { try epoch.put(RestorationPath("Main"), [3]) }
        journalError(.closed) { try epoch.commit() }

        // Dropping an epoch without committing aborts it too.
        do {
            let dropped = try journal.beginEpoch()
            #expect(dropped.epoch == 2)
            try dropped.put(RestorationPath("Main"), [4])
        }

        let next = try journal.beginEpoch()
        #expect(next.epoch == 2)
        try next.put(RestorationPath("Main"), [5])
        #expect(try next.commit().epoch == 2)
        let expected: [RestorationPath: [UInt8]] = [RestorationPath("Main"): [5], RestorationPath("Other"): [9]]
        #expect(try journal.state().entries == expected)
        try journal.close()

        let reopened = try openJournal(store, testOptions(recovery: .strict))
        #expect(reopened.recoveryReport.isClean)
        #expect(try reopened.history().map(\.epoch) == [1, 2])
        #expect(reopened.recoveredState.entries == expected)
        // A path first defined in the aborted epoch works in a later one (the path table was rolled back).
        try reopened.commit([.put(RestorationPath("Gone", "3"), [7])])
        #expect(try reopened.state().entries[RestorationPath("Gone", "3")] == [7])
        try reopened.close()
        #expect(try openReader(store, recovery: .strict).state().entries[RestorationPath("Gone", "3")] == [7])
    }

    @Test func anAbortedEpochsPathsAndCacheDoNotLeakIntoLaterCompression() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store)
        let path = RestorationPath("Main", "Doc")
        let v1 = Array(String(repeating: "version one of the document ", count: 10).utf8)
        try journal.commit([.put(path, v1)])
        let aborted = try journal.beginEpoch()
        try aborted.put(path, Array(String(repeating: "an aborted version ", count: 12).utf8))
        aborted.abort()
        // This version is compressed against the previous one: it must be v1, not the aborted one.
        var v2 = v1
        v2[3] = UInt8(ascii: "X")
        try journal.commit([.put(path, v2)])
        try journal.close()
        #expect(try openReader(store, recovery: .strict).state().entries == [path: v2])
        #expect(try openReader(store).state(through: 1).entries == [path: v1])
    }

    @Test func closingWithAnOpenEpochIsRefusedAndAClosedJournalRefusesWork() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store)
        let epoch = try journal.beginEpoch()
        try epoch.put(RestorationPath("Main"), [1])
        journalError(.epochInProgress) { try journal.close() }
        _ = try epoch.commit()
        try journal.close()
        journalError(.closed) { try journal.beginEpoch() }
        journalError(.closed) { try journal.commit([]) }
        // Closing released the lock.
        let reopened = try openJournal(store)
        #expect(reopened.recoveredState.entries == [RestorationPath("Main"): [1]])
        try reopened.close()
    }

    @Test(.timeLimit(.minutes(10)))
    func aFailedSyncDuringGroupCommitFailsTheWaitingCommitsAndHangsNone() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem(plan: FaultPlan(at: 6, of: [.dataSync], fault: .eio))
        let journal = try Journal.open(
            path: store, options: testOptions(durability: .everyCommit), fileSystem: fileSystem)
        let results = ResultsBox()
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            Thread {
                defer { group.leave() }
                for round in 0..<6 {
                    do {
                        let info = try journal.commit([.put(RestorationPath("Thread-\(thread)"), [UInt8(round)])])
                        results.add(info.epoch, thread: thread, round: round)
                    } catch let error as JournalError where error.code == .storePoisoned {
                        results.fail("poisoned")
                        return
                    } catch {
                        results.fail("unexpected: \(error)")
                        return
                    }
                }
            }.start()
        }
        group.wait()
        #expect(fileSystem.faultsFired == 1)
        #expect(results.failures.allSatisfy { $0 == "poisoned" }, "\(results.failures)")
        #expect(results.failures.count == 8, "every thread stops at the poisoned journal")
        try? journal.close()

        // Everything acknowledged is there; a commit whose sync failed may or may not be.
        let reopened = try openJournal(store)
        let history = try reopened.history().map(\.epoch)
        let acknowledged = results.epochs
        #expect(
            acknowledged.allSatisfy { history.contains($0.epoch) },
            "acknowledged \(acknowledged.map(\.epoch)), on disk \(history)")
        #expect(history == Array(1...UInt64(history.count)))
        let state = reopened.recoveredState.entries
        for (thread, round) in Dictionary(acknowledged.map { ($0.thread, $0.round) }, uniquingKeysWith: max) {
            let onDisk = state[RestorationPath("Thread-\(thread)")]?.first
            #expect(
                onDisk.map { Int($0) >= round } == true,
                "thread \(thread): acknowledged round \(round), on disk \(String(describing: onDisk))")
        }
        try reopened.close()
    }

    @Test func eightThreadsCommittingEveryCommitAllSucceedAndAllReplay() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem()
        let journal = try Journal.open(
            path: store, options: testOptions(durability: .everyCommit, segmentSizeLimit: 8192), fileSystem: fileSystem)
        let threads = 8
        let perThread = 12
        let results = ResultsBox()
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            let worker = Thread {
                defer { group.leave() }
                for round in 0..<perThread {
                    do {
                        let path = RestorationPath("Thread-\(thread)")
                        let value = Array("thread \(thread) round \(round)".utf8)
                        let info = try journal.commit(
                            [.put(path, value), .put(path.appending("Round"), [UInt8(round)])],
                            metadata: ["thread": "\(thread)"])
                        results.add(info.epoch, thread: thread, round: round)
                    } catch {
                        results.fail("\(error)")
                    }
                }
            }
            worker.start()
        }
        group.wait()
        #expect(results.failures.isEmpty, "\(results.failures)")
        let acknowledged = results.epochs
        #expect(acknowledged.count == threads * perThread)
        #expect(acknowledged.map(\.epoch).sorted() == Array(1...UInt64(threads * perThread)))
        #expect(fileSystem.callCount(of: .dataSync) <= threads * perThread)
        try journal.close()

        // Each epoch replays whole, in the order the numbers say, with every thread's latest round.
        let reader = try openReader(store, recovery: .strict)
        #expect(try reader.history().map(\.epoch) == Array(1...UInt64(threads * perThread)))
        var latestRound: [Int: Int] = [:]
        for entry in acknowledged.sorted(by: { $0.epoch < $1.epoch }) {
            latestRound[entry.thread] = entry.round
            if entry.epoch % 16 == 0 || entry.epoch == UInt64(threads * perThread) {
                let state = try reader.state(through: entry.epoch)
                for (thread, round) in latestRound {
                    #expect(
                        state.entries[RestorationPath("Thread-\(thread)")]
                            == Array("thread \(thread) round \(round)".utf8))
                    #expect(state.entries[RestorationPath("Thread-\(thread)", "Round")] == [UInt8(round)])
                }
                #expect(state.entries.count == latestRound.count * 2)
            }
        }
    }
}

/// Results gathered from worker threads.
private final class ResultsBox: @unchecked Sendable {
    // @unchecked Sendable: every property is read and written with `lock` held.
    private let lock = NSLock()
    private var acknowledged: [(epoch: UInt64, thread: Int, round: Int)] = []
    private var errors: [String] = []

    func add(_ epoch: UInt64, thread: Int, round: Int) { lock.withLock { acknowledged.append((epoch, thread, round)) } }
    func fail(_ message: String) { lock.withLock { errors.append(message) } }
    var epochs: [(epoch: UInt64, thread: Int, round: Int)] { lock.withLock { acknowledged } }
    var failures: [String] { lock.withLock { errors } }
}
