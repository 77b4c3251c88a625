import Foundation
import Logging
import MetricsTestKit
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// What the manager logs and counts while restoring and preserving.
@Suite struct RestorationObservabilityTests {
    /// A manager over a reopened store, with the delegate it holds weakly and the store's directory.
    private struct Fixture {
        let store: TestStore
        let manager: RestorationManager
        let delegate: TestDelegate
        let journal: Journal
    }

    /// Saves `roots` in a fresh store, then opens a manager over it that logs into `logs` and
    /// counts into `metrics`.
    private func reopened(saving roots: [Node], logs: CapturedLogs, metrics: TestMetrics) throws -> Fixture {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        try store.manager(journal, delegate: delegate).preserveState(roots: roots)
        try journal.close()

        let reopened = try store.open()
        var configuration = RestorationConfiguration(
            bundleVersion: "1", interfaceIdiom: "desktop", systemVersion: "6.8", logger: logs.logger)
        configuration.metricsFactory = metrics
        let manager = RestorationManager(journal: reopened, configuration: configuration)
        manager.delegate = delegate
        manager.register(restorationClass: OtherNodeFactory.self)
        return Fixture(store: store, manager: manager, delegate: delegate, journal: reopened)
    }

    @Test func theDefaultLoggerDiscardsEverything() {
        let configuration = RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop")
        #expect(configuration.logger.handler is SwiftLogNoOpLogHandler)
    }

    @Test func skippedObjectsAreLoggedWithTheirReasonAndCounted() throws {
        let logs = CapturedLogs()
        let metrics = TestMetrics()
        let fixture = try reopened(
            saving: [Node("Main", children: [Node("Gone"), Node("AlsoGone")])], logs: logs, metrics: metrics)
        let report = try fixture.manager.restoreState(roots: [Node("Main")])
        try fixture.journal.close()
        withExtendedLifetime(fixture) {}

        #expect(report.skipped.count == 2)
        let notices = logs.entries(.notice, containing: "Skipped")
        #expect(notices.map { $0.metadata["path"] } == [.string("Main/AlsoGone"), .string("Main/Gone")])
        #expect(notices.allSatisfy { $0.metadata["reason"] == .string("\(RestorationSkipReason.notFound)") })
        #expect(try metrics.expectCounter("statejournal_restoration_skips").totalValue == 2)
    }

    @Test func aClassMismatchIsLoggedAsAWarning() throws {
        let child = SubNode("Child", value: 4)
        child.restorationType = OtherNodeFactory.self
        let logs = CapturedLogs()
        let fixture = try reopened(
            saving: [Node("Main", children: [child])], logs: logs, metrics: TestMetrics())
        try fixture.manager.restoreState(roots: [Node("Main")])
        try fixture.journal.close()
        withExtendedLifetime(fixture) {}

        let warning = try #require(logs.entries(.warning, containing: "another class").first)
        #expect(warning.metadata["path"] == "Main/Child")
        #expect(warning.metadata["saved_type"] == "StateRestorationTests.SubNode")
        #expect(warning.metadata["obtained_type"] == "StateRestorationTests.OtherNode")
    }

    @Test func aRestorationWithoutSkipsLogsOnlyItsSummary() throws {
        let logs = CapturedLogs()
        let metrics = TestMetrics()
        let fixture = try reopened(saving: [Node("Main", value: 3)], logs: logs, metrics: metrics)
        try fixture.manager.restoreState(roots: [Node("Main")])
        try fixture.journal.close()
        withExtendedLifetime(fixture) {}

        #expect(logs.all.map(\.level) == [.info])
        #expect(logs.all.first?.metadata["restored"] == "1")
        #expect(try metrics.expectCounter("statejournal_restoration_skips").totalValue == 0)
    }
}
