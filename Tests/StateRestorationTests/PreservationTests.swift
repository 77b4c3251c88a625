import Foundation
import StateJournal
import StateRestoration
import Testing

@Suite struct PreservationTests {
    @Test func nothingIsWrittenUnlessShouldSaveSaysYes() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        delegate.saves = false
        let manager = store.manager(journal, delegate: delegate)
        let report = try manager.preserveState(roots: [Node("A")], mode: .incremental)
        #expect(report.outcome == .declined)
        #expect(try journal.history().isEmpty)
        manager.delegate = nil
        #expect(try manager.preserveState(roots: [Node("A")], mode: .incremental).outcome == .declined)
        #expect(try journal.history().isEmpty)
    }

    @Test func onePassIsOneEpochCarryingTheArchiveKeys() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        delegate.appKeys = ["launches": 3]
        let manager = store.manager(journal, delegate: delegate, bundleVersion: "7", idiom: "terminal")
        let report = try manager.preserveState(roots: [Node("A", children: [Node("B")])], mode: .incremental)
        #expect(report.epoch?.epoch == 1)
        let info = try #require(try journal.history().last)
        #expect(info.metadata[EpochMetadataKey.kind] == "preservation")
        #expect(info.metadata[EpochMetadataKey.bundleVersion] == "7")
        #expect(info.metadata[EpochMetadataKey.interfaceIdiom] == "terminal")
        #expect(info.metadata[EpochMetadataKey.systemVersion] == "6.8")
        let app = try #require(try decodedEntries(journal)[RestorationManager.applicationPath])
        #expect(app.kind == .application)
        #expect(app.values == ["launches": .int(3)])
    }

    @Test func aControllerWithoutIdentifierIsSkippedWithItsSubtree() throws {
        let store = TestStore()
        let journal = try store.open()
        let manager = store.manager(journal, delegate: TestDelegate())
        let delegate = TestDelegate()
        manager.delegate = delegate
        let anonymous = Node(nil, children: [Node("Hidden", children: [Node("Deeper")])])
        try manager.preserveState(roots: [Node("Main", children: [anonymous, Node("Shown")])], mode: .incremental)
        let paths = Set(try journal.state().entries.keys)
        #expect(
            paths == [RestorationManager.applicationPath, RestorationPath("Main"), RestorationPath("Main", "Shown")])
    }

    @Test func typeAndRestorationClassAreRecordedPerPath() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let sub = SubNode("Sub")
        sub.restorationType = SubNodeFactory.self
        let counter = Counter(count: 1)
        counter.restorationType = CounterFactory.self
        manager.registerObject(forStateRestoration: counter, restorationIdentifier: "Counter")
        try manager.preserveState(roots: [Node("Main", children: [sub])], mode: .incremental)
        let entries = try decodedEntries(journal)
        #expect(entries[RestorationPath("Main")]?.typeName == "StateRestorationTests.Node")
        #expect(entries[RestorationPath("Main")]?.restorationClassName == nil)
        #expect(entries[RestorationPath("Main", "Sub")]?.typeName == "StateRestorationTests.SubNode")
        #expect(entries[RestorationPath("Main", "Sub")]?.restorationClassName == "StateRestorationTests.SubNodeFactory")
        #expect(entries[RestorationPath("Counter")]?.kind == .object)
        #expect(entries[RestorationPath("Counter")]?.restorationClassName == "StateRestorationTests.CounterFactory")
    }

    @Test func aPassWithNothingChangedWritesNoEntries() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let roots = [Node("Main", children: [Node("A"), Node("B")])]
        try manager.preserveState(roots: roots, mode: .incremental)
        let full = try manager.preserveState(roots: roots, mode: .full)
        #expect(full.outcome == .unchanged)
        #expect(full.writtenPaths.isEmpty && full.removedPaths.isEmpty)
        #expect(full.encodedObjects == 3)
        let incremental = try manager.preserveState(roots: roots, mode: .incremental)
        #expect(incremental.outcome == .unchanged)
        #expect(incremental.encodedObjects == 0)
        #expect(try journal.history().count == 1)
    }

    @Test func aFullPassWritesOnlyTheEntriesThatChanged() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let changed = Node("B")
        let roots = [Node("Main", children: [Node("A"), changed, Node("C")])]
        try manager.preserveState(roots: roots, mode: .incremental)
        changed.value = 9
        let report = try manager.preserveState(roots: roots, mode: .full)
        #expect(report.writtenPaths == [RestorationPath("Main", "B")])
        #expect(report.epoch?.entryCount == 1)
    }

    @Test func aPathThatDisappearedGetsATombstone() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let main = Node("Main", children: [Node("A", children: [Node("A1")]), Node("B")])
        try manager.preserveState(roots: [main], mode: .incremental)
        main.children.removeFirst()
        manager.invalidateRestorableState(for: main)
        let report = try manager.preserveState(roots: [main], mode: .incremental)
        #expect(report.removedPaths == [RestorationPath("Main", "A"), RestorationPath("Main", "A", "A1")])
        #expect(try journal.state().entries[RestorationPath("Main", "A")] == nil)
        #expect(try journal.state(through: 1).entries[RestorationPath("Main", "A", "A1")] != nil)
    }

    @Test func duplicatePathsAreReportedNotDropped() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let main = Node("Main", children: [Node("Twin", value: 1), OtherNode("Twin", value: 2)])
        let report = try manager.preserveState(roots: [main], mode: .incremental)
        #expect(
            report.problems == [
                .duplicatePath(
                    RestorationPath("Main", "Twin"), keptType: "StateRestorationTests.Node",
                    droppedType: "StateRestorationTests.OtherNode")
            ])
        #expect(try decodedEntries(journal)[RestorationPath("Main", "Twin")]?.values["value"] == .int(1))
    }

    @Test func anEncodingErrorIsReportedAndKeepsThePreviousState() throws {
        struct Failure: Error {}
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        var fails = false
        let bag = Bag("Bag") { coder in
            if fails { throw Failure() }
            coder.encode(1, forKey: "one")
        }
        try manager.preserveState(roots: [bag], mode: .incremental)
        fails = true
        manager.invalidateRestorableState(for: bag)
        let report = try manager.preserveState(roots: [bag], mode: .incremental)
        #expect(report.problems.count == 1)
        #expect(try decodedEntries(journal)[RestorationPath("Bag")]?.values == ["one": .int(1)])
    }

    @Test func discardingStateIsAnEpochAndHistoryKeepsWhatCameBefore() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let roots = [Node("Main", value: 5)]
        try manager.preserveState(roots: roots, mode: .incremental)
        let discard = try manager.discardRestorableState()
        #expect(discard.metadata[EpochMetadataKey.kind] == "discard")
        #expect(try journal.state().entries.isEmpty)
        #expect(try journal.state(through: 1).entries[RestorationPath("Main")] != nil)
        let again = try manager.preserveState(roots: roots, mode: .incremental)
        #expect(again.mode == .full)
        #expect(again.writtenPaths.contains(RestorationPath("Main")))
    }

    @Test func nothingIsSavedWhileARestorationIsInProgress() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let manager = store.manager(journal, delegate: TestDelegate())
            let delegate = TestDelegate()
            manager.delegate = delegate
            try manager.preserveState(roots: [Node("Main")], mode: .incremental)
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let main = Node("Main")
        final class Extender: TestDelegate {
            weak var manager: RestorationManager?
            override func didDecodeRestorableState(_ coder: RestorationCoder) { manager?.extendStateRestoration() }
        }
        let extender = Extender()
        extender.manager = manager
        manager.delegate = extender
        try manager.restoreState(roots: [main])
        #expect(manager.isRestoring)
        #expect(try manager.preserveState(roots: [main], mode: .incremental).outcome == .restorationInProgress)
        try manager.completeStateRestoration()
        #expect(!manager.isRestoring)
        #expect(try manager.preserveState(roots: [main], mode: .incremental).outcome != .restorationInProgress)
    }
}
