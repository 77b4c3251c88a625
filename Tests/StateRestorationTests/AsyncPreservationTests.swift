import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// Passes split in two: the encode step on the caller's actor, the commit on the journal's
/// background committer. Nothing here asserts a duration: held calls of the fault-injecting file
/// system order the steps.
@MainActor
@Suite(.timeLimit(.minutes(10)))
struct AsyncPreservationTests {
    /// A store opened through a fault-injecting file system whose syncs can be held or failed.
    final class Store {
        let directory = TemporaryDirectory()
        let fileSystem: FaultInjectingFileSystem
        var path: String { directory.appending("store") }

        init(dropsPagesOnFailedSync: Bool = false) {
            fileSystem = FaultInjectingFileSystem(dropsPagesOnFailedSync: dropsPagesOnFailedSync)
        }

        func open(_ durability: Durability = .everyCommit) throws -> Journal {
            try Journal.open(
                path: path,
                options: JournalOptions(durability: durability, compaction: .manual),
                fileSystem: fileSystem)
        }

        /// The values of the nodes as a relaunched app restores them from `path`.
        static func restoredValues(at path: String, ids: [String]) throws -> [Int] {
            let journal = try Journal.open(
                path: path, options: JournalOptions(durability: .none), fileSystem: PosixFileSystem())
            defer { try? journal.close() }
            let fresh = ids.map { Node($0) }
            let delegate = TestDelegate()
            let manager = TestStore().manager(journal, delegate: delegate)
            try manager.restoreState(roots: fresh)
            return fresh.map(\.value)
        }
    }

    static let ids = ["A", "B", "C"]
    /// The delegate of every manager a test makes (a manager holds its delegate weakly).
    let delegate = TestDelegate()

    private func makeManager(_ journal: Journal) -> RestorationManager {
        TestStore().manager(journal, delegate: delegate)
    }

    private func change(_ node: Node, to value: Int, in manager: RestorationManager) {
        node.value = value
        manager.invalidateRestorableState(for: node)
    }

    @Test func anAsyncPassReturnsBeforeTheEpochIsSyncedAndResumesWhenDurable() async throws {
        let store = Store()
        let journal = try store.open(.everyCommit)
        let manager = makeManager(journal)
        let nodes = Self.ids.map { Node($0, value: 1) }
        try await manager.preserveStateInBackground(roots: nodes)
        let before = try #require(journal.lastDurable)

        store.fileSystem.hold([.dataSync])
        change(nodes[1], to: 2, in: manager)
        let pending = try manager.submitPreservation(roots: nodes)
        #expect(pending.submitsEpoch)
        // The encode step has returned; the committer now waits for the held sync.
        #expect(store.fileSystem.waitForHeldCall(until: Date(timeIntervalSinceNow: 600)))
        #expect(journal.lastDurable == before)
        let awaiting = Task { try await pending.report() }
        store.fileSystem.release()
        let report = try await awaiting.value
        let epoch = try #require(report.epoch)
        #expect(epoch.epoch == before.epoch + 1)
        #expect(report.writtenPaths == [RestorationPath("B")])
        #expect(journal.lastDurable == epoch)
        try journal.close()
        #expect(try Store.restoredValues(at: store.path, ids: Self.ids) == [1, 2, 1])
    }

