import Foundation
import StateJournal
import StateRestoration
import Testing

@Suite struct IncrementalPreservationTests {
    /// A root with `count` leaf controllers under ten groups.
    func wideTree(_ count: Int) -> (root: Node, leaves: [Node]) {
        var leaves: [Node] = []
        let groups = (0..<10).map { group in
            let children = (0..<count / 10).map { Node("Leaf-\($0)", value: $0) }
            leaves += children
            return Node("Group-\(group)", children: children)
        }
        return (Node("Main", children: groups), leaves)
    }

    @Test func anIncrementalPassEncodesOnlyTheInvalidatedObjects() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let (root, leaves) = wideTree(10_000)
        let first = try manager.preserveState(roots: [root], mode: .incremental)
        #expect(first.encodedObjects == 10_011)
        leaves[4321].value = -1
        manager.invalidateRestorableState(for: leaves[4321])
        let report = try manager.preserveState(roots: [root], mode: .incremental)
        #expect(report.mode == .incremental)
        #expect(report.encodedObjects == 1)
        #expect(report.writtenPaths == [RestorationPath("Main", "Group-4", "Leaf-321")])
        #expect(leaves.reduce(0) { $0 + $1.encodeCount } == 10_001)
    }

    @Test func theWorkOfAnIncrementalPassDoesNotGrowWithTheNumberOfObjects() throws {
        var encoded: [Int] = []
        for count in [100, 10_000] {
            let store = TestStore()
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let (root, leaves) = wideTree(count)
            try manager.preserveState(roots: [root], mode: .incremental)
            let before = leaves.reduce(0) { $0 + $1.encodeCount } + root.encodeCount
            leaves[7].value = 99
            manager.invalidateRestorableState(for: leaves[7])
            try manager.preserveState(roots: [root], mode: .incremental)
            encoded.append(leaves.reduce(0) { $0 + $1.encodeCount } + root.encodeCount - before)
        }
        #expect(encoded == [1, 1])
    }

    @Test func aStructuralChangeUnderAnInvalidatedControllerWalksOnlyTheNewSubtree() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let stable = Node("Stable")
        let main = Node("Main", children: [stable])
        try manager.preserveState(roots: [main], mode: .incremental)
        main.children.append(Node("Pushed", children: [Node("Inner")]))
        manager.invalidateRestorableState(for: main)
        let report = try manager.preserveState(roots: [main], mode: .incremental)
        #expect(report.encodedObjects == 3)
        #expect(stable.encodeCount == 1)
        #expect(report.writtenPaths == [RestorationPath("Main", "Pushed"), RestorationPath("Main", "Pushed", "Inner")])
    }

    @Test func replacingAControllerAtTheSamePathRewritesItsSubtree() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let main = Node("Main", children: [Node("Detail", value: 1, children: [Node("Old")])])
        try manager.preserveState(roots: [main], mode: .incremental)
        main.children = [Node("Detail", value: 2, children: [Node("New")])]
        manager.invalidateRestorableState(for: main)
        let report = try manager.preserveState(roots: [main], mode: .incremental)
        #expect(report.writtenPaths == [RestorationPath("Main", "Detail"), RestorationPath("Main", "Detail", "New")])
        #expect(report.removedPaths == [RestorationPath("Main", "Detail", "Old")])
    }

    @Test func aNewRootOrRootScopedObjectIsPickedUpByAnIncrementalPass() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        try manager.preserveState(roots: [Node("One")], mode: .incremental)
        manager.registerObject(forStateRestoration: Counter(count: 4), restorationIdentifier: "Counter")
        let report = try manager.preserveState(roots: [Node("One"), Node("Two")], mode: .incremental)
        #expect(report.writtenPaths.contains(RestorationPath("Two")))
        #expect(report.writtenPaths.contains(RestorationPath("Counter")))
        #expect(report.removedPaths.isEmpty)
    }

    @Test func unregisteringAnObjectWritesATombstone() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let main = Node("Main")
        let counter = Counter(count: 1, parent: main)
        manager.registerObject(forStateRestoration: counter, restorationIdentifier: "Counter")
        try manager.preserveState(roots: [main], mode: .incremental)
        #expect(try journal.state().entries[RestorationPath("Main", "Counter")] != nil)
        manager.unregisterObject(counter)
        let report = try manager.preserveState(roots: [main], mode: .incremental)
        #expect(report.removedPaths == [RestorationPath("Main", "Counter")])
    }

    @Test func theFirstPassAfterReopeningIsFullAndWritesOnlyWhatChanged() throws {
        let store = TestStore()
        let main = Node("Main", children: [Node("A"), Node("B")])
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: [main], mode: .incremental)
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        main.children.removeLast()
        let report = try manager.preserveState(roots: [main], mode: .incremental)
        #expect(report.mode == .full)
        #expect(report.writtenPaths.isEmpty)
        #expect(report.removedPaths == [RestorationPath("Main", "B")])
    }
}
