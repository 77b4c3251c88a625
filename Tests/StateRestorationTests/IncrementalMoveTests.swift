import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// Objects that move between passes: subtrees moved between containers, registered objects whose
/// `restorationParent` changes, and objects their restoration class created.
@Suite struct IncrementalMoveTests {
    /// Root/A/L/C and Root/B, Root referring to C; or the same objects with L moved under B.
    struct Layout {
        let root = Linker("Root")
        let a = Linker("A")
        let b = Linker("B")
        let l = Linker("L")
        let c = Linker("C")

        init(moved: Bool) {
            root.children = [a, b]
            l.children = [c]
            if moved { b.children = [l] } else { a.children = [l] }
            root.links = [c]
        }

        func object(_ name: String) -> Linker? {
            switch name {
            case "L": l
            case "C": c
            case "A": a
            case "B": b
            case "Root": root
            default: nil
            }
        }
    }

    /// Saves the first layout, moves L from A to B, sets C's value, invalidates `invalidated`, runs an
    /// incremental pass, then restores into the moved layout at a new launch.
    func moveAndRestore(invalidating invalidated: [String]) throws -> (
        pass: PreservationReport, restored: Layout, restore: RestorationReport
    ) {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let app = Layout(moved: false)
        app.l.value = 1
        app.c.value = 2
        try manager.preserveState(roots: [app.root], mode: .full)
        app.a.children = []
        app.b.children = [app.l]
        app.c.value = 3
        for name in invalidated { manager.invalidateRestorableState(for: app.object(name)!) }
        let pass = try manager.preserveState(roots: [app.root], mode: .incremental)
        try journal.close()

        let reopened = try store.open()
        let next = store.manager(reopened, delegate: delegate)
        let restored = Layout(moved: true)
        let report = try next.restoreState(roots: [restored.root])
        return (pass, restored, report)
    }