    @Test func concurrentAsyncPassesCommitInSubmissionOrderAndEachWritesOnlyWhatChangedSinceTheLast() async throws {
        let store = Store()
        let journal = try store.open(.everyCommit)
        let manager = makeManager(journal)
        let nodes = Self.ids.map { Node($0, value: 0) }
        try await manager.preserveStateInBackground(roots: nodes)
        let first = try #require(journal.lastCommitted).epoch

        // Every pass is encoded while the ones before it still wait for the disk.
        store.fileSystem.hold([.dataSync])
        var pending: [PendingPreservation] = []
        for (index, node) in nodes.enumerated() {
            change(node, to: 10 + index, in: manager)
            pending.append(try manager.submitPreservation(roots: nodes))
        }
        change(nodes[0], to: 20, in: manager)
        pending.append(try manager.submitPreservation(roots: nodes))
        // Nothing changed since the last submission: no epoch, and it waits for the ones before it.
        let unchanged = try manager.submitPreservation(roots: nodes)
        #expect(!unchanged.submitsEpoch)
        store.fileSystem.release()

        var reports: [PreservationReport] = []
        for submission in pending { reports.append(try await submission.report()) }
        #expect(reports.map { $0.epoch?.epoch } == (1...4).map { first + UInt64($0) })
        #expect(reports.map(\.writtenPaths) == [["A"], ["B"], ["C"], ["A"]].map { $0.map { RestorationPath($0) } })
        #expect(try await unchanged.report().outcome == .unchanged)
        #expect(journal.lastCommitted == reports.last?.epoch)
        try journal.close()
        #expect(try Store.restoredValues(at: store.path, ids: Self.ids) == [20, 11, 12])
    }

    /// A failed write (the epoch is cut, the journal stays usable) or a failed sync (the journal
    /// refuses commits until reopened) in the background commit.
    enum Failure: CaseIterable { case write, sync }

