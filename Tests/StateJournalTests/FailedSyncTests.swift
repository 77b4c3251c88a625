import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A failed sync behaves as Linux's writeback does (the unsynced pages stay readable but never
/// reach the disk). At every sync call of a workload, the sync fails once; the app reopens the store
/// as the error advises and commits more; then the power is cut. Every acknowledged epoch must be
/// in the image, and the reopened store must never show an epoch whose sync failed.
@Suite struct FailedSyncTests {
    struct Outcome {
        var syncCalls = 0
        var faultFired = false
        var acknowledged: [UInt64: [UInt8]] = [:]
    }

    static let path = RestorationPath(["Main", "Draft"])

    static func value(_ epoch: Int) -> [UInt8] { (0..<200).map { UInt8(truncatingIfNeeded: $0 &+ epoch &* 31) } }

    /// Commits under `durability`, failing the `failAt`-th sync (0: none); reopens after the failure;
    /// commits more; returns what was acknowledged as durable and the image's state.
    static func run(durability: Durability, failAt: Int, in directory: TemporaryDirectory) throws -> (
        Outcome, JournalState, UInt64?
    ) {
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem(
            plan: failAt > 0 ? FaultPlan(at: failAt, of: IOCallKind.syncs, fault: .eio) : nil,
            dropsPagesOnFailedSync: true)
        let options = testOptions(durability: durability, segmentSizeLimit: 2 << 10)
        var outcome = Outcome()
        // A sync that fails while the store is created fails the open, with nothing acknowledged.
        var journal: Journal
        do {
            journal = try Journal.open(path: store, options: options, fileSystem: fileSystem)
        } catch let error as JournalError {
            #expect(error.code == .ioFailure)
            journal = try Journal.open(path: store, options: options, fileSystem: fileSystem)
        }
        var lastAcknowledged: (epoch: UInt64, value: [UInt8])?
        var reopened = false
        var round = 0
        while round < 24 {
            round += 1
            let bytes = value(round)
            do {
                let info = try journal.commit([.put(path, bytes)])
                if durability == .everyCommit {
                    outcome.acknowledged[info.epoch] = bytes
                    lastAcknowledged = (info.epoch, bytes)
                } else if round % 4 == 0 {
                    try journal.sync()
                    outcome.acknowledged[info.epoch] = bytes
                    lastAcknowledged = (info.epoch, bytes)
                }
                if round % 9 == 0 { _ = try? journal.compact() }
            } catch let error as JournalError where !reopened {
                #expect(error.code == .storePoisoned || error.code == .ioFailure, "\(error)")
                try? journal.close()
                reopened = true
                journal = try Journal.open(path: store, options: options, fileSystem: fileSystem)
                // The reopened store shows exactly the last durable epoch: nothing whose sync failed.
                #expect(
                    journal.lastCommitted?.epoch == lastAcknowledged?.epoch || durability != .everyCommit,
                    """
                    failing sync #\(failAt): reopened at \(String(describing: journal.lastCommitted?.epoch)), \
                    acknowledged \(String(describing: lastAcknowledged?.epoch))
                    """
                )
                if let lastAcknowledged, let committed = journal.lastCommitted {
                    #expect(committed.epoch >= lastAcknowledged.epoch, "failing sync #\(failAt)")
                }
            }
        }
        try journal.close()
        outcome.syncCalls = fileSystem.callCount(of: IOCallKind.syncs)
        outcome.faultFired = fileSystem.faultsFired > 0
        let image = directory.appending("image")
        try fileSystem.writePowerLossImage(of: store, to: image)
        let recovered = try openJournal(image)
        defer { try? recovered.close() }
        return (outcome, recovered.recoveredState, lastAcknowledged?.epoch)
    }

    @Test(arguments: [Durability.everyCommit, .none])
    func noAcknowledgedEpochIsLostAfterASyncFailsAtAnyCall(durability: Durability) throws {
        let calls = try Self.run(durability: durability, failAt: 0, in: TemporaryDirectory()).0.syncCalls
        #expect(calls > 20)
        var checked = 0
        for failAt in 1...calls {
            let directory = TemporaryDirectory()
            let (outcome, image, last) = try Self.run(durability: durability, failAt: failAt, in: directory)
            guard outcome.faultFired else { continue }
            checked += 1
            let latest = try #require(outcome.acknowledged.keys.max(), "failing sync #\(failAt)")
            #expect(last == latest)
            #expect(
                image.epoch.map(\.epoch) ?? 0 >= latest,
                "failing sync #\(failAt): image at \(String(describing: image.epoch?.epoch)), acknowledged \(latest)")
            if image.epoch?.epoch == latest {
                #expect(image[Self.path] == outcome.acknowledged[latest], "failing sync #\(failAt)")
            }
        }
        #expect(checked > 20)
        if ProcessInfo.processInfo.environment["STATEJOURNAL_TEST_VERBOSE"] != nil {
            print("failed-sync sweep (\(durability)): \(checked) fault points, 0 acknowledged epochs lost")
        }
    }
}
