import Foundation
import StateJournal
import StateRestoration
import Testing

/// A restoration class no test manager registers.
private enum UnregisteredFactory: ControllerRestoration {
    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        Node(identifierComponents.last)
    }
}

/// The `restorationCompleted` marker records the restoration's report
/// (`EpochMetadataKey.restorationReport`), bounded in size.
@Suite struct RecordedReportTests {
    /// The report the last epoch of the journal records.
    func recordedReport(_ journal: Journal) throws -> (RecordedRestorationReport, EpochInfo) {
        let marker = try #require(try journal.history().last)
        #expect(marker.metadata[EpochMetadataKey.kind] == RestorationEpochKind.restorationCompleted.rawValue)
        let text = try #require(marker.metadata[EpochMetadataKey.restorationReport])
        return (try RecordedRestorationReport(decoding: text), marker)
    }

    @Test func theCompletedMarkerRecordsWhatWasRestoredSkippedAndWhy() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate, bundleVersion: "1")
            let declined = Node("Declined", children: [Node("Below")])
            declined.restorationType = DecliningFactory.self
            let unregistered = Node("Unregistered")
            unregistered.restorationType = UnregisteredFactory.self
            let mismatch = SubNode("Mismatch", value: 4)
            mismatch.restorationType = OtherNodeFactory.self
            let migrated = Node("Migrated", value: 3)
            migrated.restorationType = NodeFactory.self
            let failing = Node("Tab\tbed\\name", value: 1)
            try manager.preserveState(roots: [
                Node("Main", children: [declined, unregistered, mismatch, migrated, failing])
            ])
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate, bundleVersion: "2")
        manager.registerMigration(for: NodeFactory.self) { state in state.values["value"] = .int(30) }
        let failing = Node("Tab\tbed\\name")
        failing.failDecoding = true
        let report = try manager.restoreState(roots: [Node("Main", children: [failing])])
        let (recorded, marker) = try recordedReport(journal)

        #expect(recorded == RecordedRestorationReport(report))
        #expect(!recorded.isTruncated)
        #expect(recorded.epoch == 1)
        #expect(recorded.reason == .launch)
        #expect(recorded.restoredCount == report.restored.count && recorded.skippedCount == 3)
        let skipped = Dictionary(uniqueKeysWithValues: recorded.skipped.map { ($0.path.description, $0) })
        #expect(skipped["Main/Declined"]?.reason == "declined")
        #expect(skipped["Main/Declined/Below"]?.reason == "ancestorDeclined")
        #expect(skipped["Main/Declined/Below"]?.detail == "Main/Declined")
        #expect(skipped["Main/Unregistered"]?.reason == "unregistered")
        #expect(skipped["Main/Unregistered"]?.detail.hasSuffix("UnregisteredFactory") == true)
        let restored = Dictionary(uniqueKeysWithValues: recorded.restored.map { ($0.path, $0) })
        #expect(restored[RestorationPath("Main", "Migrated")]?.migrated == true)
        #expect(restored[RestorationPath("Main", "Migrated")]?.source == .restorationClass)
        #expect(restored[RestorationPath("Main", "Mismatch")]?.decoded == false)
        #expect(restored[RestorationPath("Main")]?.migrated == false)
        let codes = Set(recorded.diagnostics.map(\.code))
        #expect(codes.isSuperset(of: ["classMismatch", "decodeFailed"]))
        // Tabs and backslashes in a path survive the encoding.
        #expect(recorded.diagnostics.contains { $0.path == RestorationPath("Main", "Tab\tbed\\name") })
        #expect(report.restored.first { $0.path == RestorationPath("Main", "Migrated") }?.migrated == true)
        #expect(marker.bytes < 2048)
    }

    @Test func aReportOfAHundredThousandSkippedObjectsIsCappedAndKeepsItsCounts() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let main = Node("Main", children: (0..<100_000).map { Node("Item-\($0)", value: $0) })
            main.restorationType = UnregisteredFactory.self
            try manager.preserveState(roots: [main])
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let report = try manager.restoreState(roots: [])
        #expect(report.skipped.count == 100_001)
        let (recorded, marker) = try recordedReport(journal)
        let text = try #require(marker.metadata[EpochMetadataKey.restorationReport])
        #expect(text.utf8.count <= RecordedRestorationReport.maximumEncodedSize)
        #expect(recorded.skippedCount == 100_001)
        #expect(recorded.isTruncated)
        #expect(!recorded.skipped.isEmpty && recorded.skipped.count < 1_000)
        #expect(recorded.skipped.first?.path == RestorationPath("Main"))
        #expect(marker.bytes < 12_000)
    }

    @Test func aReportInAnotherFormatNumberIsRefusedAndUnknownLinesAreIgnored() throws {
        #expect(throws: RestorationError.self) { try RecordedRestorationReport(decoding: "SJRR\t2\nepoch\t3\n") }
        #expect(throws: RestorationError.self) { try RecordedRestorationReport(decoding: "hello") }
        let report = try RecordedRestorationReport(
            decoding:
                "SJRR\t1\nepoch\t3\nreason\tcrashLoopFallback\t5\ncounts\t0\t1\t0\nfuture\tline\ns\tnotFound\t\t\tA/B\n"
        )
        #expect(report.epoch == 3)
        #expect(report.reason == .crashLoopFallback(avoidedEpoch: 5))
        #expect(report.skipped.map(\.path) == [RestorationPath("A", "B")])
        #expect(report.skipped.first?.savedTypeName == nil)
    }
}
