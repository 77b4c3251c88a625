import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// The writer's own reads (`history()`, `state(through:)`) on one thread while another commits,
/// rolling segments, and background compactions fold and drop history: every read is one
/// generation of the store. Run under ThreadSanitizer by `.ci/sanitizers`.
@Suite(.timeLimit(.minutes(10)))
struct HistoryBesideBackgroundCompactionTests {
    static var epochs: Int {
        Int(ProcessInfo.processInfo.environment["STATEJOURNAL_HISTORY_EPOCHS"] ?? "") ?? 1500
    }

    /// The bytes epoch `epoch` writes to `Item-(epoch % 40)`.
    static func bytes(of epoch: UInt64) -> [UInt8] {
        (0..<48).map { UInt8(truncatingIfNeeded: epoch &* 31 &+ $0) }
    }

    /// The state as of `epoch`: each item holds the bytes of the last epoch at or before it that wrote it.
    static func expectedState(at epoch: UInt64) -> [RestorationPath: [UInt8]] {
        var state: [RestorationPath: [UInt8]] = [:]
        for item in 0..<40 {
            let last = Int(epoch) - (Int(epoch) - item + 40) % 40
            if last >= 1 { state[RestorationPath("Main", "Item-\(item)")] = bytes(of: UInt64(last)) }
        }
        return state
    }

    @Test(arguments: [RetentionPolicy(checkpoints: 1), .allHistory])
    func theWritersHistoryHasNoGapsWhileAnotherThreadCommitsAndBackgroundCompactionsRun(
        retention: RetentionPolicy
    ) throws {
        let directory = TemporaryDirectory()
        var options = JournalOptions(durability: .none, segmentSizeLimit: 2 << 10)
        options.compaction = CompactionPolicy(isAutomatic: true, growthRatio: 0, minimumJournalBytes: 3 << 10)
        options.retention = retention
        let journal = try Journal.open(path: directory.path, options: options, fileSystem: PosixFileSystem())
        let finished = Locked(false)
        let problems = Locked<[String]>([])
        let writer = Thread {
            defer { finished.withLock { $0 = true } }
            do {
                for epoch in 1...UInt64(Self.epochs) {
                    try journal.commit([.put(RestorationPath("Main", "Item-\(epoch % 40)"), Self.bytes(of: epoch))])
                }
            } catch {
                problems.withLock { $0.append("writer: \(error)") }
            }
        }
        writer.start()
        var reads = 0
        while !finished.withLock({ $0 }) || reads < 5 {
            reads += 1
            let history = try journal.history().map(\.epoch)
            guard let first = history.first, let last = history.last else { continue }
            if history != Array(first...last) {
                Issue.record("read \(reads): \(history.count) epochs from \(first) to \(last), with gaps")
                break
            }
            if retention.keepsAllHistory && first != 1 {
                Issue.record("read \(reads): the history kept in full starts at \(first)")
                break
            }
            let epoch = history[reads % history.count]
            do {
                let state = try journal.state(through: epoch)
                if state.entries != Self.expectedState(at: epoch) {
                    Issue.record("read \(reads): the state as of \(epoch) is not what was committed")
                    break
                }
            } catch let error as JournalError where error.code == .noSuchEpoch {
                // A compaction between the two reads dropped the epoch.
                #expect(!retention.keepsAllHistory, "read \(reads): \(error)")
            }
        }
        while !finished.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.001) }
        #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0 })")
        #expect(try journal.state().entries == Self.expectedState(at: UInt64(Self.epochs)))
        try journal.close()
    }
}
