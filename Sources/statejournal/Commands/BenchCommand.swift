import ArgumentParser
import Foundation
import StateJournalComparison

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Compare the journal with the alternatives, side by side in one run.",
        discussion: """
            Saves and restores the same generated app state with the journal (under each durability policy), \
            whole JSON and binary property-list snapshots, and SQLite in WAL mode, next to the raw cost of write, \
            fdatasync and LZ4, and prints each figure with its ratio against the journal. Run it from a release build.
            """
    )

    @Flag(help: "Measure smaller states with fewer passes, in under a minute.")
    var quick = false

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Option(help: .hidden)
    var probeRestore: String?

    @Argument(help: .hidden)
    var probePath: String?

    func validate() throws {
        if probeRestore == nil && probePath != nil {
            throw ValidationError("bench takes no arguments; run it as 'statejournal bench [--quick] [--json]'.")
        }
        if let probeRestore, RestoreProbe.Kind(rawValue: probeRestore) == nil || probePath == nil {
            throw ValidationError(
                "--probe-restore takes one of \(RestoreProbe.Kind.allCases.map(\.rawValue)) and a path.")
        }
    }

    func run() throws {
        StandardStream.prepare()
        if let probeRestore, let kind = RestoreProbe.Kind(rawValue: probeRestore), let probePath {
            print(try RestoreProbe.runChild(kind: kind, path: probePath))
            return
        }
        let showProgress = isatty(STDERR_FILENO) == 1
        let report = try Bench.run(
            plan: quick ? .quick : .full, probeCommand: Self.probeCommand(),
            progress: { message in
                if showProgress { StandardStream.writeError("\r\u{1B}[K\(message)") }
            })
        if showProgress { StandardStream.writeError("\r\u{1B}[K") }
        if json {
            try printJSON(report)
        } else {
            print(report.text)
        }
    }

    /// This executable, run as a restore probe: `statejournal bench --probe-restore KIND PATH`.
    private static func probeCommand() -> [String]? {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            return nil
        }
        return [executable, "bench", "--probe-restore"]
    }
}
