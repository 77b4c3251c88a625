import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What counts as a crash loop, on real processes: a restoration that a crash signal ended inside
/// the app's own restoration code counts; one that a kill from outside ended does not, however
/// often; and when the fallback runs, the state it avoided stays in the store and comes back.
@Suite struct CrashLoopTests {
    static let items = 40

    /// A controller that dies in its decode when told to, the way an app's code would.
    final class Dying: Node {
        enum Death: String, Codable, Sendable { case none, kill, trap, abort }
        var death = Death.none
        var dieAt = -1

        override func decodeRestorableState(with coder: RestorationCoder) throws {
            try super.decodeRestorableState(with: coder)
            guard let id, id == "Item-\(dieAt)" else { return }
            switch death {
            case .none: break
            case .kill: kill(getpid(), SIGKILL)
            case .trap: fatalError("decode of \(id) fails on the saved state")
            case .abort: abort()
            }
        }
    }

    /// The tree of the app: `Main` with its items.
    static func tree(value: Int, death: Dying.Death = .none, dieAt: Int = -1) -> Node {
        let items = (0..<items).map { index -> Node in
            let item = Dying("Item-\(index)", value: value)
            item.death = death
            item.dieAt = dieAt
            return item
        }
        return Node("Main", value: value, children: items)
    }

    /// A store whose epochs `first` and `second` saved the tree with values 1 and 2.
    static func savedStore() throws -> (store: TestStore, first: UInt64, second: UInt64) {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let first = try #require(try manager.preserveState(roots: [tree(value: 1)]).epoch).epoch
        let second = try #require(try manager.preserveState(roots: [tree(value: 2)]).epoch).epoch
        try journal.close()
        return (store, first, second)
    }

