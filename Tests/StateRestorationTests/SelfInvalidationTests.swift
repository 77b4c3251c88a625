import Foundation
import StateJournal
import StateRestoration
import Testing

/// `invalidateRestorableState()` on the object itself: it reaches the managers that preserve the
/// object without a reference to any of them.
@Suite struct SelfInvalidationTests {
    @Test func aControllerDeepInTheTreeInvalidatesItselfWithoutAManagerReference() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let deep = Node("Deep", value: 1)
        let root = Node("Main", children: [Node("Middle", children: [deep]), Node("Other")])
        try manager.preserveState(roots: [root], mode: .incremental)

        deep.value = 2
        deep.invalidateRestorableState()
        let report = try manager.preserveState(roots: [root], mode: .incremental)

        #expect(report.mode == .incremental)
        #expect(report.encodedObjects == 1)
        #expect(report.writtenPaths == [RestorationPath("Main", "Middle", "Deep")])
        #expect(try decodedEntries(journal)[RestorationPath("Main", "Middle", "Deep")]?.values["value"] == .int(2))
    }

    @Test func anObjectPlacedByALaterIncrementalPassCanInvalidateItself() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let root = Node("Main")
        try manager.preserveState(roots: [root], mode: .incremental)
        let pushed = Node("Pushed", value: 1)
        root.children = [pushed]
        root.invalidateRestorableState()
        try manager.preserveState(roots: [root], mode: .incremental)

        pushed.value = 5
        pushed.invalidateRestorableState()
        let report = try manager.preserveState(roots: [root], mode: .incremental)
        #expect(report.writtenPaths == [RestorationPath("Main", "Pushed")])
    }

    @Test func aRegisteredObjectInvalidatesItself() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let counter = Counter(count: 1)
        manager.registerObject(forStateRestoration: counter, restorationIdentifier: "Counter")
        try manager.preserveState(roots: [], mode: .incremental)

        counter.count = 2
        counter.invalidateRestorableState()
        let report = try manager.preserveState(roots: [], mode: .incremental)
        #expect(report.writtenPaths == [RestorationPath("Counter")])
    }

    @Test func aRestoredObjectInvalidatesItselfAfterTheFirstPass() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            try store.manager(journal, delegate: delegate).preserveState(
                roots: [Node("Main", value: 1)], mode: .incremental)
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let root = Node("Main")
        try manager.restoreState(roots: [root])
        try manager.preserveState(roots: [root], mode: .incremental)

        root.value = 3
        root.invalidateRestorableState()
        let report = try manager.preserveState(roots: [root], mode: .incremental)
        #expect(report.mode == .incremental)
        #expect(report.writtenPaths == [RestorationPath("Main")])
    }

    @Test func everyManagerThatPreservesTheObjectSeesItInvalidated() throws {
        let first = TestStore()
        let second = TestStore()
        let firstJournal = try first.open()
        let secondJournal = try second.open()
        let delegate = TestDelegate()
        let firstManager = first.manager(firstJournal, delegate: delegate)
        let secondManager = second.manager(secondJournal, delegate: delegate)
        let shared = Node("Shared", value: 1)
        try firstManager.preserveState(roots: [shared], mode: .incremental)
        try secondManager.preserveState(roots: [shared], mode: .incremental)

        shared.value = 9
        shared.invalidateRestorableState()
        #expect(
            try firstManager.preserveState(roots: [shared], mode: .incremental).writtenPaths == [
                RestorationPath("Shared")
            ])
        #expect(
            try secondManager.preserveState(roots: [shared], mode: .incremental).writtenPaths == [
                RestorationPath("Shared")
            ])
    }

    @Test func anObjectNoManagerHasSeenInvalidatesNothing() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let root = Node("Main")
        try manager.preserveState(roots: [root], mode: .incremental)
        let stranger = Node("Stranger")
        stranger.invalidateRestorableState()
        let report = try manager.preserveState(roots: [root], mode: .incremental)
        #expect(report.outcome == .unchanged)
        #expect(report.encodedObjects == 0)
    }

    @Test func theManagersInvalidationForAnObjectStillWorks() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let root = Node("Main", value: 1)
        try manager.preserveState(roots: [root], mode: .incremental)
        root.value = 2
        manager.invalidateRestorableState(for: root)
        #expect(try manager.preserveState(roots: [root], mode: .incremental).writtenPaths == [RestorationPath("Main")])
    }
}
