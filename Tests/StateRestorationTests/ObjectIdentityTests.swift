import Foundation
import StateJournal
import StateRestoration
import Testing

/// A controller whose encode writes references to other objects, for identity tests.
final class Linker: RestorableController {
    let id: String?
    var children: [any RestorableController] = []
    var presented: (any RestorableController)?
    var links: [any StateRestoring] = []
    var value = 0
    var decodedLinks: [(any StateRestoring)?] = []

    init(_ id: String?, value: Int = 0, children: [any RestorableController] = []) {
        self.id = id
        self.value = value
        self.children = children
    }

    var restorationIdentifier: String? { id }
    var restorationClass: (any ControllerRestoration.Type)? { nil }
    var embeddedRestorationChildren: [any RestorableController] { children }
    var presentedRestorationController: (any RestorableController)? { presented }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(value, forKey: "value")
        coder.encode(links, forKey: "links")
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        value = try coder.decodeInt(forKey: "value")
        decodedLinks = try coder.decodeObjects(forKey: "links")
    }
}

@Suite struct ObjectIdentityTests {
    func paths(_ journal: Journal) throws -> Set<RestorationPath> {
        Set(try journal.state().paths).subtracting([RestorationManager.applicationPath])
    }

    @Test func aReferenceMetBeforeTheObjectsOwnPlaceRecordsThatPlace() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let target = Linker("Target", value: 7)
        let left = Linker("Left")
        left.links = [target]
        let right = Linker("Right", children: [target])
        let roots = [left, right]
        var seen: [Set<RestorationPath>] = []
        for mode in [PreservationMode.full, .full, .incremental, .full] {
            manager.invalidateRestorableState(for: left)
            let report = try manager.preserveState(roots: roots, mode: mode)
            #expect(report.removedPaths.isEmpty, "\(mode): \(report.removedPaths)")
            seen.append(try paths(journal))
        }
        #expect(Set(seen) == [[RestorationPath("Left"), RestorationPath("Right"), RestorationPath("Right", "Target")]])
        let entries = try decodedEntries(journal)
        #expect(
            entries[RestorationPath("Left")]?.values["links"]
                == .array([.reference(RestorationPath("Right", "Target"))]))

        let restoredTarget = Linker("Target")
        let restoredLeft = Linker("Left")
        let fresh = [restoredLeft, Linker("Right", children: [restoredTarget])]
        let second = store.manager(journal, delegate: delegate)
        try second.restoreState(roots: fresh)
        #expect(restoredTarget.value == 7)
        #expect(restoredLeft.decodedLinks.count == 1 && restoredLeft.decodedLinks[0] === restoredTarget)
    }

    @Test func aControllerListedByTwoContainersKeepsTheFirstPlaceInEveryPass() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let shared = Linker("Shared", value: 3)
        let first = Linker("First", children: [shared])
        let second = Linker("Second", children: [shared])
        var reports: [PreservationReport] = []
        for mode in [PreservationMode.full, .incremental, .full, .full] {
            manager.invalidateRestorableState(for: second)
            manager.invalidateRestorableState(for: first)
            reports.append(try manager.preserveState(roots: [first, second], mode: mode))
            #expect(try paths(journal).contains(RestorationPath("First", "Shared")), "\(mode)")
            #expect(!(try paths(journal)).contains(RestorationPath("Second", "Shared")), "\(mode)")
        }
        #expect(reports.allSatisfy { $0.removedPaths.isEmpty })
        #expect(
            reports[0].problems.contains(
                .objectAtTwoPaths(
                    type: "StateRestorationTests.Linker", kept: RestorationPath("First", "Shared"),
                    dropped: RestorationPath("Second", "Shared"))))
    }

    @Test func aReferenceToAControllerWithoutIdentifierIsReportedAndRestoresAsNil() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let anonymous = Linker(nil)
        let main = Linker("Main")
        main.links = [anonymous]
        let report = try manager.preserveState(roots: [main])
        #expect(
            report.problems.contains(
                .referenceOutsideHierarchy(type: "StateRestorationTests.Linker", from: RestorationPath("Main"))))
        let entries = try decodedEntries(journal)
        #expect(entries[RestorationPath("Main")]?.values["links"] == .array([.null]))
    }

    @Test func aReferenceIntoASubtreeThatIsNotSavedIsReportedInEveryMode() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let hidden = Linker("Hidden", value: 5)
        let main = Linker("Main", children: [Linker(nil, children: [hidden])])
        main.links = [hidden]
        for mode in [PreservationMode.full, .incremental, .full] {
            manager.invalidateRestorableState(for: main)
            let report = try manager.preserveState(roots: [main], mode: mode)
            #expect(
                report.problems.contains(
                    .referenceOutsideHierarchy(type: "StateRestorationTests.Linker", from: RestorationPath("Main"))),
                "\(mode)")
            #expect(try paths(journal) == [RestorationPath("Main")], "\(mode)")
        }
    }

    @Test func aCustomContainerThatEncodesItsChildrenSavesThemUnderItselfInEveryMode() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let tab = Linker("Tab", value: 9)
        let container = Linker("Tabs")
        container.links = [tab]
        let other = Linker("Other")
        other.links = [tab]
        for mode in [PreservationMode.full, .incremental, .full] {
            manager.invalidateRestorableState(for: other)
            let report = try manager.preserveState(roots: [other, container], mode: mode)
            #expect(report.removedPaths.isEmpty, "\(mode)")
            // Not in the hierarchy: saved under the first object whose encode refers to it, in walk order.
            #expect(
                try paths(journal) == [
                    RestorationPath("Other"), RestorationPath("Other", "Tab"), RestorationPath("Tabs"),
                ], "\(mode)")
        }
        // Once its container lists it, its place in the hierarchy wins, in an incremental pass too.
        container.children = [tab]
        manager.invalidateRestorableState(for: container)
        let moved = try manager.preserveState(roots: [other, container])
        #expect(moved.removedPaths == [RestorationPath("Other", "Tab")])
        #expect(
            try paths(journal) == [RestorationPath("Other"), RestorationPath("Tabs"), RestorationPath("Tabs", "Tab")])
        #expect(
            try decodedEntries(journal)[RestorationPath("Other")]?.values["links"]
                == .array([.reference(RestorationPath("Tabs", "Tab"))]))
    }
}