    @Test(arguments: Failure.allCases)
    func aFailedBackgroundCommitFailsThePassesBehindItAndTheNextPassCatchesUpLosingNothing(
        failure: Failure
    ) async throws {
        let store = Store(dropsPagesOnFailedSync: true)
        let journal = try store.open(.everyCommit)
        let manager = makeManager(journal)
        let nodes = Self.ids.map { Node($0, value: 1) }
        try await manager.preserveStateInBackground(roots: nodes)
        let acknowledged = try #require(journal.lastDurable)

        // The first pass's write (or sync) is held until the second pass is encoded behind it, then fails.
        let kinds: Set<IOCallKind> = failure == .write ? [.write] : IOCallKind.syncs
        store.fileSystem.hold(kinds)
        change(nodes[0], to: 2, in: manager)
        let failing = try manager.submitPreservation(roots: nodes)
        #expect(store.fileSystem.waitForHeldCall(until: Date(timeIntervalSinceNow: 600)))
        change(nodes[1], to: 3, in: manager)
        let behind = try manager.submitPreservation(roots: nodes)
        // The second pass relied on the first: it writes B only.
        store.fileSystem.arm(FaultPlan(at: 1, of: kinds, fault: .eio))
        store.fileSystem.release()

        await #expect(throws: JournalError.self) { try await failing.report() }
        do {
            _ = try await behind.report()
            Issue.record("a pass that relied on a failed one committed")
        } catch let error as JournalError {
            #expect(error.code == .precedingEpochFailed || error.code == .storePoisoned)
        }
        store.fileSystem.arm(nil)
        // No phantom: the journal holds the acknowledged epoch, none of the failed passes. (After a
        // failed sync, `lastCommitted` still names the epoch whose sync failed; the manager's reopen below
        // shows it is gone.)
        #expect(journal.lastDurable == acknowledged)
        if failure == .write { #expect(journal.lastCommitted == acknowledged) }

        // After a failed sync the manager reopens the journal by itself, and its catch-up pass clears
        // the store and writes every object again; after a failed write it writes what changed.
        let next = try await manager.preserveStateInBackground(roots: nodes)
        #expect(next.mode == .full)
        #expect(manager.health.isHealthy)
        if failure == .sync {
            #expect(next.writtenPaths == [RestorationManager.applicationPath] + Self.ids.map { RestorationPath($0) })
        } else {
            #expect(next.writtenPaths == [RestorationPath("A"), RestorationPath("B")])
        }
        let durable = try #require(journal.lastDurable)
        #expect(durable == next.epoch)

        // Nothing acknowledged is lost in a power cut either.
        let image = store.directory.appending("image")
        try store.fileSystem.writePowerLossImage(of: store.path, to: image)
        #expect(try Store.restoredValues(at: image, ids: Self.ids) == [2, 3, 1])
        try journal.close()
        #expect(try Store.restoredValues(at: store.path, ids: Self.ids) == [2, 3, 1])
    }

    @Test func aCrashAfterAnAsyncPassIsAcknowledgedUnderEveryCommitKeepsItsEpoch() async throws {
        let store = Store()
        let journal = try store.open(.everyCommit)
        let manager = makeManager(journal)
        let nodes = Self.ids.map { Node($0, value: 1) }
        try await manager.preserveStateInBackground(roots: nodes)
        change(nodes[2], to: 9, in: manager)
        let report = try await manager.preserveStateInBackground(roots: nodes)
        let epoch = try #require(report.epoch)

        // The process dies now, the journal never closed, and the power goes with it: only what
        // was synced is in the image.
        let image = store.directory.appending("image")
        try store.fileSystem.writePowerLossImage(of: store.path, to: image)
        let reopened = try Journal.open(
            path: image, options: JournalOptions(durability: .none), fileSystem: PosixFileSystem())
        #expect(reopened.lastCommitted?.epoch == epoch.epoch)
        try reopened.close()
        #expect(try Store.restoredValues(at: image, ids: Self.ids) == [1, 1, 9])
        withExtendedLifetime(journal) {}
    }

    @Test func aRestorationInProgressBlocksAsyncPassesLikeSynchronousOnes() async throws {
        let store = Store()
        var journal = try store.open(.none)
        let saver = makeManager(journal)
        try saver.preserveState(roots: Self.ids.map { Node($0, value: 4) })
        try journal.close()

        /// Holds the restoration open, as an app whose state finishes loading later does.
        final class Extender: TestDelegate {
            weak var manager: RestorationManager?
            override func didDecodeRestorableState(_ coder: RestorationCoder) { manager?.extendStateRestoration() }
        }
        journal = try store.open(.none)
        let delegate = Extender()
        let manager = TestStore().manager(journal, delegate: delegate)
        delegate.manager = manager
        let nodes = Self.ids.map { Node($0) }
        try manager.restoreState(roots: nodes)
        #expect(manager.isRestoring)
        let history = try journal.history().count
        change(nodes[0], to: 5, in: manager)

        let asyncReport = try await manager.preserveStateInBackground(roots: nodes)
        let submitted = try manager.submitPreservation(roots: nodes)
        let syncReport = try manager.preserveState(roots: nodes)
        #expect(asyncReport.outcome == .restorationInProgress)
        #expect(!submitted.submitsEpoch)
        #expect(try await submitted.report().outcome == .restorationInProgress)
        #expect(syncReport.outcome == .restorationInProgress)
        #expect(try journal.history().count == history)

        try manager.completeStateRestoration()
        let saved = try await manager.preserveStateInBackground(roots: nodes)
        #expect(saved.epoch != nil)
        #expect(saved.writtenPaths.contains(RestorationPath("A")))
        try journal.close()
        #expect(try Store.restoredValues(at: store.path, ids: Self.ids) == [5, 4, 4])
    }

    @Test func aSynchronousPassWaitsForTheSubmittedPassesAndCommitsAfterThem() async throws {
        let store = Store()
        let journal = try store.open(.everyCommit)
        let manager = makeManager(journal)
        let nodes = Self.ids.map { Node($0, value: 1) }
        try manager.preserveState(roots: nodes)

        change(nodes[0], to: 2, in: manager)
        let submitted = try manager.submitPreservation(roots: nodes)
        change(nodes[1], to: 3, in: manager)
        let synchronous = try manager.preserveState(roots: nodes)
        let asynchronous = try await submitted.report()
        #expect(synchronous.writtenPaths == [RestorationPath("B")])
        #expect(try #require(synchronous.epoch).epoch == (try #require(asynchronous.epoch).epoch) + 1)
        try journal.close()
        #expect(try Store.restoredValues(at: store.path, ids: Self.ids) == [2, 3, 1])
    }
}