    /// One launch in a child process that restores the store at `path` and dies in the decode of
    /// item `dieAt` as `death` says.
    static func launchThatDies(_ path: String, _ death: Dying.Death, at dieAt: Int) async {
        let condition: ExitTest.Condition = death == .kill ? .signal(SIGKILL) : .failure
        await #expect(processExitsWith: condition) { [path, death, dieAt] in
            let journal = try Journal.open(at: URL(fileURLWithPath: path), options: JournalOptions(durability: .none))
            let manager = RestorationManager(
                journal: journal,
                configuration: RestorationConfiguration(
                    bundleVersion: "1", interfaceIdiom: "desktop", systemVersion: "6.8"))
            let delegate = TestDelegate()
            manager.delegate = delegate
            try manager.restoreState(roots: [CrashLoopTests.tree(value: 0, death: death, dieAt: dieAt)])
            withExtendedLifetime(delegate) {}
        }
    }

    /// One launch in a child process killed from outside `microseconds` after it starts: while it
    /// opens the store and replays the journal, while it restores, or once it is idle.
    static func launchKilled(_ path: String, after microseconds: UInt32) async {
        await #expect(processExitsWith: .signal(SIGKILL)) { [path, microseconds] in
            let killer = Thread {
                usleep(microseconds)
                kill(getpid(), SIGKILL)
            }
            killer.start()
            let journal = try Journal.open(at: URL(fileURLWithPath: path), options: JournalOptions(durability: .none))
            let manager = RestorationManager(
                journal: journal,
                configuration: RestorationConfiguration(
                    bundleVersion: "1", interfaceIdiom: "desktop", systemVersion: "6.8"))
            let delegate = TestDelegate()
            manager.delegate = delegate
            try manager.restoreState(roots: [CrashLoopTests.tree(value: 0)])
            while true { sleep(1) }
        }
    }

    static func values(_ root: Node) -> [Int] { [root.value] + root.children.map(\.value) }

    /// A manager over `journal` logging to `logs`, with `fallback`, and its delegate (which the
    /// manager holds weakly).
    static func manager(
        _ journal: Journal, logs: CapturedLogs, fallback: CrashLoopFallback = .restoreEarlierState
    ) -> (RestorationManager, TestDelegate) {
        var configuration = RestorationConfiguration(
            bundleVersion: "1", interfaceIdiom: "desktop", systemVersion: "6.8", logger: logs.logger)
        configuration.crashLoopFallback = fallback
        let manager = RestorationManager(journal: journal, configuration: configuration)
        let delegate = TestDelegate()
        manager.delegate = delegate
        return (manager, delegate)
    }

    @Test func killsFromOutsideDuringRestorationNeverCountAsACrashLoopAndTheNextSaveUndoesNothing() async throws {
        let (store, _, second) = try Self.savedStore()
        let path = store.url.path
        let saved = try store.open().state().entries
        var random = SplitMix64(seed: 40)
        for _ in 0..<4 {
            await Self.launchThatDies(path, .kill, at: Int(random.next() % UInt64(Self.items)))
            // And at a random instant of the launch: opening, replaying, restoring or idle.
            await Self.launchKilled(path, after: UInt32(random.next() % 40_000))
        }
        let logs = CapturedLogs()
        let journal = try store.open()
        let (manager, delegate) = Self.manager(journal, logs: logs)
        let root = Self.tree(value: 0)
        let report = try manager.restoreState(roots: [root])
        #expect(
            report.reason == .launch || report.reason == .recoveryAfterCrash, "\(String(describing: report.reason))")
        #expect(report.epoch?.epoch ?? 0 >= second)
        #expect(Self.values(root) == Array(repeating: 2, count: Self.items + 1))
        #expect(!report.diagnostics.contains { if case .unfinishedRestoration = $0 { true } else { false } })
        #expect(logs.entries(.error, containing: "crash").isEmpty)
        // The next save writes nothing: every acknowledged value is the one the app holds.
        try manager.preserveState(roots: [root])
        let after = try journal.state().entries.filter { $0.key.components.first == "Main" }
        #expect(after == saved.filter { $0.key.components.first == "Main" })
        #expect(journal.historyHold == nil)
        withExtendedLifetime(delegate) {}
        try journal.close()
    }

    @Test(arguments: [Dying.Death.trap, .abort])
    func twoCrashesInTheAppsDecodeFallBackHoldTheAvoidedStateAndBringItBackOnRequest(death: Dying.Death) async throws {
        let (store, first, second) = try Self.savedStore()
        let path = store.url.path
        // A kill between the crashes changes nothing: the crashes are still two in a row.
        await Self.launchThatDies(path, death, at: 3)
        await Self.launchThatDies(path, .kill, at: 7)
        await Self.launchThatDies(path, death, at: 3)

        let logs = CapturedLogs()
        var options = JournalOptions(durability: .none, compaction: .manual)
        options.retention = RetentionPolicy(checkpoints: 1)
        let journal = try Journal.open(at: store.url, options: options)
        let (manager, delegate) = Self.manager(journal, logs: logs)
        let root = Self.tree(value: 0)
        let report = try manager.restoreState(roots: [root])
        #expect(report.reason == .crashLoopFallback(avoidedEpoch: second))
        #expect(Self.values(root) == Array(repeating: 1, count: Self.items + 1))
        #expect(logs.entries(.error, containing: "crashed the app twice in a row").count == 1)
        #expect(journal.historyHold == second)
        let kinds = try journal.history().compactMap { $0.metadata[EpochMetadataKey.kind] }
        #expect(kinds.filter { $0 == "restorationFailed" }.count == 2)
        #expect(
            try journal.history().filter { $0.metadata[EpochMetadataKey.kind] == "restorationFailed" }
                .allSatisfy { $0.metadata[EpochMetadataKey.crashSignal] == (death == .trap ? "SIGILL" : "SIGABRT") })

        // The app goes on from the earlier state, and compaction runs with a policy that keeps
        // one checkpoint: the avoided state stays.
        root.value = 5
        manager.invalidateRestorableState(for: root)
        try manager.preserveState(roots: [root])
        _ = try journal.compact()
        _ = try journal.compact()
        let avoided = try journal.state(through: second).entries
        #expect(avoided == (try JournalReader(at: store.url).state(through: second).entries))
        #expect(avoided[RestorationPath("Main", "Item-3")] != nil)
        _ = first

        // Brought back on request: time travel to the avoided epoch, then a save makes it the latest.
        let again = Self.tree(value: 0)
        let back = try manager.restoreState(roots: [again], asOf: second)
        #expect(back.reason == .requestedEpoch(second))
        #expect(Self.values(again) == Array(repeating: 2, count: Self.items + 1))
        try journal.releaseHistoryHold()
        #expect(journal.historyHold == nil)
        withExtendedLifetime(delegate) {}
        try journal.close()
    }

    @Test func withTheFallbackOffTwoCrashesRestoreTheLatestStateAgainAndSayItAtError() async throws {
        let (store, _, second) = try Self.savedStore()
        let path = store.url.path
        await Self.launchThatDies(path, .trap, at: 5)
        await Self.launchThatDies(path, .trap, at: 5)
        let logs = CapturedLogs()
        let journal = try store.open()
        let (manager, delegate) = Self.manager(journal, logs: logs, fallback: .never)
        let root = Self.tree(value: 0)
        let report = try manager.restoreState(roots: [root])
        #expect(report.reason != .crashLoopFallback(avoidedEpoch: second))
        #expect(Self.values(root) == Array(repeating: 2, count: Self.items + 1))
        #expect(report.diagnostics.contains(.unfinishedRestoration(epoch: second, attempts: 2)))
        #expect(logs.entries(.error, containing: "crashed the app 2 times in a row").count == 1)
        #expect(journal.historyHold == nil)
        withExtendedLifetime(delegate) {}
        try journal.close()
    }
}
