import Foundation
import StateJournalTestSupport

/// Runs the built `statejournal` binary, as a user would.
struct ToolRunner {
    /// The binary next to the test bundle, in the build's products directory.
    static let binary = BuiltExecutable.url(of: "statejournal")

    typealias Output = ChildResult

    /// Runs the tool to completion.
    @discardableResult
    static func run(_ arguments: [String]) throws -> Output {
        try run(executable: binary, arguments)
    }

    /// Runs the tool as the unprivileged user `nobody` (through util-linux's `runuser`), for what a
    /// process running as root cannot be refused.
    @discardableResult
    static func runAsNobody(_ arguments: [String]) throws -> Output {
        try run(executable: URL(fileURLWithPath: "/usr/sbin/runuser"), ["-u", "nobody", "--", binary.path] + arguments)
    }

    private static func run(executable: URL, _ arguments: [String]) throws -> Output {
        try runChild(executable, arguments)
    }

    /// Parses JSON output.
    static func json(_ output: Output) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8))
    }

    /// The `epochs` of `log --json` or `history --json` output.
    static func epochs(_ output: Output) throws -> [[String: Any]] {
        (try json(output) as? [String: Any])?["epochs"] as? [[String: Any]] ?? []
    }
}
