import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// `--json` is lossless and versioned: every document carries `schemaVersion`, integers are exact,
/// doubles stay doubles, `nil` stays `null`, and bytes and dates keep every bit.
@Suite struct JSONOutputTests {
    static let bigInteger: Int64 = (1 << 53) + 1
    static let date = Date(timeIntervalSinceReferenceDate: 812_345_678.123_456_7)

    /// A store with one restoration entry holding every kind of value, written at epoch 1 and
    /// changed at epoch 2.
    static func typedStore(_ directory: TemporaryDirectory) throws -> String {
        let store = directory.appending("typed")
        let journal = try Journal.open(at: URL(fileURLWithPath: store))
        var values: [String: RestorableValue] = [
            "big": .int(bigInteger), "small": .int(-42), "whole": .double(5.0), "half": .double(0.5),
            "nothing": .null, "bytes": .data(Data([0, 1, 254, 255])), "when": .date(date), "flag": .bool(true),
            "name": .string("Inbox \"1\"\n"), "parent": .reference(RestorationPath("Main")),
            "list": .array([.int(1), .double(1)]), "nested": .dictionary(["inner": .null]),
        ]
        let path = RestorationPath("Main", "Inbox")
        let entry = {
            RestorableEntry(kind: .controller, typeName: "Mail.Inbox", restorationClassName: nil, values: values)
        }
        try journal.commit(
            [.put(path, entry().encoded), .put(RestorationPath("Raw"), [0xFF, 0x00])], metadata: ["note": "a b=c"])
        values["whole"] = .double(6.0)
        values["nothing"] = nil
        try journal.commit([.put(path, entry().encoded)], metadata: [:])
        try journal.close()
        return store
    }

    @Test func everyJSONDocumentCarriesItsSchemaVersion() throws {
        let directory = TemporaryDirectory()
        let store = try Self.typedStore(directory)
        let commands: [[String]] = [
            ["log", store], ["show", store], ["diff", store, "1", "2"], ["history", store, "Main/Inbox"],
            ["verify", store],
            ["rewind", store, "--epoch", "1", "--into", directory.appending("rewound")], ["compact", store],
        ]
        for command in commands {
            let run = try ToolRunner.run(command + ["--json"])
            #expect(run.status == 0, "\(command): \(run.standardError)")
            let document = try #require(try ToolRunner.json(run) as? [String: Any], "\(command)")
            #expect(document["schemaVersion"] as? Int == 1, "\(command)")
        }
    }

    @Test func showKeepsIntegersExactDoublesTypedNullsAndBytes() throws {
        let directory = TemporaryDirectory()
        let store = try Self.typedStore(directory)
        let run = try ToolRunner.run(["show", store, "--epoch", "1", "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        // The text itself: a double keeps its fraction, a big integer is a string.
        #expect(run.standardOutput.contains(#""value": 5.0"#), "\(run.standardOutput)")
        #expect(run.standardOutput.contains(#""value": "9007199254740993""#))
        let shown = try ToolRunner.json(run) as! [String: Any]
        let objects = shown["objects"] as! [String: [String: Any]]
        let inbox = try #require(objects["Main/Inbox"])
        #expect(inbox["encoding"] as? String == "restoration")
        #expect(inbox["type"] as? String == "Mail.Inbox")
        #expect(inbox["restorationClass"] is NSNull)
        let state = inbox["state"] as! [String: [String: Any]]
        #expect(state["big"]?["type"] as? String == "int")
        #expect((state["big"]?["value"] as? String).flatMap { Int64($0) } == Self.bigInteger)
        #expect((state["small"]?["value"] as? NSNumber)?.int64Value == -42)
        #expect(state["whole"]?["type"] as? String == "double")
        #expect(state["nothing"]?["type"] as? String == "null")
        #expect(state["nothing"]?["value"] is NSNull)
        #expect(state["bytes"]?["type"] as? String == "data")
        #expect((state["bytes"]?["value"] as? String).flatMap { Data(base64Encoded: $0) } == Data([0, 1, 254, 255]))
        #expect(state["when"]?["type"] as? String == "date")
        #expect(
            (state["when"]?["timeIntervalSinceReferenceDate"] as? Double) == Self.date.timeIntervalSinceReferenceDate)
        #expect((state["when"]?["value"] as? String)?.hasSuffix("Z") == true)
        #expect(state["parent"]?["type"] as? String == "reference")
        #expect(state["name"]?["value"] as? String == "Inbox \"1\"\n")
        let list = state["list"]?["value"] as? [[String: Any]]
        #expect(list?.map { $0["type"] as? String } == ["int", "double"])
        // Bytes that are not the restoration encoding nor text: base64, with their encoding.
        let raw = try #require(objects["Raw"])
        #expect(raw["encoding"] as? String == "bytes")
        #expect((raw["state"] as? String).flatMap { Data(base64Encoded: $0) } == Data([0xFF, 0x00]))
        #expect(raw["type"] is NSNull)
        #expect(shown["damage"] is NSNull)
    }

    @Test func diffTellsAnAbsentKeyFromANullValueAndKeepsTheDoublesType() throws {
        let directory = TemporaryDirectory()
        let store = try Self.typedStore(directory)
        let run = try ToolRunner.run(["diff", store, "1", "2", "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let diff = try ToolRunner.json(run) as! [String: Any]
        let changed = diff["changed"] as! [String: [String: Any]]
        let keys = try #require(changed["Main/Inbox"]?["keys"] as? [String: [String: Any]])
        #expect(keys["nothing"]?["old"] as? [String: NSObject] == ["type": "null" as NSString, "value": NSNull()])
        #expect(keys["nothing"]?["new"] is NSNull)
        #expect(
            keys["whole"]?["old"] as? [String: NSObject] == ["type": "double" as NSString, "value": 5.0 as NSNumber])
        #expect(run.standardOutput.contains(#""value": 6.0"#))
    }

    @Test func historyAndLogUseTheSameEpochObjects() throws {
        let directory = TemporaryDirectory()
        let store = try Self.typedStore(directory)
        let history =
            try ToolRunner.json(try ToolRunner.run(["history", store, "Main/Inbox", "--json"])) as! [String: Any]
        #expect(history["path"] as? String == "Main/Inbox")
        let rows = history["epochs"] as! [[String: Any]]
        #expect(rows.map { ($0["epoch"] as? NSNumber)?.intValue } == [1, 2])
        #expect(rows.allSatisfy { $0["removed"] as? Bool == false && $0["value"] is [String: Any] })
        let log = try ToolRunner.epochs(try ToolRunner.run(["log", store, "--json"]))
        #expect(log.map { $0["timestamp"] as? String } == rows.map { $0["timestamp"] as? String })
        #expect((log[0]["metadata"] as? [String: String])?["note"] == "a b=c")
    }
}
