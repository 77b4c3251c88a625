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

/// Times before now (`-30s`, `-5m`, `-2h`, `-1d`), `diff --at`, and `log`'s selections.
@Suite struct RelativeTimeAndLogSelectionTests {
    @Test func relativeTimesFindTheLatestEpochAndTimesBeforeTheStoreAreUsageErrors() throws {
        let directory = TemporaryDirectory()
        let (store, last) = try ReadCommandTests.soakedStore(directory)
        for now in ["-0s", "now"] {
            let run = try ToolRunner.run(["show", store, "--at", now, "--json"])
            #expect(run.status == 0, "\(now): \(run.standardError)")
            #expect(((try ToolRunner.json(run) as! [String: Any])["epoch"] as? NSNumber)?.uint64Value == last)
        }
        let epochs = try ToolRunner.epochs(try ToolRunner.run(["log", store, "--json"]))
        let first = (epochs.first!["timestamp"] as! String, (epochs.first!["epoch"] as! NSNumber).uint64Value)
        for before in ["-30s", "-5m", "-2h", "-1d", "-1.5w"] {
            let run = try ToolRunner.run(["show", store, "--at", before])
            #expect(run.status == 2, "\(before): \(run.standardError)")
            #expect(
                run.standardError.contains("its epochs run from \(first.0) (epoch \(first.1))"),
                "\(before): \(run.standardError)")
        }
        // --at=VALUE works as well as --at VALUE, for values that start with a minus sign.
        #expect(try ToolRunner.run(["show", store, "--at=-0s"]).status == 0)
        for wrong in ["-5", "-5y", "5m", "--5m", "-m"] {
            let run = try ToolRunner.run(["show", store, "--at=\(wrong)"])
            #expect(run.status == 2, "\(wrong)")
            #expect(run.standardError.contains("-30s, -5m, -2h or -1d"), "\(wrong): \(run.standardError)")
        }
    }

    @Test func diffTakesEpochsOrTimesAsLogPrintsThemAndAtForWhatChangedSince() throws {
        let directory = TemporaryDirectory()
        let (store, last) = try ReadCommandTests.soakedStore(directory)
        let epochs = try ToolRunner.epochs(try ToolRunner.run(["log", store, "--json"]))
        // The last epoch at each printed time is the one a time finds.
        var lastAtStamp: [String: UInt64] = [:]
        for epoch in epochs { lastAtStamp[epoch["timestamp"] as! String] = (epoch["epoch"] as! NSNumber).uint64Value }
        let stamps = epochs.map { $0["timestamp"] as! String }
        let older = stamps[stamps.count / 2]
        let byTime = try ToolRunner.run(["diff", store, older, stamps.last!, "--json"])
        #expect(byTime.status == 0, "\(byTime.standardError)")
        let diff = try ToolRunner.json(byTime) as! [String: Any]
        #expect((diff["from"] as? NSNumber)?.uint64Value == lastAtStamp[older])
        #expect((diff["to"] as? NSNumber)?.uint64Value == last)
        #expect(diff["fromTimestamp"] as? String == older)
        let byNumber = try ToolRunner.run(["diff", store, String(lastAtStamp[older]!), String(last), "--json"])
        #expect(byNumber.standardOutput == byTime.standardOutput)
        // --at: from the state at that time to the latest.
        let since = try ToolRunner.run(["diff", store, "--at", older, "--json"])
        #expect(since.standardOutput == byTime.standardOutput)
        let now = try ToolRunner.json(try ToolRunner.run(["diff", store, "--at", "-0s", "--json"])) as! [String: Any]
        #expect((now["from"] as? NSNumber)?.uint64Value == last)
        #expect((now["changed"] as? [String: Any])?.isEmpty == true)
        #expect(try ToolRunner.run(["diff", store]).status == 2)
    }

    @Test func logSelectsTheLastNEpochsATimeRangeAndEpochsThatTouchedAPrefix() throws {
        let directory = TemporaryDirectory()
        let (store, last) = try ReadCommandTests.soakedStore(directory)
        let all = try ToolRunner.epochs(try ToolRunner.run(["log", store, "--json"]))
        func numbers(_ arguments: [String]) throws -> [UInt64] {
            let run = try ToolRunner.run(["log", store, "--json"] + arguments)
            #expect(run.status == 0, "\(arguments): \(run.standardError)")
            return try ToolRunner.epochs(run).map { ($0["epoch"] as! NSNumber).uint64Value }
        }
        #expect(try numbers(["-n", "3"]) == [last - 2, last - 1, last])
        #expect(try numbers(["--max-count", "0"]) == [])
        let text = try ToolRunner.run(["log", store, "-n", "2"]).standardOutput.split(separator: "\n")
        #expect(text.count == 3, "a header and two rows: \(text)")
        let middle = all[all.count / 2]
        let stamp = middle["timestamp"] as! String
        let since = try numbers(["--since", stamp])
        #expect(since.first! <= (middle["epoch"] as! NSNumber).uint64Value && since.last == last)
        let until = try numbers(["--until", stamp])
        #expect(until.last! >= (middle["epoch"] as! NSNumber).uint64Value)
        #expect(Set(since).union(until).count == all.count)
        #expect(try numbers(["--since", "-0s", "--until", "-1d"]) == [])
        #expect(try numbers(["--since=-1d"]).count == all.count)
        // soak writes Soak/Epoch in every epoch, and each item in some.
        #expect(try numbers(["--path", "Soak/Epoch"]).count == all.count)
        let item = try numbers(["--path", "Soak/Item-3"])
        #expect(!item.isEmpty && item.count < all.count)
        let history = try ToolRunner.epochs(try ToolRunner.run(["history", store, "Soak/Item-3", "--json"]))
        let written = history.map { ($0["epoch"] as! NSNumber).uint64Value }
        #expect(Set(written).isSubset(of: Set(item)))
        #expect(try numbers(["--path", "Elsewhere"]) == [])
    }

    @Test func logQuotesMetadataSoThatToolsCanSplitIt() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try Journal.open(at: URL(fileURLWithPath: store))
        let metadata = [
            "plain": "42", "spaced": "Linux 6.1 (x86_64)", "quoted": #"say "hi""#, "empty": "", "a=b": "c\\d",
        ]
        try journal.commit([.put(RestorationPath("Main"), Array("x".utf8))], metadata: metadata)
        try journal.close()
        let row = try ToolRunner.run(["log", store]).standardOutput.split(separator: "\n")[1]
        let field = String(row[row.range(of: #""a=b""#)!.lowerBound...])
        #expect(
            field == #""a=b"="c\\d" empty="" plain=42 quoted="say \"hi\"" spaced="Linux 6.1 (x86_64)""#, "\(row)")
    }
}
