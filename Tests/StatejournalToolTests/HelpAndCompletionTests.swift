import Foundation
import Testing

/// Shell completions and the manual come from swift-argument-parser, from the same definitions as
/// `--help`.
@Suite struct HelpAndCompletionTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScriptsNameEverySubcommandAndOption(shell: String) throws {
        let run = try ToolRunner.run(["--generate-completion-script", shell])
        #expect(run.status == 0, "\(run.standardError)")
        for word in ["statejournal", "history", "verify", "no-pager", "since", "color"] {
            #expect(run.standardOutput.contains(word), "\(shell): \(word)")
        }
    }

    @Test func theHelpDumpTheManualIsMadeFromHoldsEveryCommandAndTheExitStatuses() throws {
        // `swift package generate-manual` runs the tool with this flag and writes mdoc from it.
        let run = try ToolRunner.run(["--experimental-dump-help"])
        #expect(run.status == 0, "\(run.standardError)")
        let dump = try ToolRunner.json(run) as! [String: Any]
        let command = dump["command"] as! [String: Any]
        let names = (command["subcommands"] as! [[String: Any]]).compactMap { $0["commandName"] as? String }
        for name in ["demo", "log", "show", "diff", "history", "verify", "compact", "rewind", "soak", "bench"] {
            #expect(names.contains(name), "\(name)")
        }
        #expect((command["discussion"] as? String)?.contains("75  EX_TEMPFAIL") == true)
    }
}
