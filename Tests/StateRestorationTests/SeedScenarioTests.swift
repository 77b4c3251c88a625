import Foundation
import StateJournal
import StateRestoration
import StateRestorationExample
import Testing

/// The scenarios of the UIKit documents in `seeds/`, ported to this API.
@Suite struct SeedScenarioTests {
    func mailStore(bundleVersion: String = "1", idiom: String = "desktop", actions: [MailAction]) throws -> (
        TestStore, MailSnapshot
    ) {
        let store = TestStore()
        let journal = try store.open()
        let app = MailApp(journal: journal, bundleVersion: bundleVersion, interfaceIdiom: idiom)
        for action in actions { app.perform(action) }
        try app.save()
        let snapshot = app.snapshot
        try journal.close()
        return (store, snapshot)
    }

    // Seed 003: shouldRestoreApplicationState refuses an old bundle version or another idiom.
    @Test func seed003RestorationIsRefusedForAnOldBundleVersion() throws {
        let (store, _) = try mailStore(bundleVersion: "1", actions: [.openMailbox("Archive")])
        let journal = try store.open()
        let app = MailApp(journal: journal, bundleVersion: "2")
        app.minimumRestorableBundleVersion = 2
        let report = try app.launch()
        #expect(report.outcome == .declined)
        #expect(app.snapshot.stack == ["Mailboxes"])
        #expect(try journal.state().entries.count > 1)
    }

    @Test func seed003RestorationIsRefusedForAnotherInterfaceIdiom() throws {
        let (store, _) = try mailStore(idiom: "terminal", actions: [.openMailbox("Archive")])
        let journal = try store.open()
        let app = MailApp(journal: journal, interfaceIdiom: "desktop")
        #expect(try app.launch().outcome == .declined)
    }

    @Test func seed003RestorationProceedsForACurrentVersionAndIdiom() throws {
        let (store, saved) = try mailStore(bundleVersion: "3", actions: [.openMailbox("Archive")])
        let journal = try store.open()
        let app = MailApp(journal: journal, bundleVersion: "3")
        app.minimumRestorableBundleVersion = 2
        #expect(try app.launch().outcome == .restored)
        #expect(app.snapshot == saved)
    }

    // Seed 004: the navigation stack saved and restored, without creating classes by name.
    @Test func seed004TheNavigationStackIsSavedAndRestored() throws {
        let actions: [MailAction] = [
            .openMailbox("Inbox"), .selectMessage(42), .scroll(to: 310.5),
            .compose(to: "grace@example.org", subject: "Lunch"),
            .type("See you at noon"), .openSettings, .setFontSize(14), .toggleUnreadOnly,
        ]
        let (store, saved) = try mailStore(actions: actions)
        let journal = try store.open()
        let app = MailApp(journal: journal)
        let report = try app.launch()
        #expect(report.skipped.isEmpty)
        #expect(report.diagnostics.isEmpty)
        #expect(app.snapshot == saved)
        #expect(app.snapshot.stack == ["Mailboxes", "Messages", "Compose"])
        #expect(app.snapshot.draft?.body == "See you at noon")
        #expect(app.snapshot.settings?.fontSize == 14)
        #expect(app.delegateLookups == 2)
    }

