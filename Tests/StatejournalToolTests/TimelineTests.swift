import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// `statejournal timeline`: the model its page embeds, read back from the page.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct TimelineTests {
    /// The page for `store`, and the model it embeds.
    func timeline(_ store: String, _ extra: [String] = []) throws -> (page: String, model: [String: Any]) {
        let output = store + ".html"
        let run = try ToolRunner.run(["timeline", store, "--html", output] + extra)
        #expect(run.status == 0, "\(run.standardError)")
        let page = try String(contentsOfFile: output, encoding: .utf8)
        let open = #"<script type="application/json" id="timeline-model">"#
        let start = try #require(page.range(of: open)).upperBound
        let end = try #require(page.range(of: "</script>", range: start..<page.endIndex)).lowerBound
        let model = try JSONSerialization.jsonObject(with: Data(page[start..<end].utf8)) as! [String: Any]
        return (page, model)
    }

    func epochs(_ model: [String: Any]) -> [String: Any] { model["epochs"] as! [String: Any] }

    /// The kind names of each epoch, in order.
    func kinds(_ model: [String: Any]) -> [String] {
        let names = model["kinds"] as! [String]
        return (epochs(model)["k"] as! [Int]).map { names[$0] }
    }

    func demoStore(_ directory: TemporaryDirectory) throws -> String {
        let store = directory.appending("demo")
        let run = try ToolRunner.run(["demo", "--dir", store])
        #expect(run.status == 0, "\(run.standardError)")
        return store
    }

    @Test func everyRetainedEpochAppearsOnTheTimelineWithItsBytes() throws {
        let directory = TemporaryDirectory()
        let store = try demoStore(directory)
        let log = try ToolRunner.epochs(try ToolRunner.run(["log", store, "--json"]))
        let (_, model) = try timeline(store)
        #expect(epochs(model)["n"] as? [Int] == log.map { $0["epoch"] as! Int })
        #expect(epochs(model)["b"] as? [Int] == log.map { $0["bytes"] as! Int })
        #expect(epochs(model)["c"] as? [Int] == log.map { $0["entries"] as! Int })
    }

    @Test func theDemoWritesItsTimelineAndSaysWhere() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("demo")
        let run = try ToolRunner.run(["demo", "--dir", store])
        #expect(run.status == 0)
        #expect(run.standardOutput.contains(store + "-timeline.html"))
        #expect(FileManager.default.fileExists(atPath: store + "-timeline.html"))
        #expect(try ToolRunner.run(["verify", store]).status == 0)
    }

    @Test func epochsAreClassifiedAsPassesCheckpointsMarkersDiscardsAndRewinds() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try Journal.open(
            at: URL(fileURLWithPath: store),
            options: JournalOptions(
                durability: .none, retention: RetentionPolicy(checkpoints: 3),
                compaction: .manual))
        let main = RestorationPath("Main")
        try journal.commit([.put(main, Array("1".utf8))], metadata: ["kind": "preservation"])
        _ = try journal.compact()
        try journal.commit([.put(main, Array("2".utf8))], metadata: ["kind": "preservation"])
        try journal.commit([], metadata: ["kind": "restorationBegan", "restoringEpoch": "2"])
        try journal.commit([], metadata: ["kind": "restorationCompleted", "restoringEpoch": "2"])
        try journal.commit([.removeAll], metadata: ["kind": "discard"])
        try journal.commit([.put(main, Array("3".utf8))], metadata: [:])
        try journal.close()
        let (_, model) = try timeline(store)
        #expect(
            kinds(model) == ["checkpoint", "pass", "restorationBegan", "restorationCompleted", "discard", "commit"])
        let compactions = model["compactions"] as! [[String: Any]]
        #expect(compactions.map { $0["epoch"] as? Int } == [1])

        let rewound = directory.appending("rewound")
        #expect(try ToolRunner.run(["rewind", store, "--epoch", "2", "--into", rewound]).status == 0)
        let (_, rewoundModel) = try timeline(rewound)
        #expect(kinds(rewoundModel) == ["rewind"])
        #expect((rewoundModel["markers"] as! [[String: Any]]).map { $0["type"] as? String } == ["rewound"])
    }

    @Test func aRemovedPathGetsACrossAtTheEpochThatRemovedItAndEveryChangeADot() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try Journal.open(at: URL(fileURLWithPath: store), options: JournalOptions(durability: .none))
        let (inbox, compose, draft) = (
            RestorationPath("Main", "Inbox"), RestorationPath("Main", "Compose"),
            RestorationPath("Main", "Compose", "Draft")
        )
        try journal.commit([.put(inbox, [1]), .put(compose, [1]), .put(draft, [1])])
        try journal.commit([.put(inbox, [2]), .remove(compose)])
        try journal.commit([.removeAll])
        try journal.commit([.put(compose, [3])])
        try journal.close()
        let (_, model) = try timeline(store)
        let paths = model["paths"] as! [String: Any]
        let names = paths["name"] as! [String]
        let depth = paths["depth"] as! [Int]
        let start = paths["start"] as! [Int]
        let events = paths["events"] as! [Int]
        // Pre-order: Main (no state of its own), then Compose, Compose/Draft, Inbox.
        #expect(names == ["Main", "Compose", "Draft", "Inbox"])
        #expect(depth == [0, 1, 2, 1])
        #expect(paths["end"] as? [Int] == [4, 3, 3, 4])
        func marks(_ node: Int) -> [String] {
            events[start[node]..<start[node + 1]].map { ($0 & 1 == 1 ? "x" : "o") + String($0 >> 1) }
        }
        #expect(marks(0) == [])
        #expect(marks(1) == ["o0", "x1", "o3"])
        #expect(marks(2) == ["o0", "x2"])
        #expect(marks(3) == ["o0", "o1", "x2"])
        #expect(paths["firstVersion"] as? [Int] == [0, 0, 2, 3])
    }

    @Test func aTermMarkerIsDrawnAsATermStartNotAsTheEpochWhoseMetadataItCopies() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try Journal.open(at: URL(fileURLWithPath: store), options: JournalOptions(durability: .none))
        try journal.commit([.put(RestorationPath("Main"), [1])], metadata: ["kind": "preservation"])
        // The previous primary's last epoch: a catch-up pass after an outage, then a restoration that began.
        try journal.commit(
            [.removeAll, .put(RestorationPath("Main"), [2])],
            metadata: ["kind": "preservation", "outageStarted": "2026-01-01T00:00:00.000Z"])
        let began = ["kind": "restorationBegan", "restoringEpoch": "2"]
        try journal.commit([], metadata: began)
        // What a promotion commits: a copy of the previous epoch's metadata with the term's own.
        var marker = began
        marker[EventMarkerKey.event] = EventMarkerKind.replicaTermBegan.rawValue
        marker[EventMarkerKey.term] = "2"
        marker[EventMarkerKey.previousTerm] = "1"
        marker[EventMarkerKey.continuesFrom] = "3"
        marker[EventMarkerKey.takenOver] = "0"
        try journal.commit([], metadata: marker)
        try journal.commit([.put(RestorationPath("Main"), [3])], metadata: ["kind": "preservation"])
        try journal.close()
        let (page, model) = try timeline(store)
        #expect(kinds(model) == ["pass", "pass", "restorationBegan", "term", "pass"])
        let markers = model["markers"] as! [[String: Any]]
        let term = try #require(markers.first { $0["type"] as? String == "termBegan" })
        #expect(term["row"] as? Int == 3)
        #expect((term["text"] as? String)?.contains("epochs through 3 of term 1") == true)
        // One launch: the marker's copied restorationBegan does not begin another.
        #expect((model["launches"] as! [[String: Any]]).count == 1)
        #expect(page.contains("replication term began"))
    }

    @Test func aPassThatClearsTheStoreAndWritesAPathAgainShowsItChangedNotRemoved() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try Journal.open(at: URL(fileURLWithPath: store), options: JournalOptions(durability: .none))
        let (inbox, compose) = (RestorationPath("Inbox"), RestorationPath("Compose"))
        try journal.commit([.put(inbox, [1]), .put(compose, [1])])
        // A catch-up pass: the store cleared, the live objects written again.
        try journal.commit([.removeAll, .put(inbox, [2])], metadata: ["outageStarted": "2026-01-01T00:00:00.000Z"])
        // Written and removed in one epoch: removed.
        try journal.commit([.put(inbox, [3]), .remove(inbox)])
        try journal.close()
        let (_, model) = try timeline(store)
        let paths = model["paths"] as! [String: Any]
        let start = paths["start"] as! [Int]
        let events = paths["events"] as! [Int]
        #expect(paths["name"] as? [String] == ["Compose", "Inbox"])
        func marks(_ node: Int) -> [String] {
            events[start[node]..<start[node + 1]].map { ($0 & 1 == 1 ? "x" : "o") + String($0 >> 1) }
        }
        #expect(marks(0) == ["o0", "x1"])
        #expect(marks(1) == ["o0", "o1", "x2"])
    }

    @Test func theLaunchReportIsDecodedFromTheCompletedMarkerAndOlderMarkersSayNotRecorded() throws {
        let directory = TemporaryDirectory()
        let store = try demoStore(directory)
        let (page, model) = try timeline(store)
        let launches = model["launches"] as! [[String: Any]]
        let launch = try #require(launches.last)
        let report = try #require(launch["report"] as? [String: Any])
        #expect(report["reason"] as? String != nil)
        let restored = report["restored"] as! [[String]]
        #expect(report["restoredCount"] as? Int == restored.count)
        #expect(restored.contains { $0[0] == "Main" })
        #expect(page.contains("Report not recorded"))

        let old = directory.appending("old")
        let journal = try Journal.open(at: URL(fileURLWithPath: old), options: JournalOptions(durability: .none))
        try journal.commit([.put(RestorationPath("Main"), [1])], metadata: ["kind": "preservation"])
        try journal.commit([], metadata: ["kind": "restorationBegan", "restoringEpoch": "1"])
        try journal.commit([], metadata: ["kind": "restorationCompleted", "restoringEpoch": "1"])
        try journal.close()
        let (_, oldModel) = try timeline(old)
        let oldLaunch = try #require((oldModel["launches"] as! [[String: Any]]).first)
        #expect(oldLaunch["completed"] as? Int == 2)
        #expect(oldLaunch["report"] == nil)
    }

    @Test func thePageReferencesNothingOnTheNetwork() throws {
        let directory = TemporaryDirectory()
        let store = try demoStore(directory)
        let (page, _) = try timeline(store)
        #expect(!page.contains("http://"))
        #expect(!page.contains("https://"))
        #expect(!page.contains("src=\""))
        #expect(!page.contains("<link"))
    }

    @Test func theTemplateIsFilledOnceSoAStorePathThatLooksLikeAPlaceholderIsWrittenAsItIs() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("{{data}} & {{timeline.js}}")
        #expect(try ToolRunner.run(["demo", "--dir", store]).status == 0)
        let (page, model) = try timeline(store)
        #expect(model["store"] as? String == store)
        let title = store.replacingOccurrences(of: "&", with: "&amp;")
        #expect(page.contains("<title>StateJournal timeline · \(title)</title>"))
        #expect(page.components(separatedBy: "'use strict';").count == 2)
        #expect(page.components(separatedBy: #"id="timeline-model""#).count == 2)
        #expect(page.hasPrefix("<!DOCTYPE html>\n"))
        #expect(page.hasSuffix("</script>\n</body>\n</html>\n"))
    }

    @Test func aBigStoresPageStaysWithinItsBudgetAndLeavesOlderStatesOut() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("big")
        let run = try ToolRunner.run(["timeline-fixture", store, "--objects", "20000", "--epochs", "2500"])
        #expect(run.status == 0, "\(run.standardError)")
        let (page, model) = try timeline(store, ["--state-budget-megabytes", "1"])
        #expect((epochs(model)["n"] as! [Int]).count == 2500)
        let names = (model["paths"] as! [String: Any])["name"] as! [String]
        #expect(names.count > 20_000)
        let archive = model["archive"] as! [String: Any]
        let omitted = archive["omitted"] as! Int
        let rawBytes = archive["rawBytes"] as! Int
        #expect(omitted > 0)
        #expect(rawBytes < 2 << 20)
        #expect(page.utf8.count < 4 << 20, "\(page.utf8.count) bytes")
        #expect(kinds(model).first == "checkpoint")
        let markers = (model["markers"] as! [[String: Any]]).compactMap { $0["type"] as? String }
        #expect(markers.contains("crashLoopFallback") && markers.contains("unfinished"))
    }
}
