import Foundation
import Logging
import MetricsTestKit
import StateJournal
import StateJournalTestSupport
import Testing

/// The journal's logs and metrics: emitted where the documentation says, through the logger and the
/// metrics factory of its options.
@Suite struct ObservabilityTests {
    private func options(_ logs: CapturedLogs, _ metrics: TestMetrics, durability: Durability = .none) -> JournalOptions
    {
        var options = testOptions(durability: durability)
        options.logger = logs.logger
        options.metricsFactory = metrics
        return options
    }

    @Test func theDefaultLoggerDiscardsEverything() {
        #expect(JournalOptions().logger.handler is SwiftLogNoOpLogHandler)
    }

    @Test func commitsCountEpochsAndBytesAndTimeThemselves() throws {
        let directory = TemporaryDirectory()
        let metrics = TestMetrics()
        let journal = try openJournal(directory.appending("store"), options(CapturedLogs(), metrics))
        var bytes: Int64 = 0
        for value in 0..<3 {
            bytes += Int64(try journal.commit([.put(RestorationPath("Main"), [UInt8(value)])]).bytes)
        }
        try journal.close()
        #expect(try metrics.expectCounter("statejournal_epochs_committed").totalValue == 3)
        #expect(try metrics.expectCounter("statejournal_bytes_appended").totalValue == bytes)
        #expect(try metrics.expectTimer("statejournal_commit_duration").values.count == 3)
        #expect(try metrics.expectTimer("statejournal_replay_duration").values.count == 1)
    }

    @Test func anIntactStoreOpensWithoutLogging() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        try openJournal(store).close()
        let logs = CapturedLogs()
        try openJournal(store, options(logs, TestMetrics())).close()
        #expect(logs.all.isEmpty)
    }

    @Test func cuttingATornTailIsLoggedAsANotice() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store, realFileSystem: true)
        try journal.commit([.put(RestorationPath("Main"), [1])])
        try journal.close()
        try Corruption.append(
            store + "/" + (try Corruption.segmentNames(in: store)).last!, Corruption.garbage(7, seed: 3))

        let logs = CapturedLogs()
        try openJournal(store, options(logs, TestMetrics()), realFileSystem: true).close()
        let notices = logs.entries(.notice, containing: "torn tail")
        #expect(notices.count == 1)
        #expect(notices.first?.metadata["bytes"] == "7")
        #expect(notices.first?.metadata["statejournal_store"] == .string(store))
    }

    @Test func damageSetAsideIsLoggedAsAWarningWithFileAndOffset() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        // Under everyCommit each commit says the epochs before it were synced: damage there is damage.
        let journal = try openJournal(store, testOptions(durability: .everyCommit), realFileSystem: true)
        for value in 0..<3 { try journal.commit([.put(RestorationPath("Main", "\(value)"), [UInt8(value)])]) }
        try journal.close()
        let segment = store + "/" + (try Corruption.segmentNames(in: store)).last!
        let second = Corruption.records(ofSegment: try Corruption.readFile(segment))[1]
        try Corruption.flipByte(segment, at: second.offset + second.length - 1)

        let logs = CapturedLogs()
        let reopened = try openJournal(store, options(logs, TestMetrics()), realFileSystem: true)
        let damage = try #require(reopened.recoveryReport.damage)
        try reopened.close()
        let warning = try #require(logs.entries(.warning, containing: "damage").first)
        #expect(warning.metadata["file"] == .string(damage.file))
        #expect(warning.metadata["offset"] == .string("\(damage.offset)"))
        #expect(warning.metadata["quarantined"] == .array(reopened.recoveryReport.quarantinedFiles.map { .string($0) }))
    }

    @Test func anUnsyncedTailCutIsLoggedAsANoticeNotAWarning() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store, realFileSystem: true)
        for value in 0..<3 { try journal.commit([.put(RestorationPath("Main", "\(value)"), [UInt8(value)])]) }
        try journal.close()
        // Under `none` nothing after the header was synced: a bad record is where a power cut stopped.
        let segment = store + "/" + (try Corruption.segmentNames(in: store)).last!
        let second = Corruption.records(ofSegment: try Corruption.readFile(segment))[1]
        try Corruption.flipByte(segment, at: second.offset + second.length - 1)

        let logs = CapturedLogs()
        let reopened = try openJournal(store, options(logs, TestMetrics()), realFileSystem: true)
        let tail = try #require(reopened.recoveryReport.unsyncedTail)
        try reopened.close()
        #expect(logs.entries(.warning, containing: "").isEmpty)
        let notice = try #require(logs.entries(.notice, containing: "unsynced tail").first)
        #expect(notice.metadata["offset"] == .string("\(tail.offset)"))
        #expect(notice.metadata["last_consistent_epoch"] == "1")
    }

    @Test func leftoversRemovedOnOpenAreLoggedAsANotice() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        try openJournal(store, realFileSystem: true).close()
        try Corruption.writeFile(store + "/MANIFEST.tmp", [1, 2, 3])

        let logs = CapturedLogs()
        try openJournal(store, options(logs, TestMetrics()), realFileSystem: true).close()
        let notice = try #require(logs.entries(.notice, containing: "left behind").first)
        #expect(notice.metadata["files"] == .array([.string("MANIFEST.tmp")]))
    }

    @Test func aCompactionIsLoggedAndCounted() throws {
        let directory = TemporaryDirectory()
        let logs = CapturedLogs()
        let metrics = TestMetrics()
        let journal = try openJournal(directory.appending("store"), options(logs, metrics))
        for value in 0..<3 { try journal.commit([.put(RestorationPath("Main"), [UInt8(value)])]) }
        let report = try #require(try journal.compact())
        try journal.close()
        let info = try #require(logs.entries(.info, containing: "Compacted").first)
        #expect(info.metadata["epoch"] == .string("\(report.checkpointEpoch)"))
        #expect(info.metadata["bytes"] == .string("\(report.checkpointBytes)"))
        #expect(try metrics.expectCounter("statejournal_compactions").totalValue == 1)
    }

    @Test func aFailedSyncThatPoisonsTheStoreIsLoggedAsAnError() throws {
        let directory = TemporaryDirectory()
        let logs = CapturedLogs()
        let fileSystem = FaultInjectingFileSystem(plan: FaultPlan(at: 1, of: [.dataSync], fault: .eio))
        let journal = try Journal.open(
            path: directory.appending("store"), options: options(logs, TestMetrics(), durability: .everyCommit),
            fileSystem: fileSystem)
        journalError(.storePoisoned) { try journal.commit([.put(RestorationPath("Main"), [1])]) }
        try? journal.close()
        #expect(logs.entries(.error, containing: "refuses further commits").count == 1)
    }
}
