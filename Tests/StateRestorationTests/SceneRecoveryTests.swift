import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// A failed sync in a store with several windows: the catch-up pass of one window clears nothing of
/// the others, and each window's next pass writes its objects again and removes what it lost.
@Suite struct SceneRecoveryTests {
    let store = TestStore()
    let clock = ManualClock()
    let fileSystem = FaultInjectingFileSystem(dropsPagesOnFailedSync: true)
    let delegate = TestDelegate()
    static let left = SceneSession(persistentIdentifier: "left")!
    static let right = SceneSession(persistentIdentifier: "right")!

    @Test func theCatchUpPassOfOneWindowKeepsTheOtherWindowsAndTheirNextPassesRewriteThem() throws {
        let journal = try Journal.open(
            path: store.url.path, options: JournalOptions(durability: .everyCommit), fileSystem: fileSystem)
        var configuration = RestorationConfiguration(
            bundleVersion: "1", interfaceIdiom: "desktop", systemVersion: "6.8")
        configuration.recovery = StoreRecoveryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(8), clock: clock)
        let manager = RestorationManager(journal: journal, configuration: configuration)
        manager.delegate = delegate
        let main = Node("Main", value: 1)
        let left = Node("Main", value: 10)
        let gone = Node("Gone", value: 21)
        let right = Node("Main", value: 20, children: [gone])
        try manager.preserveState(roots: [main])
        try manager.preserveState(roots: [left], scene: Self.left)
        try manager.preserveState(roots: [right], scene: Self.right)

        fileSystem.arm(FaultPlan(at: 1, of: IOCallKind.syncs, fault: .eio, persistent: true))
        left.value = 11
        #expect(throws: JournalError.self) { try manager.preserveState(roots: [left], scene: Self.left) }
        // During the outage the right window loses a child and changes.
        right.children = []
        right.value = 22
        fileSystem.arm(nil)
        clock.advance(by: .seconds(10))

        let catchUp = try manager.preserveState(roots: [left], scene: Self.left)
        #expect(catchUp.mode == .full)
        #expect(manager.health.isHealthy)
        // Nothing of the other scenes was cleared by the catch-up epoch.
        var entries = try decodedEntries(journal)
        #expect(entries[RestorationPath(["Main"])] != nil)
        #expect(entries[RestorationPath(["@scene:right", "Main", "Gone"])] != nil)
        #expect(entries[RestorationPath(["@scene:left", "Main"])]?.values["value"] == .int(11))

        let rightPass = try manager.preserveState(roots: [right], scene: Self.right, mode: .incremental)
        #expect(rightPass.mode == .full)
        #expect(rightPass.removedPaths == [RestorationPath(["@scene:right", "Main", "Gone"])])
        #expect(rightPass.writtenPaths.contains(RestorationPath(["@scene:right", "Main"])))
        let mainPass = try manager.preserveState(roots: [main])
        // Distrusted, so written again although its bytes did not change.
        #expect(mainPass.writtenPaths.contains(RestorationPath(["Main"])))
        entries = try decodedEntries(journal)
        #expect(entries[RestorationPath(["@scene:right", "Main", "Gone"])] == nil)
        #expect(entries[RestorationPath(["@scene:right", "Main"])]?.values["value"] == .int(22))
        #expect(manager.openSessions == [Self.left, Self.right])
        try journal.close()
    }

    @Test func aWindowWithNothingSavedStaysOpenThroughTheCatchUpAndTheNextPasses() throws {
        let journal = try Journal.open(
            path: store.url.path, options: JournalOptions(durability: .everyCommit), fileSystem: fileSystem)
        var configuration = RestorationConfiguration(
            bundleVersion: "1", interfaceIdiom: "desktop", systemVersion: "6.8")
        configuration.recovery = StoreRecoveryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(8), clock: clock)
        let manager = RestorationManager(journal: journal, configuration: configuration)
        manager.delegate = delegate
        let left = Node("Main", value: 10)
        try manager.preserveState(roots: [left], scene: Self.left)
        try manager.preserveState(roots: [], scene: Self.right)

        fileSystem.arm(FaultPlan(at: 1, of: IOCallKind.syncs, fault: .eio, persistent: true))
        left.value = 11
        #expect(throws: JournalError.self) { try manager.preserveState(roots: [left], scene: Self.left) }
        fileSystem.arm(nil)
        clock.advance(by: .seconds(10))
        try manager.preserveState(roots: [left], scene: Self.left)
        #expect(manager.health.isHealthy)
        // The empty window's own full pass distrusts its paths, but its session is not one of them.
        let rightPass = try manager.preserveState(roots: [], scene: Self.right)
        #expect(rightPass.removedPaths.isEmpty)
        try journal.close()

        let reopened = try store.open()
        defer { try? reopened.close() }
        #expect(store.manager(reopened, delegate: delegate).openSessions == [Self.left, Self.right])
    }
}
