import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// A writer faster than compaction: what it writes while a compaction folds counts towards the
/// next one, so the journal after the newest checkpoint stays within the policy's threshold once
/// the compactions it starts have run. A checkpoint write held by the test stands for a slow fold,
/// so that the writer writes many segments beside it, whatever the machine's speed.
@Suite(.timeLimit(.minutes(10)))
struct CompactionBacklogTests {
    /// 4 KiB segments, and a threshold of 16 KiB or the checkpoint's size (about 8 KiB).
    static func options(_ compaction: CompactionPolicy = CompactionPolicy()) -> JournalOptions {
        var options = JournalOptions(durability: .none, segmentSizeLimit: 4 << 10)
        options.compaction = compaction
        options.compaction.growthRatio = 1
        options.compaction.minimumJournalBytes = 16 << 10
        return options
    }

    /// How long a test waits for a compaction to reach the held write: a guard against a hang only.
    static let hangGuard: TimeInterval = 60

    /// Puts 512 bytes that do not compress at one of 16 paths, as epoch `epoch`.
    static func commitEpoch(_ epoch: Int, _ journal: Journal) throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<512).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try journal.commit([.put(RestorationPath("Main", "Item-\(epoch % 16)"), bytes)])
    }

    /// The bytes of the segments after the newest checkpoint, less their headers, and the
    /// threshold the policy computes from that checkpoint's size.
    static func backlog(in directory: TemporaryDirectory) throws -> (bytes: Int64, threshold: Int64) {
        let files = try JournalReader(at: directory.url).fileSet().files
        let checkpoints = files.filter { $0.kind == .checkpoint }
        let newest = try #require(checkpoints.last, "no checkpoint was written")
        let policy = options().compaction
        let threshold = max(policy.minimumJournalBytes, Int64(policy.growthRatio * Double(newest.length)))
        let bytes = files.filter { $0.kind == .segment && $0.baseEpoch >= newest.baseEpoch }
            .reduce(Int64(0)) { $0 + $1.length - Int64(SegmentHeader.size) }
        return (bytes, threshold)
    }

    /// Commits until a background compaction holds at the checkpoint write, then writes 40 segments
    /// beside it, 10 times the threshold, and lets it finish.
    static func burstBesideAHeldCompaction(_ journal: Journal, _ gate: CheckpointWriteGate) throws -> Int {
        var epoch = 0
        // 16 KiB of puts make the first compaction due.
        while epoch < 40 {
            epoch += 1
            try commitEpoch(epoch, journal)
        }
        guard gate.waitUntilHolding(timeout: hangGuard) else {
            Issue.record("no compaction reached its checkpoint write")
            gate.release()
            return epoch
        }
        for _ in 0..<320 {
            epoch += 1
            try commitEpoch(epoch, journal)
        }
        gate.release()
        return epoch
    }

    @Test func theCommitAfterACompactionCountsWhatWasWrittenWhileItRanAndStartsTheNext() throws {
        let directory = TemporaryDirectory()
        let gate = CheckpointWriteGate()
        let journal = try Journal.open(path: directory.path, options: Self.options(), fileSystem: gate)
        var epoch = try Self.burstBesideAHeldCompaction(journal, gate)
        journal.waitForCompactions()
        epoch += 1
        try Self.commitEpoch(epoch, journal)
        journal.waitForCompactions()
        try journal.close()
        let (bytes, threshold) = try Self.backlog(in: directory)
        #expect(bytes < threshold + (4 << 10), "\(bytes) bytes after the newest checkpoint, threshold \(threshold)")
    }

    @Test func aStoreLeftOpenAfterABurstFoldsWhatWasWrittenBesideTheLastCompactionWithoutAnotherCommit() throws {
        let directory = TemporaryDirectory()
        let gate = CheckpointWriteGate()
        let journal = try Journal.open(path: directory.path, options: Self.options(), fileSystem: gate)
        _ = try Self.burstBesideAHeldCompaction(journal, gate)
        journal.waitForCompactions()
        try journal.close()
        let (bytes, threshold) = try Self.backlog(in: directory)
        #expect(bytes < threshold + (4 << 10), "\(bytes) bytes after the newest checkpoint, threshold \(threshold)")
    }

    @Test func closingRightAfterABurstWaitsForTheCompactionUnderWayAndLeavesEveryEpoch() throws {
        let directory = TemporaryDirectory()
        let gate = CheckpointWriteGate()
        let journal = try Journal.open(path: directory.path, options: Self.options(), fileSystem: gate)
        let epochs = try Self.burstBesideAHeldCompaction(journal, gate)
        // The compaction that ends meanwhile may find the next one due: closing cancels it, or waits for
        // it when it has begun.
        try journal.close()
        let checkpoints = try JournalReader(at: directory.url).fileSet().files.filter { $0.kind == .checkpoint }
        #expect((1...2).contains(checkpoints.count), "\(checkpoints.map(\.name))")
        let reopened = try Journal.open(path: directory.path, options: Self.options(), fileSystem: PosixFileSystem())
        #expect(reopened.recoveredState.epoch?.epoch == UInt64(epochs))
        try reopened.close()
    }

    @Test func aStoreClosedWithABacklogFoldsItAfterTheFirstCommitOnceOpenedAgain() throws {
        let directory = TemporaryDirectory()
        var journal = try Journal.open(
            path: directory.path, options: Self.options(.manual), fileSystem: PosixFileSystem())
        for epoch in 1...40 { try Self.commitEpoch(epoch, journal) }
        try journal.compact()
        for epoch in 41...360 { try Self.commitEpoch(epoch, journal) }
        try journal.close()
        #expect(try Self.backlog(in: directory).bytes > 8 * (16 << 10), "the backlog the test closes with")

        journal = try Journal.open(path: directory.path, options: Self.options(), fileSystem: PosixFileSystem())
        journal.waitForCompactions()
        #expect(try Self.backlog(in: directory).bytes > 8 * (16 << 10), "opening alone starts no compaction")
        try Self.commitEpoch(361, journal)
        journal.waitForCompactions()
        try journal.close()
        let (bytes, threshold) = try Self.backlog(in: directory)
        #expect(bytes < threshold + (4 << 10), "\(bytes) bytes after the newest checkpoint, threshold \(threshold)")
    }
}

/// The real file system, except that the first checkpoint write waits, once, until the test
/// releases it: a compaction whose fold takes as long as the test wants.
final class CheckpointWriteGate: ForwardingFileSystem, @unchecked Sendable {
    // @unchecked Sendable: `holding` and `released` are only touched with `condition` locked.
    let base: any FileSystem = PosixFileSystem()
    private let condition = NSCondition()
    private var holding = false
    private var released = false

    func open(_ path: String, _ mode: FileOpenMode) throws -> Int32 {
        if mode == .createNew, path.hasSuffix(".lz4"), path.contains("/checkpoint-") {
            condition.lock()
            if !released {
                holding = true
                condition.broadcast()
                while !released { condition.wait() }
            }
            condition.unlock()
        }
        return try base.open(path, mode)
    }

    /// Waits until a checkpoint write is held, for at most `timeout` seconds; returns whether one is.
    func waitUntilHolding(timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !holding && condition.wait(until: deadline) {}
        return holding
    }

    /// Lets the held write, and every later one, go on.
    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }
}
