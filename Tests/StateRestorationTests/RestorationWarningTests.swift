import Foundation
import Logging
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// The app's mistakes are logged at warning through swift-log, and listed in the pass's report.
@Suite struct RestorationWarningTests {
    /// A manager over `journal` that logs into `logs`, with the test factories registered except
    /// those in `leavingOut`.
    private func manager(
        _ journal: Journal, _ delegate: TestDelegate, logs: CapturedLogs,
        leavingOut: [any ControllerRestoration.Type] = []
    ) -> RestorationManager {
        let manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(
                bundleVersion: "1", interfaceIdiom: "desktop", systemVersion: "6.8", logger: logs.logger))
        manager.delegate = delegate
        let factories: [any ControllerRestoration.Type] = [
            NodeFactory.self, SubNodeFactory.self, OtherNodeFactory.self, DecliningFactory.self,
        ]
        for factory in factories where !leavingOut.contains(where: { $0 == factory }) {
            manager.register(restorationClass: factory)
        }
        return manager
    }

    @Test func anUnregisteredRestorationClassIsAWarningAndASkip() throws {
        let store = TestStore()
        let child = Node("Child")
        child.restorationType = NodeFactory.self
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            try manager(journal, delegate, logs: CapturedLogs()).preserveState(
                roots: [Node("Main", children: [child])])
            try journal.close()
        }
        let logs = CapturedLogs()
        let journal = try store.open()
        let delegate = TestDelegate()
        let report = try manager(journal, delegate, logs: logs, leavingOut: [NodeFactory.self])
            .restoreState(roots: [Node("Main")])

        let name = "StateRestorationTests.NodeFactory"
        #expect(
            report.skipped == [
                SkippedObject(
                    path: RestorationPath("Main", "Child"), savedTypeName: "StateRestorationTests.Node",
                    reason: .unregisteredRestorationClass(name))
            ])
        let warning = try #require(logs.entries(.warning, containing: "Skipped").first)
        #expect(warning.metadata["path"] == "Main/Child")
        #expect(warning.metadata["reason"] == "\(RestorationSkipReason.unregisteredRestorationClass(name))")
    }

    @Test func aDuplicatePathIsAWarningAndAProblem() throws {
        let logs = CapturedLogs()
        let journal = try TestStore().open()
        let delegate = TestDelegate()
        let report = try manager(journal, delegate, logs: logs).preserveState(roots: [
            Node("Main", children: [Node("Twin", value: 1), SubNode("Twin", value: 2)])
        ])

        let path = RestorationPath("Main", "Twin")
        #expect(
            report.problems == [
                .duplicatePath(
                    path, keptType: "StateRestorationTests.Node", droppedType: "StateRestorationTests.SubNode")
            ])
        let warning = try #require(logs.entries(.warning, containing: "Two objects claim").first)
        #expect(warning.metadata["path"] == "Main/Twin")
        #expect(warning.metadata["kept_type"] == "StateRestorationTests.Node")
        #expect(warning.metadata["dropped_type"] == "StateRestorationTests.SubNode")
    }

    @Test func aReferenceOutsideTheHierarchyIsAWarningAndAProblem() throws {
        let logs = CapturedLogs()
        let journal = try TestStore().open()
        let delegate = TestDelegate()
        let anonymous = Node(nil)
        let report = try manager(journal, delegate, logs: logs).preserveState(roots: [
            Bag("Root") { $0.encode(anonymous, forKey: "detail") }
        ])

        #expect(
            report.problems == [
                .referenceOutsideHierarchy(type: "StateRestorationTests.Node", from: RestorationPath("Root"))
            ])
        let warning = try #require(logs.entries(.warning, containing: "outside the saved hierarchy").first)
        #expect(warning.metadata["path"] == "Root")
        #expect(warning.metadata["type"] == "StateRestorationTests.Node")
    }

    @Test func aClassMismatchIsAWarningAndADiagnostic() throws {
        let store = TestStore()
        let child = SubNode("Child", value: 4)
        child.restorationType = OtherNodeFactory.self
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            try manager(journal, delegate, logs: CapturedLogs()).preserveState(
                roots: [Node("Main", children: [child])])
            try journal.close()
        }
        let logs = CapturedLogs()
        let journal = try store.open()
        let delegate = TestDelegate()
        let report = try manager(journal, delegate, logs: logs).restoreState(roots: [Node("Main")])

        // Main does not attach the created child, so the report also says that no parent holds it.
        #expect(
            report.diagnostics == [
                .classMismatch(
                    RestorationPath("Main", "Child"), savedType: "StateRestorationTests.SubNode",
                    obtainedType: "StateRestorationTests.OtherNode"),
                .restoredControllerOutsideHierarchy(RestorationPath("Main", "Child")),
            ])
        let warning = try #require(logs.entries(.warning, containing: "another class").first)
        #expect(warning.metadata["path"] == "Main/Child")
    }

    @Test func completingARestorationThatWasNotExtendedIsAWarning() throws {
        let logs = CapturedLogs()
        let journal = try TestStore().open()
        let delegate = TestDelegate()
        let manager = manager(journal, delegate, logs: logs)
        try manager.completeStateRestoration()

        #expect(!manager.isRestoring)
        #expect(logs.entries(.warning, containing: "completeStateRestoration() was called").count == 1)
    }

    @Test func anExtensionNeverBalancedIsAWarningAndADiagnosticOfTheNextRestoration() throws {
        let store = TestStore()
        final class Extender: TestDelegate {
            weak var manager: RestorationManager?
            override func didDecodeRestorableState(_ coder: RestorationCoder) { manager?.extendStateRestoration() }
        }
        let saved: UInt64
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let report = try manager(journal, delegate, logs: CapturedLogs()).preserveState(roots: [
                Node("Main", value: 1)
            ])
            saved = try #require(report.epoch).epoch
            try journal.close()
        }
        let releaseLogs = CapturedLogs()
        do {
            let journal = try store.open()
            let delegate = Extender()
            let manager = manager(journal, delegate, logs: releaseLogs)
            delegate.manager = manager
            try manager.restoreState(roots: [Node("Main")])
            #expect(manager.isRestoring)
            #expect(try manager.preserveState(roots: [Node("Main")]).outcome == .restorationInProgress)
            #expect(try manager.preserveState(roots: [Node("Main")]).outcome == .restorationInProgress)
            try journal.close()
        }
        #expect(releaseLogs.entries(.notice, containing: "A preservation pass was skipped").count == 1)
        let released = try #require(releaseLogs.entries(.warning, containing: "released while a restoration").first)
        #expect(released.metadata["holds"] == "1")

        let logs = CapturedLogs()
        let journal = try store.open()
        let delegate = TestDelegate()
        let report = try manager(journal, delegate, logs: logs).restoreState(roots: [Node("Main")])
        #expect(report.diagnostics == [.unfinishedRestoration(epoch: saved, attempts: 1)])
        let warning = try #require(logs.entries(.warning, containing: "never completed").first)
        #expect(warning.metadata["restoring_epoch"] == "\(saved)")
        #expect(warning.metadata["attempts"] == "1")
    }

    @Test func aCrashLoopFallbackListsTheAvoidedRestoration() throws {
        let store = TestStore()
        final class Extender: TestDelegate {
            weak var manager: RestorationManager?
            override func didDecodeRestorableState(_ coder: RestorationCoder) { manager?.extendStateRestoration() }
        }
        let main = Node("Main", value: 1)
        var epochs: [UInt64] = []
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = manager(journal, delegate, logs: CapturedLogs())
            epochs.append(try #require(try manager.preserveState(roots: [main]).epoch).epoch)
            main.value = 2
            main.invalidateRestorableState()
            epochs.append(try #require(try manager.preserveState(roots: [main]).epoch).epoch)
            try journal.close()
        }
        for _ in 0..<2 {
            let journal = try store.open()
            let delegate = Extender()
            let manager = manager(journal, delegate, logs: CapturedLogs())
            delegate.manager = manager
            try manager.restoreState(roots: [Node("Main")])
            try journal.close()
        }
        let logs = CapturedLogs()
        let journal = try store.open()
        let delegate = TestDelegate()
        let report = try manager(journal, delegate, logs: logs).restoreState(roots: [Node("Main")])
        #expect(report.reason == .crashLoopFallback(avoidedEpoch: epochs[1]))
        #expect(report.diagnostics == [.unfinishedRestoration(epoch: epochs[1], attempts: 2)])
        #expect(logs.entries(.warning, containing: "never completed").count == 1)
    }
}