    // Seed 001: a restoration class returning nil prunes the controller and its children.
    @Test func seed001NilFromRestorationClassPrunesTheSubtree() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let sheet = Node("Sheet", children: [Node("Page", children: [Node("Field")])])
            sheet.restorationType = DecliningFactory.self
            try manager.preserveState(roots: [Node("Main", children: [Node("Kept")], log: nil).presenting(sheet)])
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let report = try manager.restoreState(roots: [Node("Main", children: [Node("Kept")])])
        #expect(report.restored.map(\.path.description) == ["Main", "Main/Kept"])
        #expect(report.skipped.map(\.path.description) == ["Main/Sheet", "Main/Sheet/Page", "Main/Sheet/Page/Field"])
        #expect(!delegate.lookups.contains { $0.starts(with: ["Main", "Sheet"]) })
    }

    // Seed 001: an object of an unrelated class is kept, but its state is not decoded.
    @Test func seed001AClassMismatchSkipsDecodeWithADiagnostic() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let detail = SubNode("Detail", value: 5)
            detail.restorationType = OtherNodeFactory.self
            try manager.preserveState(roots: [Node("Main", children: [detail])])
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let report = try manager.restoreState(roots: [Node("Main")])
        #expect(report.restored.map(\.decoded) == [true, false])
        // The second diagnostic says that nothing attaches the created Detail to Main.
        #expect(report.diagnostics.count == 2)
        #expect(report.diagnostics.first?.description.contains("not a subclass") == true)
        #expect(report.diagnostics.last == .restoredControllerOutsideHierarchy(RestorationPath("Main", "Detail")))
    }

    // Seed 002: a custom container encodes its children itself, as references.
    @Test func seed002ACustomContainerEncodingItsChildrenPreservesThem() throws {
        let store = TestStore()
        let first = Node("First", value: 1)
        first.restorationType = NodeFactory.self
        let second = Node("Second", value: 2)
        second.restorationType = NodeFactory.self
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let container = Bag("Tabs") { coder in
                coder.encode([first, second], forKey: "tabs")
                coder.encode(1, forKey: "selected")
            }
            try manager.preserveState(roots: [container])
            let entries = try decodedEntries(journal)
            #expect(
                entries[RestorationPath("Tabs")]?.values["tabs"]
                    == .array([
                        .reference(RestorationPath("Tabs", "First")), .reference(RestorationPath("Tabs", "Second")),
                    ]))
            #expect(entries[RestorationPath("Tabs", "Second")]?.values["value"] == .int(2))
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        var tabs: [Node] = []
        let container = Bag("Tabs") { _ in }
        container.decodeBody = { coder in tabs = try coder.decodeObjects(forKey: "tabs").compactMap { $0 as? Node } }
        try manager.restoreState(roots: [container])
        #expect(tabs.map(\.value) == [1, 2])
        #expect(tabs.map(\.id) == ["First", "Second"])
    }

    // Seed 000: restorationParent scopes identifiers, so two objects can share one.
    @Test func seed000RestorationParentScopesTheSameIdentifierUnderTwoParents() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let left = Node("Left")
            let right = Node("Right")
            manager.registerObject(
                forStateRestoration: Counter(count: 1, parent: left), restorationIdentifier: "Counter")
            manager.registerObject(
                forStateRestoration: Counter(count: 2, parent: right), restorationIdentifier: "Counter")
            let report = try manager.preserveState(roots: [Node("Main", children: [left, right])])
            #expect(report.problems.isEmpty)
            #expect(report.writtenPaths.contains(RestorationPath("Main", "Left", "Counter")))
            #expect(report.writtenPaths.contains(RestorationPath("Main", "Right", "Counter")))
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let left = Node("Left")
        let right = Node("Right")
        let leftCounter = Counter(parent: left)
        let rightCounter = Counter(parent: right)
        manager.registerObject(forStateRestoration: leftCounter, restorationIdentifier: "Counter")
        manager.registerObject(forStateRestoration: rightCounter, restorationIdentifier: "Counter")
        try manager.restoreState(roots: [Node("Main", children: [left, right])])
        #expect(leftCounter.count == 1 && rightCounter.count == 2)
    }

    // Seed 000: applicationFinishedRestoringState runs after all objects decoded.
    @Test func seed000FinishRunsOnlyAfterAllObjectsDecoded() throws {
        final class Watcher: StateRestoring {
            var sawUnreadOnly: Bool?
            weak var session: MailSession?
            weak var parent: MailNavigationController?
            var restorationParent: (any StateRestoring)? { parent }
            func encodeRestorableState(with coder: RestorationCoder) throws {}
            func decodeRestorableState(with coder: RestorationCoder) throws {}
            func applicationFinishedRestoringState() { sawUnreadOnly = session?.unreadOnly }
        }
        func launchApp(_ journal: Journal) -> (MailApp, Watcher) {
            let app = MailApp(journal: journal)
            let watcher = Watcher()
            watcher.session = app.session
            watcher.parent = app.navigation
            // "AAA" sorts before "Session": the watcher decodes first, and finishes after the session decoded.
            app.manager.registerObject(forStateRestoration: watcher, restorationIdentifier: "AAA-Watcher")
            return (app, watcher)
        }
        let store = TestStore()
        do {
            let (app, _) = launchApp(try store.open())
            app.perform(.toggleUnreadOnly)
            try app.save()
        }
        let (app, watcher) = launchApp(try store.open())
        try app.launch()
        #expect(app.session.finishedRestorations == 1)
        #expect(watcher.sawUnreadOnly == true)
    }
}

extension Node {
    /// Presents `child` and returns self, for building trees inline.
    func presenting(_ child: Node) -> Node {
        presented = child
        return self
    }
}
