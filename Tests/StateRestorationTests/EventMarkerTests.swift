import Foundation
import StateJournal
import StateRestoration
import Testing

/// A replication term's start is committed as a marker epoch (no entries) on a promoted store. The
/// restoration that follows restores the state before it, with the bundle version and idiom that
/// saved it, whatever compaction folded.
@Suite struct EventMarkerTests {
    static let termMarker = [
        EventMarkerKey.event: EventMarkerKind.replicaTermBegan.rawValue,
        EventMarkerKey.term: "2", EventMarkerKey.previousTerm: "1", EventMarkerKey.takenOver: "0",
    ]

    /// Preserves `value`, optionally restores once (leaving restoration markers), commits a term
    /// marker, optionally compacts, then relaunches and restores.
    static func restoreAfterMarker(value: Int, restoreFirst: Bool, compact: Bool) throws -> (
        restored: Int?, report: RestorationReport, delegate: TestDelegate, preserved: UInt64
    ) {
        let store = TestStore()
        let options = JournalOptions(durability: .none, compaction: .manual)
        var journal = try Journal.open(at: store.url, options: options)
        var delegate = TestDelegate()
        var manager = store.manager(journal, delegate: delegate, bundleVersion: "7", idiom: "pad")
        let main = Node("Main", children: [Node("Inbox")])
        main.children[0].value = value
        try manager.preserveState(roots: [main])
        let preserved = try #require(journal.lastCommitted?.epoch)
        if restoreFirst {
            try journal.close()
            journal = try Journal.open(at: store.url, options: options)
            delegate = TestDelegate()
            manager = store.manager(journal, delegate: delegate, bundleVersion: "7", idiom: "pad")
            try manager.restoreState(roots: [Node("Main", children: [Node("Inbox")])])
        }
        try journal.close()

        // What a promotion does: open the store, commit the marker, close.
        let promoted = try Journal.open(at: store.url, options: options)
        let copied = promoted.lastCommitted?.metadata ?? [:]
        let marker = try promoted.commit([], metadata: copied.merging(termMarker) { $1 })
        #expect(marker.isEventMarker && marker.eventMarkerKind == .replicaTermBegan)
        if compact { _ = try promoted.compact() }
        try promoted.close()

        journal = try Journal.open(at: store.url, options: options)
        defer { try? journal.close() }
        let lastDelegate = TestDelegate()
        manager = store.manager(journal, delegate: lastDelegate, bundleVersion: "7", idiom: "pad")
        let restored = Node("Main", children: [Node("Inbox")])
        let report = try manager.restoreState(roots: [restored])
        let inbox = report.restored.contains { $0.path == RestorationPath(["Main", "Inbox"]) && $0.decoded }
        return (inbox ? restored.children[0].value : nil, report, lastDelegate, preserved)
    }

    @Test(arguments: [false, true], [false, true])
    func aRestorationAfterATermMarkerRestoresTheStateBeforeItWithItsBundleVersionAndIdiom(
        restoreFirst: Bool, compact: Bool
    ) throws {
        let (value, report, delegate, preserved) = try Self.restoreAfterMarker(
            value: 42, restoreFirst: restoreFirst, compact: compact)
        #expect(value == 42)
        #expect(report.outcome == .restored)
        #expect(delegate.lastRestoreCoder?.bundleVersion == "7", "the saved bundle version, not the marker's none")
        #expect(delegate.lastRestoreCoder?.idiom == "pad")
        if !compact {
            #expect(report.epoch?.isEventMarker == false, "the marker is passed over, not restored as the state")
            if !restoreFirst { #expect(report.epoch?.epoch == preserved) }
        }
    }

    @Test func anEpochThatWroteEntriesIsNeverAMarkerWhateverItsMetadataSays() throws {
        let store = TestStore()
        let journal = try Journal.open(at: store.url, options: JournalOptions(durability: .none))
        defer { try? journal.close() }
        let forged = try journal.commit([.put(RestorationPath("Main"), [1])], metadata: Self.termMarker)
        #expect(!forged.isEventMarker && forged.eventMarkerKind == nil)
        let unknown = try journal.commit([], metadata: [EventMarkerKey.event: "somethingLater"])
        #expect(unknown.isEventMarker && unknown.eventMarkerKind == nil)
    }

    @Test func aTermMarkerAfterAnUnfinishedRestorationDoesNotCountAsASecondAttempt() throws {
        final class Extender: TestDelegate {
            weak var manager: RestorationManager?
            override func didDecodeRestorableState(_ coder: RestorationCoder) { manager?.extendStateRestoration() }
        }
        let store = TestStore()
        let options = JournalOptions(durability: .none, compaction: .manual)
        let saved: UInt64
        do {
            let journal = try Journal.open(at: store.url, options: options)
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            saved = try #require(try manager.preserveState(roots: [Node("Main", value: 5)]).epoch).epoch
            try journal.close()
            withExtendedLifetime(delegate) {}
        }
        do {
            // The primary began a restoration and died before it completed; its last shipped epoch
            // is the restoration's begin marker, which the term marker copies.
            let journal = try Journal.open(at: store.url, options: options)
            let delegate = Extender()
            let manager = store.manager(journal, delegate: delegate)
            delegate.manager = manager
            try manager.restoreState(roots: [Node("Main")])
            try journal.close()
        }
        let promoted = try Journal.open(at: store.url, options: options)
        _ = try promoted.commit([], metadata: (promoted.lastCommitted?.metadata ?? [:]).merging(Self.termMarker) { $1 })
        try promoted.close()

        let journal = try Journal.open(at: store.url, options: options)
        defer { try? journal.close() }
        let main = Node("Main")
        let delegate = TestDelegate()
        let report = try store.manager(journal, delegate: delegate).restoreState(roots: [main])
        withExtendedLifetime(delegate) {}
        #expect(report.reason == .launch)
        #expect(report.diagnostics == [.unfinishedRestoration(epoch: saved, attempts: 1)])
        #expect(main.value == 5)
    }
}
