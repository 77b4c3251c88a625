import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Times and epochs given back to the tool as it printed them.
@Suite struct TimeAndEpochArgumentTests {
    @Test func showAtTakesBackEveryTimestampThatLogPrintsAndFindsThatEpoch() throws {
        let directory = TemporaryDirectory()
        let (store, _) = try ReadCommandTests.soakedStore(directory)
        let epochs = try ToolRunner.epochs(try ToolRunner.run(["log", store, "--json"]))
        // Every timestamp carries its milliseconds, in JSON as in the table.
        let stamps = epochs.map { $0["timestamp"] as! String }
        #expect(stamps.allSatisfy { $0.range(of: #"T\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil })
        let table = try ToolRunner.run(["log", store]).standardOutput
        #expect(table.contains(stamps.last!))
        // Epochs committed within the same millisecond share a stamp: --at finds the last of them.
        var lastAtStamp: [String: UInt64] = [:]
        for epoch in epochs { lastAtStamp[epoch["timestamp"] as! String] = (epoch["epoch"] as! NSNumber).uint64Value }
        for stamp in Set(stamps).sorted().prefix(20) {
            let run = try ToolRunner.run(["show", store, "--at", stamp, "--json"])
            #expect(run.status == 0, "\(stamp): \(run.standardError)")
            let shown = try ToolRunner.json(run) as! [String: Any]
            #expect((shown["epoch"] as! NSNumber).uint64Value == lastAtStamp[stamp], "\(stamp)")
            #expect(shown["timestamp"] as? String == stamp)
        }
        // Without fractions too, as ISO 8601 times are often written: the whole second after the
        // last epoch finds it.
        let last = try Date(stamps.last!, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        let whole = last.addingTimeInterval(1).formatted(.iso8601)
        let run = try ToolRunner.run(["show", store, "--at", whole, "--json"])
        #expect(run.status == 0, "\(whole): \(run.standardError)")
        #expect(
            ((try ToolRunner.json(run) as! [String: Any])["epoch"] as! NSNumber).uint64Value
                == lastAtStamp[stamps.last!])
    }

    @Test func anEpochOutOfRangeIsAUsageErrorThatGivesTheRetainedRangeInTheToolsTerms() throws {
        let directory = TemporaryDirectory()
        let (store, last) = try ReadCommandTests.soakedStore(directory)
        let epochs = try ToolRunner.epochs(try ToolRunner.run(["log", store, "--json"]))
        let first = (epochs.first?["epoch"] as? NSNumber)?.uint64Value
        let range = "it holds epochs \(first ?? 0) through \(last)."
        let commands: [[String]] = [
            ["show", store, "--epoch", "99999"], ["show", store, "--epoch", "0"],
            ["diff", store, "0", String(last)], ["diff", store, String(last), "99999"],
            ["rewind", store, "--epoch", "99999", "--into", directory.appending("new")],
        ]
        for command in commands {
            let run = try ToolRunner.run(command)
            #expect(run.status == 2, "\(command): \(run.standardError)")
            #expect(run.standardError.contains("is not in this store; " + range), "\(command): \(run.standardError)")
            #expect(!run.standardError.contains("()"), "\(command) names a library function: \(run.standardError)")
        }
    }
}
