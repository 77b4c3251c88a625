import ArgumentParser
import Foundation
import StateJournalComparison

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Compare the journal with the alternatives, side by side in one run."
    )

    @Flag(help: "Print the figures as JSON.")
    var json = false

    func run() throws {
        var results: [CompressionComparison.Result] = []
        for scenario in CompressionComparison.standardScenarios {
            results.append(try CompressionComparison.measure(scenario))
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(results), as: UTF8.self))
            return
        }
        print("Bytes on disk: the journal against lz4 -1 of the same entries concatenated")
        print(
            "scenario".padding(toLength: 44, withPad: " ", startingAt: 0), "entries".leftPadded(8), "raw states".leftPadded(11),
            "journal".leftPadded(10), "lz4 states".leftPadded(11), "ratio".leftPadded(6), "lz4 entries".leftPadded(12),
            "ratio".leftPadded(6))
        for result in results {
            print(
                result.scenario.padding(toLength: 44, withPad: " ", startingAt: 0),
                String(result.entries).leftPadded(8), String(result.rawStateBytes).leftPadded(11),
                String(result.journalBytes).leftPadded(10), String(result.lz4Bytes).leftPadded(11),
                String(format: "%.3f", result.ratioToLZ4).leftPadded(6), String(result.lz4EntryBytes).leftPadded(12),
                String(format: "%.3f", result.ratioToLZ4Entries).leftPadded(6))
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
