import Foundation
import StateJournal
import StateRestoration
import Testing

/// Several windows in one store: each scene's tree saved, restored and discarded on its own.
@Suite struct SceneRestorationTests {
    static let windowA = SceneSession(persistentIdentifier: "A")!
    static let windowB = SceneSession(persistentIdentifier: "B/2")!

    /// The values of the nodes saved under `prefix`, by path below it.
    /// A delegate that holds the next restoration open, as an app does that loads state later.
    final class Extender: TestDelegate {
        weak var manager: RestorationManager?
        var extendsNext = false
        override func didDecodeRestorableState(_ coder: RestorationCoder) {
            guard extendsNext else { return }
            extendsNext = false
            // Without a scene: the call holds the restoration this pass runs.
            manager?.extendStateRestoration()
        }
    }

    static func savedValues(_ journal: Journal, under prefix: [String]) throws -> [String: Int] {
        var values: [String: Int] = [:]
        for (path, entry) in try decodedEntries(journal) where path.components.starts(with: prefix) {
            guard path.components.count > prefix.count, case .int(let value)? = entry.values["value"] else { continue }
            values[path.components.dropFirst(prefix.count).joined(separator: "/")] = Int(value)
        }
        return values
    }

    @Test func twoScenesAreSavedAndRestoredIndependently() throws {
        let store = TestStore()
        // The manager holds its delegate weakly.
        let delegate = TestDelegate()
        do {
            let journal = try store.open()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: [Node("Main", value: 1)])
            let a = try manager.preserveState(
                roots: [Node("Main", value: 10, children: [Node("Inbox", value: 11)])], scene: Self.windowA)
            #expect(a.writtenPaths.contains(RestorationPath(["@scene:A", "Main", "Inbox"])))
            #expect(a.scene == Self.windowA)
            #expect(a.epoch?.metadata[EpochMetadataKey.scene] == "A")
            try manager.preserveState(roots: [Node("Main", value: 20)], scene: Self.windowB)
            #expect(manager.openSessions == [Self.windowA, Self.windowB])
        }
        let journal = try store.open()
        let manager = store.manager(journal, delegate: delegate)
        #expect(manager.openSessions == [Self.windowA, Self.windowB])
        let mainB = Node("Main")
        let reportB = try manager.restoreState(roots: [mainB], scene: Self.windowB)
        #expect(mainB.value == 20)
        #expect(reportB.scene == Self.windowB)
        #expect(reportB.restored.map(\.path) == [RestorationPath(["@scene:B/2", "Main"])])
        let inbox = Node("Inbox")
        let mainA = Node("Main", children: [inbox])
        let reportA = try manager.restoreState(roots: [mainA], scene: Self.windowA)
        #expect(mainA.value == 10 && inbox.value == 11)
        #expect(reportA.restored.count == 2)
        let main = Node("Main")
        let report = try manager.restoreState(roots: [main])
        #expect(main.value == 1)
        #expect(report.scene == nil)
        #expect(report.restored.map(\.path) == [RestorationPath(["Main"])])
        // Each restoration has its own markers, naming its scene.
        let markers = try journal.history().filter { $0.metadata[EpochMetadataKey.kind] == "restorationCompleted" }
        #expect(markers.map { $0.metadata[EpochMetadataKey.scene] } == ["B/2", "A", nil])
    }

    @Test func aScenePassRemovesOnlyThatScenesUnreachablePaths() throws {
        let store = TestStore()
        // The manager holds its delegate weakly.
        let delegate = TestDelegate()
        let journal = try store.open()
        let manager = store.manager(journal, delegate: delegate)
        let inboxA = Node("Inbox", value: 2)
        let mainA = Node("Main", value: 1, children: [inboxA])
        try manager.preserveState(roots: [Node("Main", value: 5, children: [Node("Inbox", value: 6)])])
        try manager.preserveState(roots: [mainA], scene: Self.windowA)
        try manager.preserveState(roots: [Node("Main", value: 7, children: [Node("Inbox")])], scene: Self.windowB)
        // The default scene and window B lose their children; window A is saved incrementally.
        let emptied = try manager.preserveState(roots: [Node("Main", value: 5)])
        #expect(emptied.removedPaths == [RestorationPath(["Main", "Inbox"])])
        let emptiedB = try manager.preserveState(roots: [], scene: Self.windowB)
        #expect(Set(emptiedB.removedPaths.map(\.components.first)) == ["@scene:B/2"])
        inboxA.value = 3
        manager.invalidateRestorableState(for: inboxA)
        let incremental = try manager.preserveState(roots: [mainA], scene: Self.windowA, mode: .incremental)
        #expect(incremental.mode == .incremental)
        #expect(incremental.writtenPaths == [RestorationPath(["@scene:A", "Main", "Inbox"])])
        #expect(try Self.savedValues(journal, under: ["@scene:A"]) == ["Main": 1, "Main/Inbox": 3])
        #expect(try decodedEntries(journal)[RestorationPath(["Main"])] != nil)
        #expect(try Self.savedValues(journal, under: ["@scene:B/2"]).isEmpty)
        // Window B saved nothing and stays open, as UIKit keeps a window's session, until it is discarded.
        #expect(manager.openSessions == [Self.windowA, Self.windowB])
        // A full pass of the default scene with no roots leaves every window alone.
        let cleared = try manager.preserveState(roots: [])
        #expect(cleared.removedPaths == [RestorationPath(["Main"])])
        #expect(try Self.savedValues(journal, under: ["@scene:A"]) == ["Main": 1, "Main/Inbox": 3])
    }

    @Test func anInvalidationIsKeptForTheSceneThatSavedTheObject() throws {
        let store = TestStore()
        // The manager holds its delegate weakly.
        let delegate = TestDelegate()
        let journal = try store.open()
        let manager = store.manager(journal, delegate: delegate)
        let mainA = Node("Main", value: 1)
        let mainB = Node("Main", value: 2)
        try manager.preserveState(roots: [mainA], scene: Self.windowA)
        try manager.preserveState(roots: [mainB], scene: Self.windowB)
        mainB.value = 3
        manager.invalidateRestorableState(for: mainB)
        // A pass of window A runs first and must not use up window B's invalidation.
        try manager.preserveState(roots: [mainA], scene: Self.windowA, mode: .incremental)
        let b = try manager.preserveState(roots: [mainB], scene: Self.windowB, mode: .incremental)
        #expect(b.writtenPaths == [RestorationPath(["@scene:B/2", "Main"])])
        #expect(try Self.savedValues(journal, under: ["@scene:B/2"]) == ["Main": 3])
    }

    @Test func closingOneSceneTombstonesOnlyItsPathsAndCompactionRemovesThem() throws {
        let store = TestStore()
        // The manager holds its delegate weakly.
        let delegate = TestDelegate()
        let secret = "closed-window-draft-7f3a"
        func open() throws -> Journal {
            try Journal.open(
                at: store.url, options: JournalOptions(durability: .none, retention: RetentionPolicy(checkpoints: 1)))
        }
        do {
            let journal = try open()
            let manager = store.manager(journal, delegate: delegate)
            let draft = Node("Draft", value: 4)
            draft.text = secret
            try manager.preserveState(roots: [Node("Main", value: 1)])
            try manager.preserveState(roots: [Node("Main", value: 3, children: [draft])], scene: Self.windowA)
            try manager.preserveState(
                roots: [Node("Main", value: 5, children: [Node("List", value: 6)])], scene: Self.windowB)
            _ = try journal.compact()
            let before = try journal.state().paths
            let discard = try #require(try manager.discardSceneSessions([Self.windowA]))
            #expect(discard.metadata[EpochMetadataKey.kind] == "discard")
            #expect(discard.metadata[EpochMetadataKey.discardedScenes] == #"["A"]"#)
            #expect(discard.metadata[EpochMetadataKey.scene] == nil)
            // One epoch, whose removals are exactly window A's paths.
            let after = try journal.state().paths
            #expect(
                Set(before).subtracting(after) == [
                    RestorationPath(["@scene:A", "Main"]), RestorationPath(["@scene:A", "Main", "Draft"]),
                ])
            #expect(manager.openSessions == [Self.windowB])
            // The history still has window A until compaction folds it.
            #expect(try journal.state(through: discard.epoch - 1).contains(RestorationPath(["@scene:A", "Main"])))
            #expect(try Self.storeBytes(store).contains(secret))
            _ = try journal.compact()
            try manager.preserveState(roots: [Node("Main", value: 2)])
            _ = try journal.compact()
            #expect(!(try Self.storeBytes(store).contains(secret)))
        }
        let journal = try open()
        let manager = store.manager(journal, delegate: delegate)
        #expect(manager.openSessions == [Self.windowB])
        let list = Node("List")
        let mainB = Node("Main", children: [list])
        try manager.restoreState(roots: [mainB], scene: Self.windowB)
        #expect(mainB.value == 5 && list.value == 6)
        let mainA = Node("Main")
        let reportA = try manager.restoreState(roots: [mainA], scene: Self.windowA)
        #expect(reportA.outcome == .nothingToRestore)
        #expect(mainA.value == 0)
        let main = Node("Main")
        try manager.restoreState(roots: [main])
        #expect(main.value == 2)
    }

    /// Every file of the store, as Latin-1 text, to look for a value in it.
    static func storeBytes(_ store: TestStore) throws -> String {
        var text = ""
        let files = try FileManager.default.subpathsOfDirectory(atPath: store.url.path)
        for file in files {
            var isDirectory: ObjCBool = false
            let path = store.url.appendingPathComponent(file).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            text += String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: Unicode.ASCII.self)
        }
        return text
    }

    @Test func aCrashLoopInOneSceneFallsBackOnlyThatScene() throws {
        let store = TestStore()
        // The manager holds its delegate weakly.
        let delegate = TestDelegate()
        do {
            let journal = try store.open()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: [Node("Main", value: 1)], scene: Self.windowA)
            try manager.preserveState(roots: [Node("Main", value: 10)], scene: Self.windowB)
            try manager.preserveState(roots: [Node("Main", value: 2)], scene: Self.windowA)
            try manager.preserveState(roots: [Node("Main", value: 20)], scene: Self.windowB)
            try manager.preserveState(roots: [Node("Main", value: 100)])
        }
        var valuesA: [Int] = []
        var reasonsA: [RestorationReason?] = []
        var valuesB: [Int] = []
        var reasonsB: [RestorationReason?] = []
        var values: [Int] = []
        for _ in 0..<4 {
            let journal = try store.open()
            let extender = Extender()
            let manager = store.manager(journal, delegate: extender)
            extender.manager = manager
            let mainB = Node("Main")
            let reportB = try manager.restoreState(roots: [mainB], scene: Self.windowB)
            valuesB.append(mainB.value)
            reasonsB.append(reportB.reason)
            // Window A's restoration never completes: the app dies while restoring it.
            let mainA = Node("Main")
            extender.extendsNext = true
            let reportA = try manager.restoreState(roots: [mainA], scene: Self.windowA)
            valuesA.append(mainA.value)
            reasonsA.append(reportA.reason)
            #expect(manager.isRestoring(scene: Self.windowA))
            #expect(!manager.isRestoring(scene: Self.windowB))
            let main = Node("Main")
            try manager.restoreState(roots: [main])
            values.append(main.value)
            try journal.close()
        }
        #expect(valuesA == [2, 2, 1, 1])
        #expect(reasonsA.dropFirst(2).allSatisfy { if case .crashLoopFallback? = $0 { true } else { false } })
        #expect(valuesB == [20, 20, 20, 20])
        #expect(reasonsB.allSatisfy { $0 == .launch })
        #expect(values == [100, 100, 100, 100])
    }

    @Test func restoringOneSceneWhileAnotherIsHeldOpenLeavesTheOtherFreeToSaveAndRestore() throws {
        let store = TestStore()
        // The manager holds its delegate weakly.
        let delegate = TestDelegate()
        let journal = try store.open()
        let extender = Extender()
        let manager = store.manager(journal, delegate: extender)
        extender.manager = manager
        try manager.preserveState(roots: [Node("Main", value: 1)], scene: Self.windowA)
        try manager.preserveState(roots: [Node("Main", value: 2)], scene: Self.windowB)
        let mainA = Node("Main")
        extender.extendsNext = true
        try manager.restoreState(roots: [mainA], scene: Self.windowA)
        #expect(manager.isRestoring && manager.isRestoring(scene: Self.windowA))
        // An explicit hold on the scene, released below with the restoration's own.
        manager.extendStateRestoration(scene: Self.windowA)
        #expect(throws: RestorationError.self) { try manager.restoreState(roots: [mainA], scene: Self.windowA) }
        mainA.value = 5
        #expect(try manager.preserveState(roots: [mainA], scene: Self.windowA).outcome == .restorationInProgress)
        let mainB = Node("Main")
        try manager.restoreState(roots: [mainB], scene: Self.windowB)
        #expect(mainB.value == 2)
        mainB.value = 3
        #expect(try manager.preserveState(roots: [mainB], scene: Self.windowB).epoch != nil)
        // The default scene is not held either.
        #expect(try manager.preserveState(roots: [Node("Main", value: 9)]).epoch != nil)
        try manager.completeStateRestoration(scene: Self.windowA)
        #expect(manager.isRestoring(scene: Self.windowA))
        try manager.completeStateRestoration(scene: Self.windowA)
        #expect(!manager.isRestoring)
        #expect(try manager.preserveState(roots: [mainA], scene: Self.windowA).epoch != nil)
        #expect(try Self.savedValues(journal, under: ["@scene:A"]) == ["Main": 5])
        #expect(try Self.savedValues(journal, under: ["@scene:B/2"]) == ["Main": 3])
    }

    @Test func aScenesUnfinishedRestorationIsKeptInAnEntryAtItsOwnPathUntilItCompletesOrTheSceneIsDiscarded() throws {
        let store = TestStore()
        let journal = try store.open()
        let extender = Extender()
        let manager = store.manager(journal, delegate: extender)
        extender.manager = manager
        let base = RestorationPath(["@scene:A"])
        try manager.preserveState(roots: [Node("Main", value: 1)], scene: Self.windowA)
        try manager.preserveState(roots: [Node("Main", value: 2)], scene: Self.windowB)
        extender.extendsNext = true
        try manager.restoreState(roots: [Node("Main")], scene: Self.windowA)
        let entry = try RestorableEntry(decoding: try #require(try journal.state()[base]))
        #expect(entry.typeName == "SceneRestorationAttempts")
        #expect(entry.values["restoringEpoch"] == .int(1) && entry.values["attempts"] == .int(1))
        // Passes of the scenes neither save nor remove it, and it is no window of its own.
        try manager.preserveState(roots: [Node("Main", value: 3)], scene: Self.windowB)
        #expect(try journal.state().contains(base))
        #expect(manager.openSessions == [Self.windowA, Self.windowB])
        try manager.completeStateRestoration(scene: Self.windowA)
        #expect(try !journal.state().contains(base))
        #expect(try manager.preserveState(roots: [Node("Main", value: 4)], scene: Self.windowA).removedPaths.isEmpty)

        extender.extendsNext = true
        try manager.restoreState(roots: [Node("Main")], scene: Self.windowB)
        #expect(try journal.state().contains(RestorationPath(["@scene:B/2"])))
        try manager.discardSceneSessions([Self.windowB])
        #expect(try !journal.state().paths.contains { $0.components[0] == "@scene:B/2" })
        try journal.close()
        // A relaunch reads it back: the relaunched manager restores window A without it.
        let reopened = try store.open()
        defer { try? reopened.close() }
        let relaunched = store.manager(reopened, delegate: extender)
        let main = Node("Main")
        let report = try relaunched.restoreState(roots: [main], scene: Self.windowA)
        #expect(main.value == 4 && report.restored.count == 1 && report.skipped.isEmpty)
    }

    @Test func restorationClassesSeeIdentifierPathsFromTheScenesRootController() throws {
        let store = TestStore()
        // The manager holds its delegate weakly.
        let delegate = TestDelegate()
        do {
            let journal = try store.open()
            let manager = store.manager(journal, delegate: delegate)
            let child = Node("Inbox", value: 8)
            let presented = Node("Sheet", value: 9)
            let main = Node("Main", value: 7, children: [child])
            main.presented = presented
            try manager.preserveState(roots: [main], scene: Self.windowA)
        }
        let journal = try store.open()
        let lookupDelegate = TestDelegate()
        let manager = store.manager(journal, delegate: lookupDelegate)
        let sheet = Node("Sheet")
        lookupDelegate.controllers[["Main", "Sheet"]] = sheet
        let main = Node("Main", children: [Node("Inbox")])
        let report = try manager.restoreState(roots: [main], scene: Self.windowA)
        #expect(lookupDelegate.lookups.contains(["Main", "Sheet"]))
        #expect(!lookupDelegate.lookups.contains { $0.first?.hasPrefix("@") == true })
        #expect(sheet.value == 9)
        #expect(report.restored.count == 3)
    }

    @Test func aSceneRestoresAsOfAnEarlierEpochWhileTheOthersKeepTheirLatest() throws {
        let store = TestStore()
        // The manager holds its delegate weakly.
        let delegate = TestDelegate()
        let first: UInt64
        do {
            let journal = try store.open()
            let manager = store.manager(journal, delegate: delegate)
            first = try #require(try manager.preserveState(roots: [Node("Main", value: 1)], scene: Self.windowA).epoch)
                .epoch
            try manager.preserveState(roots: [Node("Main", value: 5)], scene: Self.windowB)
            try manager.preserveState(roots: [Node("Main", value: 2)], scene: Self.windowA)
        }
        let journal = try store.open()
        let manager = store.manager(journal, delegate: delegate)
        let mainA = Node("Main")
        let report = try manager.restoreState(roots: [mainA], scene: Self.windowA, asOf: first)
        #expect(report.reason == .requestedEpoch(first))
        #expect(mainA.value == 1)
        // Window B did not exist as of that epoch; restored without one, it has its latest state.
        let mainB = Node("Main")
        #expect(try manager.restoreState(roots: [mainB], scene: Self.windowB, asOf: first).outcome == .nothingToRestore)
        try manager.restoreState(roots: [mainB], scene: Self.windowB)
        #expect(mainB.value == 5)
    }

    @Test func discardingEverythingRemovesEveryScene() throws {
        let store = TestStore()
        // The manager holds its delegate weakly.
        let delegate = TestDelegate()
        let journal = try store.open()
        let manager = store.manager(journal, delegate: delegate)
        try manager.preserveState(roots: [Node("Main", value: 1)])
        try manager.preserveState(roots: [Node("Main", value: 2)], scene: Self.windowA)
        try manager.discardRestorableState()
        #expect(manager.openSessions.isEmpty)
        #expect(try journal.state().isEmpty)
        let main = Node("Main")
        #expect(try manager.restoreState(roots: [main], scene: Self.windowA).outcome == .nothingToRestore)
        // The next pass of the window saves its whole tree again.
        let again = try manager.preserveState(roots: [Node("Main", value: 2)], scene: Self.windowA)
        #expect(again.writtenPaths.contains(RestorationPath(["@scene:A", "Main"])))
    }

    @Test func aSceneWhoseEpochsCompactionFoldedStillRestoresItsLatestState() throws {
        let store = TestStore()
        // The manager holds its delegate weakly.
        let delegate = TestDelegate()
        func open() throws -> Journal {
            try Journal.open(
                at: store.url, options: JournalOptions(durability: .none, retention: RetentionPolicy(checkpoints: 1)))
        }
        do {
            let journal = try open()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: [Node("Main", value: 3)], scene: Self.windowA)
            _ = try journal.compact()
            for value in 1...3 { try manager.preserveState(roots: [Node("Main", value: value)]) }
            _ = try journal.compact()
            try manager.preserveState(roots: [Node("Main", value: 4)])
        }
        let journal = try open()
        let manager = store.manager(journal, delegate: delegate)
        #expect(try !journal.history().contains { $0.metadata[EpochMetadataKey.scene] == "A" })
        let main = Node("Main")
        let report = try manager.restoreState(roots: [main], scene: Self.windowA)
        #expect(report.outcome == .restored)
        #expect(main.value == 3)
    }

    @Test func aStoreWithoutScenesRestoresAsBeforeAndListsNoSessions() throws {
        let store = TestStore()
        // The manager holds its delegate weakly.
        let delegate = TestDelegate()
        do {
            let journal = try store.open()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: [Node("Main", value: 3, children: [Node("A", value: 4)])])
        }
        let journal = try store.open()
        let manager = store.manager(journal, delegate: delegate)
        #expect(manager.openSessions.isEmpty)
        let child = Node("A")
        let main = Node("Main", children: [child])
        let report = try manager.restoreState(roots: [main])
        #expect(main.value == 3 && child.value == 4)
        #expect(report.scene == nil)
        #expect(try journal.history().allSatisfy { $0.metadata[EpochMetadataKey.scene] == nil })
    }
}
