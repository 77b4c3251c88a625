import Foundation
import StateJournal
import StateRestoration
import Testing

@Suite struct RestorationLookupTests {
    /// Saves `roots` (after `prepare`) in a fresh store and returns the store.
    func saved(_ roots: [Node], prepare: (RestorationManager) -> Void = { _ in }) throws -> TestStore {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        prepare(manager)
        try manager.preserveState(roots: roots)
        try journal.close()
        return store
    }

    @Test func nothingIsRestoredUnlessShouldRestoreSaysYes() throws {
        let store = try saved([Node("Main", value: 3)])
        let journal = try store.open()
        let delegate = TestDelegate()
        delegate.restores = false
        let manager = store.manager(journal, delegate: delegate)
        let main = Node("Main")
        let report = try manager.restoreState(roots: [main])
        #expect(report.outcome == .declined)
        #expect(main.value == 0)
        #expect(try journal.history().count == 1)
    }

    @Test func theRestorationClassComesFirstAndItsNilSkipsTheSubtreeWithNoOtherLookup() throws {
        let child = Node("Child", children: [Node("Grandchild")])
        child.restorationType = DecliningFactory.self
        let store = try saved([Node("Main", children: [child])])
        let journal = try store.open()
        let delegate = TestDelegate()
        delegate.controllers[["Main", "Child"]] = Node("Child")
        let manager = store.manager(journal, delegate: delegate)
        let existingChild = Node("Child", children: [Node("Grandchild")])
        let main = Node("Main", children: [existingChild])
        let report = try manager.restoreState(roots: [main])
        #expect(report.restored.map(\.path) == [RestorationPath("Main")])
        #expect(
            report.skipped == [
                SkippedObject(
                    path: RestorationPath("Main", "Child"), savedTypeName: "StateRestorationTests.Node",
                    reason: .declinedByRestorationClass),
                SkippedObject(
                    path: RestorationPath("Main", "Child", "Grandchild"), savedTypeName: "StateRestorationTests.Node",
                    reason: .ancestorDeclined(RestorationPath("Main", "Child"))),
            ])
        #expect(!delegate.lookups.contains(["Main", "Child"]))
        #expect(existingChild.decodeCount == 0)
    }

    @Test func theDelegateComesBeforeTheExistingHierarchy() throws {
        let store = try saved([Node("Main", children: [Node("Detail", value: 8)])])
        let journal = try store.open()
        let delegate = TestDelegate()
        let fromDelegate = Node("Detail")
        delegate.controllers[["Main", "Detail"]] = fromDelegate
        let manager = store.manager(journal, delegate: delegate)
        let existing = Node("Detail")
        let report = try manager.restoreState(roots: [Node("Main", children: [existing])])
        #expect(report.restored.map(\.source) == [.existing, .delegate])
        #expect(fromDelegate.value == 8)
        #expect(existing.value == 0)
    }

    @Test func anExistingObjectAtTheSamePathIsFoundLast() throws {
        let store = try saved([Node("Main", value: 1, children: [Node("Detail", value: 8)])])
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let existing = Node("Detail")
        let main = Node("Main", children: [existing])
        let report = try manager.restoreState(roots: [main])
        #expect(report.restored.map(\.source) == [.existing, .existing])
        #expect(main.value == 1 && existing.value == 8)
    }

    @Test func aPathWithNothingToObtainIsSkippedAsNotFound() throws {
        let store = try saved([Node("Main", children: [Node("Gone")])])
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let report = try manager.restoreState(roots: [Node("Main")])
        #expect(report.skipped.map(\.reason) == [.notFound])
    }

    @Test func customObjectsComeFromTheirRestorationClassOrAPriorRegistration() throws {
        let main = Node("Main")
        let store = try saved([main]) { manager in
            let created = Counter(count: 5, parent: main)
            created.restorationType = CounterFactory.self
            manager.registerObject(forStateRestoration: created, restorationIdentifier: "Created")
            manager.registerObject(
                forStateRestoration: Counter(count: 6, parent: main), restorationIdentifier: "Registered")
            manager.registerObject(
                forStateRestoration: Counter(count: 7, parent: main), restorationIdentifier: "Unregistered")
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let newMain = Node("Main")
        let registered = Counter(parent: newMain)
        manager.registerObject(forStateRestoration: registered, restorationIdentifier: "Registered")
        let report = try manager.restoreState(roots: [newMain])
        #expect(registered.count == 6)
        #expect(report.restored.map(\.path.description) == ["Main", "Main/Created", "Main/Registered"])
        #expect(report.restored.map(\.source) == [.existing, .restorationClass, .existing])
        #expect(report.skipped.map(\.path.description) == ["Main/Unregistered"])
    }

    @Test func aTypeNameOnDiskIsNeverInstantiatedUnlessRegistered() throws {
        let child = Node("Child")
        child.restorationType = SubNodeFactory.self
        let store = try saved([Node("Main", children: [child])])
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop", systemVersion: "6.8")
        )
        manager.delegate = delegate
        let report = try manager.restoreState(roots: [Node("Main")])
        #expect(
            report.skipped.map(\.reason) == [.unregisteredRestorationClass("StateRestorationTests.SubNodeFactory")])
    }

    @Test func aClassMismatchKeepsTheObjectButSkipsItsDecode() throws {
        let child = SubNode("Child", value: 4)
        child.restorationType = OtherNodeFactory.self
        let store = try saved([Node("Main", children: [child])])
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let report = try manager.restoreState(roots: [Node("Main")])
        let restored = try #require(report.restored.last)
        #expect(restored.path == RestorationPath("Main", "Child"))
        #expect(!restored.decoded)
        // The created child is not attached to Main, which is also reported.
        #expect(
            report.diagnostics == [
                .classMismatch(
                    RestorationPath("Main", "Child"), savedType: "StateRestorationTests.SubNode",
                    obtainedType: "StateRestorationTests.OtherNode"),
                .restoredControllerOutsideHierarchy(RestorationPath("Main", "Child")),
            ])
    }

    @Test func aSubclassOfTheSavedTypeIsDecoded() throws {
        let child = Node("Child", value: 4)
        child.restorationType = SubNodeFactory.self
        let store = try saved([Node("Main", children: [child])])
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let report = try manager.restoreState(roots: [Node("Main")])
        // Only the created child's place is reported (nothing attaches it to Main), not its class.
        #expect(report.diagnostics == [.restoredControllerOutsideHierarchy(RestorationPath("Main", "Child"))])
        #expect(report.restored.allSatisfy { $0.decoded })
    }
}
