import Foundation
import StateJournalTestSupport
import Testing

/// `statejournal demo`, and the read commands on the store the example app leaves.
@Suite struct DemoTests {
    @Test func theDemoPreservesIsKilledRestoresAndShowsItsHistory() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("demo")
        let run = try ToolRunner.run(["demo", "--dir", store])
        #expect(run.status == 0, "\(run.standardError)")
        let output = run.standardOutput
        #expect(output.contains("Store: \(store)"))
        #expect(output.contains("is killed with SIGKILL"))
        #expect(output.contains("Restored epoch"))
        #expect(!output.contains("DIFFERENT"))
        #expect(!output.contains("LOST"))
        #expect(output.contains("restorationCompleted"))
        #expect(output.split(separator: "\n").count <= 45, "the demo should fit on one screen")
        #expect(try ToolRunner.run(["verify", store]).status == 0)
    }

    @Test func theReadCommandsRenderExampleAppStateWithoutItsTypes() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("demo")
        #expect(try ToolRunner.run(["demo", "--dir", store]).status == 0)

        let shown = try ToolRunner.json(try ToolRunner.run(["show", store, "--json"])) as! [String: Any]
        let objects = shown["objects"] as! [String: [String: Any]]
        let navigation = try #require(objects["Main"])
        #expect((navigation["type"] as? String)?.hasSuffix("MailNavigationController") == true)
        let stackValue = (navigation["state"] as? [String: Any])?["stack"] as? [String: Any]
        let stack = stackValue?["value"] as? [[String: String]]
        #expect(stack?.first == ["type": "reference", "value": "Main/Mailboxes"])
        #expect((shown["metadata"] as? [String: String])?["bundleVersion"] == "42")

        let log = try ToolRunner.epochs(try ToolRunner.run(["log", store, "--json"]))
        #expect(log.count >= 10)
        let diff = try ToolRunner.json(try ToolRunner.run(["diff", store, "1", "10", "--json"])) as! [String: Any]
        let changed = diff["changed"] as? [String: [String: Any]] ?? [:]
        #expect(changed.values.contains { $0["keys"] != nil } || !(diff["added"] as? [String: Any] ?? [:]).isEmpty)
        let history = try ToolRunner.run(["history", store, "Main/Session", "--json"])
        #expect(history.status == 0)
        let text = try ToolRunner.run(["show", store, "--path", "Main"])
        #expect(text.standardOutput.contains("MailNavigationController"))
    }
}

/// What the demo suggests runs, on paths and epochs that exist.
@Suite struct DemoSuggestionTests {
    @Test func everyCommandTheDemoSuggestsSucceedsOnTheStoreItLeft() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("demo")
        let run = try ToolRunner.run(["demo", "--dir", store])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(!run.standardOutput.contains("(statejournal log \(store)):"), "the abridged table is not log's output")
        let suggested = run.standardOutput.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("statejournal ") }
        #expect(suggested.count >= 4)
        for line in suggested {
            // The command, without a remark after it.
            let command = line.components(separatedBy: "  ").first!
            let arguments = command.split(separator: " ").dropFirst().map(String.init)
            let result = try ToolRunner.run(arguments)
            #expect(result.status == 0, "\(line): \(result.standardError)")
            #expect(!result.standardOutput.isEmpty, "\(line)")
        }
    }
}
