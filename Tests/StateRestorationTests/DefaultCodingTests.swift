import Foundation
import StateJournal
import StateRestoration
import Testing

/// A container that only anchors its children's paths: it declares its identifier and children,
/// and no coding method.
final class Anchor: RestorableController {
    let id: String
    var children: [any RestorableController]

    init(_ id: String, children: [any RestorableController]) {
        self.id = id
        self.children = children
    }

    var restorationIdentifier: String? { id }
    var embeddedRestorationChildren: [any RestorableController] { children }
}

/// A custom object with no coding method, registered to scope others.
final class Scope: StateRestoring {}

/// The default coding methods: an object that only anchors a path writes and reads nothing.
@Suite struct DefaultCodingTests {
    @Test func aControllerWithoutCodingMethodsIsSavedWithNoValuesAndItsChildrenAreRestored() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let report = try manager.preserveState(roots: [Anchor("Main", children: [Node("Leaf", value: 7)])])
            #expect(report.problems.isEmpty)
            let entries = try decodedEntries(journal)
            #expect(entries[RestorationPath("Main")]?.values == [:])
            #expect(entries[RestorationPath("Main")]?.typeName == "StateRestorationTests.Anchor")
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let leaf = Node("Leaf")
        let report = try manager.restoreState(roots: [Anchor("Main", children: [leaf])])
        #expect(report.diagnostics.isEmpty)
        #expect(report.restored.map(\.path) == [RestorationPath("Main"), RestorationPath("Main", "Leaf")])
        #expect(report.restored.allSatisfy { $0.decoded })
        #expect(leaf.value == 7)
    }

    @Test func aCustomObjectWithoutCodingMethodsScopesTheObjectsRegisteredUnderIt() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let scope = Scope()
        let counter = Counter(count: 3, parent: scope)
        manager.registerObject(forStateRestoration: scope, restorationIdentifier: "Scope")
        manager.registerObject(forStateRestoration: counter, restorationIdentifier: "Counter")
        try manager.preserveState(roots: [])
        let entries = try decodedEntries(journal)
        #expect(entries[RestorationPath("Scope")]?.values == [:])
        #expect(entries[RestorationPath("Scope", "Counter")]?.values == ["count": .int(3)])
    }
}