    @Test(arguments: [["L"], ["C"], ["A"], ["B"], ["Root"], ["A", "B"], ["A", "B", "L"]])
    func aSubtreeMovedToAnotherContainerIsSavedAtItsNewPlaceWhicheverObjectWasInvalidated(
        invalidated: [String]
    ) throws {
        let (pass, restored, report) = try moveAndRestore(invalidating: invalidated)
        #expect(pass.problems.isEmpty, "\(invalidated): \(pass.problems)")
        #expect(
            pass.removedPaths == [RestorationPath("Root", "A", "L"), RestorationPath("Root", "A", "L", "C")],
            "\(invalidated)")
        #expect(report.skipped.isEmpty, "\(invalidated): \(report.skipped)")
        #expect(restored.l.value == 1, "\(invalidated)")
        #expect(restored.c.value == 3, "\(invalidated)")
        #expect(restored.root.decodedLinks.count == 1 && restored.root.decodedLinks[0] === restored.c)
    }

    @Test func aMoveBetweenTwoInvalidatedContainersStaysIncremental() throws {
        let (pass, _, _) = try moveAndRestore(invalidating: ["A", "B"])
        #expect(pass.mode == .incremental)
        #expect(pass.fullPassReason == nil)
    }

    @Test(arguments: [["L"], ["C"], ["A"], ["B"], ["Root"]])
    func anIncrementalPassThatFindsAMovedObjectWalksEverythingAndSaysWhy(invalidated: [String]) throws {
        let (pass, _, _) = try moveAndRestore(invalidating: invalidated)
        #expect(pass.mode == .full, "\(invalidated)")
        guard case .placeChanged = pass.fullPassReason else {
            Issue.record("\(invalidated): \(String(describing: pass.fullPassReason))")
            return
        }
    }

    @Test func aMoveNobodyWasToldAboutKeepsTheOldPathsUntilTheNextFullPass() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let app = Layout(moved: false)
        app.c.value = 2
        try manager.preserveState(roots: [app.root], mode: .full)
        app.a.children = []
        app.b.children = [app.l]
        let unaware = try manager.preserveState(roots: [app.root], mode: .incremental)
        #expect(unaware.mode == .incremental)
        #expect(unaware.removedPaths.isEmpty)
        #expect(try journal.state().entries[RestorationPath("Root", "A", "L", "C")] != nil)
        let full = try manager.preserveState(roots: [app.root], mode: .full)
        #expect(full.fullPassReason == .requested)
        #expect(
            full.writtenPaths == [
                RestorationPath("Root"), RestorationPath("Root", "B", "L"), RestorationPath("Root", "B", "L", "C"),
            ])
        #expect(full.removedPaths == [RestorationPath("Root", "A", "L"), RestorationPath("Root", "A", "L", "C")])
    }

    @Test func poppingAControllerThatIsReleasedStaysIncremental() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let main = Node("Main", children: [Node("Stable")])
        main.children.append(Node("Pushed", children: [Node("Inner")]))
        let first = try manager.preserveState(roots: [main], mode: .incremental)
        #expect(first.mode == .full && first.fullPassReason == .noPreviousPass)
        main.children.removeLast()
        manager.invalidateRestorableState(for: main)
        let report = try manager.preserveState(roots: [main], mode: .incremental)
        #expect(report.mode == .incremental)
        #expect(report.removedPaths == [RestorationPath("Main", "Pushed"), RestorationPath("Main", "Pushed", "Inner")])
    }

    @Test func poppingAControllerTheAppKeepsWalksEverythingBeforeAnyTombstone() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let pushed = Node("Pushed", value: 4)
        let other = Node("Other")
        let main = Node("Main", children: [pushed, other])
        try manager.preserveState(roots: [main], mode: .incremental)
        // Moved under Other, which nobody invalidated: only a full walk can tell.
        main.children = [other]
        other.children = [pushed]
        manager.invalidateRestorableState(for: main)
        let report = try manager.preserveState(roots: [main], mode: .incremental)
        #expect(report.mode == .full)
        #expect(report.fullPassReason == .placeChanged(RestorationPath("Main", "Pushed")))
        #expect(try decodedEntries(journal)[RestorationPath("Main", "Other", "Pushed")]?.values["value"] == .int(4))
    }

    // MARK: - Registered objects

    @Test func aRegisteredObjectWhoseRestorationParentChangesIsSavedUnderItsNewParent() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let a = Node("A")
        let b = Node("B")
        let root = Node("Root", children: [a, b])
        let prefs = Counter(count: 5, parent: a)
        manager.registerObject(forStateRestoration: prefs, restorationIdentifier: "Prefs")
        try manager.preserveState(roots: [root], mode: .full)
        prefs.parent = b
        prefs.count = 6
        manager.invalidateRestorableState(for: prefs)
        let incremental = try manager.preserveState(roots: [root], mode: .incremental)
        #expect(incremental.mode == .full)
        #expect(incremental.writtenPaths == [RestorationPath("Root", "B", "Prefs")])
        #expect(incremental.removedPaths == [RestorationPath("Root", "A", "Prefs")])
        try journal.close()

        let reopened = try store.open()
        let next = store.manager(reopened, delegate: delegate)
        let newB = Node("B")
        let restoredPrefs = Counter(parent: newB)
        next.registerObject(forStateRestoration: restoredPrefs, restorationIdentifier: "Prefs")
        let report = try next.restoreState(roots: [Node("Root", children: [Node("A"), newB])])
        #expect(report.skipped.isEmpty)
        #expect(restoredPrefs.count == 6)
    }

    @Test func aFullPassReadsEveryRestorationParentAgain() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let a = Node("A")
        let b = Node("B")
        let root = Node("Root", children: [a, b])
        let prefs = Counter(count: 5, parent: a)
        manager.registerObject(forStateRestoration: prefs, restorationIdentifier: "Prefs")
        try manager.preserveState(roots: [root], mode: .full)
        prefs.parent = b
        let full = try manager.preserveState(roots: [root], mode: .full)
        #expect(full.writtenPaths == [RestorationPath("Root", "B", "Prefs")])
        #expect(full.removedPaths == [RestorationPath("Root", "A", "Prefs")])
    }

    @Test func aRegisteredObjectIsRestoredUnderTheParentItNamesWhenRestorationBegins() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let b = Node("B")
            manager.registerObject(
                forStateRestoration: Counter(count: 8, parent: b), restorationIdentifier: "Prefs")
            try manager.preserveState(roots: [Node("Root", children: [Node("A"), b])], mode: .incremental)
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let a = Node("A")
        let b = Node("B")
        let prefs = Counter(parent: a)
        manager.registerObject(forStateRestoration: prefs, restorationIdentifier: "Prefs")
        prefs.parent = b
        let report = try manager.restoreState(roots: [Node("Root", children: [a, b])])
        #expect(report.skipped.isEmpty)
        #expect(prefs.count == 8)
    }

    @Test func invalidatingTheOldParentOfARegisteredObjectThatMovedWalksEverything() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let a = Node("A")
        let b = Node("B")
        let root = Node("Root", children: [a, b])
        let prefs = Counter(count: 5, parent: a)
        manager.registerObject(forStateRestoration: prefs, restorationIdentifier: "Prefs")
        try manager.preserveState(roots: [root], mode: .full)
        prefs.parent = b
        manager.invalidateRestorableState(for: a)
        let report = try manager.preserveState(roots: [root], mode: .incremental)
        #expect(report.mode == .full)
        #expect(try paths(journal).contains(RestorationPath("Root", "B", "Prefs")))
        #expect(try !paths(journal).contains(RestorationPath("Root", "A", "Prefs")))
    }

    @Test func anObjectCreatedByItsRestorationClassFollowsTheRestorationParentTheAppGivesIt() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            manager.register(objectRestorationClass: SelfNamingCounterFactory.self)
            let main = Linker("Main")
            let counter = Counter(count: 4, parent: main)
            counter.restorationType = SelfNamingCounterFactory.self
            main.links = [counter]
            manager.registerObject(forStateRestoration: counter, restorationIdentifier: "Counter")
            try manager.preserveState(roots: [Linker("Other"), main], mode: .incremental)
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        manager.register(objectRestorationClass: SelfNamingCounterFactory.self)
        let other = Linker("Other")
        let main = Linker("Main")
        try manager.restoreState(roots: [other, main])
        let created = try #require(main.decodedLinks.first as? Counter)
        #expect(created.count == 4 && created.parent == nil)
        // Without a restorationParent it keeps the path it was restored at.
        main.links = [created]
        let stay = try manager.preserveState(roots: [other, main], mode: .full)
        #expect(stay.removedPaths.isEmpty && stay.writtenPaths.isEmpty)
        // Once the app gives it one, that parent wins.
        created.parent = other
        manager.invalidateRestorableState(for: created)
        let moved = try manager.preserveState(roots: [other, main], mode: .incremental)
        #expect(moved.mode == .full)
        #expect(moved.removedPaths == [RestorationPath("Main", "Counter")])
        #expect(moved.writtenPaths == [RestorationPath("Main"), RestorationPath("Other", "Counter")])
    }

    // MARK: - Two instances at one path

    @Test func twoInstancesOfOneTypeAtOnePathAreToldApartAndTheProblemSaysWhatToDo() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let main = Node("Main")
            let prefs = Counter(count: 1, parent: main)
            prefs.restorationType = CounterFactory.self
            manager.registerObject(forStateRestoration: prefs, restorationIdentifier: "Prefs")
            try manager.preserveState(roots: [main], mode: .incremental)
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let main = Node("Main")
        let mine = Counter(count: 0, parent: main)
        mine.restorationType = CounterFactory.self
        manager.registerObject(forStateRestoration: mine, restorationIdentifier: "Prefs")
        try manager.restoreState(roots: [main])
        let report = try manager.preserveState(roots: [main], mode: .full)
        let path = RestorationPath("Main", "Prefs")
        #expect(
            report.problems == [
                .duplicateInstance(
                    path, type: "StateRestorationTests.Counter", kept: .registered, dropped: .createdDuringRestoration)
            ])
        let message = report.problems.first.map { "\($0)" } ?? ""
        #expect(message.contains("another instance of StateRestorationTests.Counter"), "\(message)")
        #expect(message.contains("return the registered object from its restoration class"), "\(message)")
    }

    @Test func twoSiblingsOfOneTypeWithOneIdentifierAreToldApart() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let main = Node("Main", children: [Node("Twin", value: 1), Node("Twin", value: 2)])
        let report = try manager.preserveState(roots: [main], mode: .incremental)
        #expect(
            report.problems == [
                .duplicateInstance(
                    RestorationPath("Main", "Twin"), type: "StateRestorationTests.Node", kept: .child, dropped: .child)
            ])
        #expect(report.problems.first.map { "\($0)" }?.contains("another instance") == true)
    }

    // MARK: - Controllers created during restoration

    @Test func aControllerCreatedDuringRestorationThatNoParentPicksUpIsReportedAndLogged() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let detail = Node("Detail", value: 7)
            detail.restorationType = NodeFactory.self
            try store.manager(journal, delegate: delegate).preserveState(
                roots: [Node("Main", children: [detail])], mode: .incremental)
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let logs = CapturedLogs()
        let manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(
                bundleVersion: "1", interfaceIdiom: "desktop", systemVersion: "6.8", logger: logs.logger))
        manager.delegate = delegate
        manager.register(restorationClass: NodeFactory.self)
        let report = try manager.restoreState(roots: [Node("Main")])
        #expect(report.diagnostics == [.restoredControllerOutsideHierarchy(RestorationPath("Main", "Detail"))])
        let warning = try #require(logs.entries(.warning, containing: "no parent").first)
        #expect(warning.metadata["path"] == "Main/Detail")
    }

    @Test func aControllerCreatedDuringRestorationThatItsParentAttachesIsNotReported() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let pane = Pane("Pane", value: 7)
            let holder = Holder("Main", children: [pane])
            try store.manager(journal, delegate: delegate).preserveState(roots: [holder], mode: .incremental)
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        manager.register(restorationClass: PaneFactory.self)
        let holder = Holder("Main")
        let report = try manager.restoreState(roots: [holder])
        #expect(report.diagnostics.isEmpty)
        #expect((holder.children.first as? Pane)?.value == 7)
        let pass = try manager.preserveState(roots: [holder], mode: .full)
        #expect(pass.removedPaths.isEmpty && pass.writtenPaths.isEmpty)
    }

    // MARK: - Helpers

    func paths(_ journal: Journal) throws -> Set<RestorationPath> {
        Set(try journal.state().paths).subtracting([RestorationManager.applicationPath])
    }
}

/// A container that saves references to its children and attaches them again when it decodes:
/// the pattern for children that their restoration class creates.
final class Holder: RestorableController {
    let id: String
    var children: [any RestorableController]

    init(_ id: String, children: [any RestorableController] = []) {
        self.id = id
        self.children = children
    }

    var restorationIdentifier: String? { id }
    var embeddedRestorationChildren: [any RestorableController] { children }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(children.map { $0 as any StateRestoring }, forKey: "children")
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        children = try coder.decodeObjects(forKey: "children").compactMap { $0 as? any RestorableController }
    }
}

/// A child that its restoration class creates.
final class Pane: RestorableController {
    let id: String
    var value: Int

    init(_ id: String, value: Int = 0) {
        self.id = id
        self.value = value
    }

    var restorationIdentifier: String? { id }
    var restorationClass: (any ControllerRestoration.Type)? { PaneFactory.self }
    func encodeRestorableState(with coder: RestorationCoder) throws { coder.encode(value, forKey: "value") }
    func decodeRestorableState(with coder: RestorationCoder) throws { value = try coder.decodeInt(forKey: "value") }
}

enum PaneFactory: ControllerRestoration {
    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        identifierComponents.last.map { Pane($0) }
    }
}