/// Creates a `Counter` that names this factory as its restoration class, as an app's would.
enum SelfNamingCounterFactory: ObjectRestoration {
    static func object(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any StateRestoring)?
    {
        let counter = Counter()
        counter.restorationType = Self.self
        return counter
    }
}

@Suite struct CreatedObjectScopeTests {
    @Test func anObjectCreatedByItsRestorationClassKeepsThePathItWasRestoredAt() throws {
        let store = TestStore()
        let main = Node("Main")
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            manager.register(objectRestorationClass: SelfNamingCounterFactory.self)
            let counter = Counter(count: 4, parent: main)
            counter.restorationType = SelfNamingCounterFactory.self
            manager.registerObject(forStateRestoration: counter, restorationIdentifier: "Counter")
            try manager.preserveState(roots: [main])
        }
        for launch in 0..<3 {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            manager.register(objectRestorationClass: SelfNamingCounterFactory.self)
            let restoredMain = Node("Main")
            let report = try manager.restoreState(roots: [restoredMain])
            #expect(
                report.restored.contains { $0.path == RestorationPath("Main", "Counter") && $0.decoded },
                "launch \(launch)")
            // The created Counter's restorationParent is nil: the path it was restored at still identifies it.
            let pass = try manager.preserveState(roots: [restoredMain], mode: .full)
            #expect(pass.removedPaths.isEmpty, "launch \(launch): \(pass.removedPaths)")
            #expect(pass.writtenPaths.isEmpty, "launch \(launch): \(pass.writtenPaths)")
            let entries = try decodedEntries(journal)
            #expect(entries[RestorationPath("Main", "Counter")]?.values["count"] == .int(4), "launch \(launch)")
            #expect(entries[RestorationPath("Counter")] == nil, "launch \(launch)")
            try journal.close()
        }
    }

    @Test func theChildrenOfAnObjectWhoseRestorationClassIsNotRegisteredAreSkipped() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let parent = Node("Main", children: [Node("Child")])
            parent.restorationType = NodeFactory.self
            try manager.preserveState(roots: [parent])
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop"))
        manager.delegate = delegate
        let child = Node("Child")
        let report = try manager.restoreState(roots: [Node("Main", children: [child])])
        #expect(report.skipped.map(\.path) == [RestorationPath("Main"), RestorationPath("Main", "Child")])
        #expect(report.skipped.last?.reason == .ancestorDeclined(RestorationPath("Main")))
        #expect(child.decodeCount == 0)
    }
}
