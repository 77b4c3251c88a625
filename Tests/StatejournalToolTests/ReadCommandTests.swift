import Foundation
import StateJournal
import StateJournalComparison
import StateJournalTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The read commands, run as the built binary on stores `soak` wrote: their output, their JSON, and
/// their exit status on intact, torn and damaged stores.
@Suite struct ReadCommandTests {
    /// A store of `seconds` of soak with a fixed seed, and its last epoch.
    /// Damage is bytes that were durable and are now wrong: stores to damage are written under
    /// `everyCommit`, where each commit record says the epochs before it were synced.
    static func soakedStore(
        _ directory: TemporaryDirectory, seconds: String = "0.4", durability: String = "none"
    ) throws -> (String, UInt64) {
        let store = directory.appending("store")
        var last: UInt64 = 0
        // On a loaded machine a fraction of a second can commit next to nothing: the writer runs
        // again (it continues the store) until the store has a few segments' worth of epochs.
        for _ in 0..<50 where last < 40 {
            let run = try ToolRunner.run([
                "soak", store, "--seconds", seconds, "--objects", "12", "--durability", durability,
            ])
            #expect(run.status == 0, "\(run.standardError)")
            last =
                run.standardOutput.split(separator: "\n").last.map { UInt64($0.dropFirst("committed ".count))! } ?? last
        }
        return (store, last)
    }

    @Test func logListsEveryRetainedEpochAsTextAndJSON() throws {
        let directory = TemporaryDirectory()
        let (store, last) = try Self.soakedStore(directory)
        let text = try ToolRunner.run(["log", store])
        #expect(text.status == 0)
        #expect(text.standardOutput.hasPrefix("EPOCH"))
        let epochs = try ToolRunner.epochs(try ToolRunner.run(["log", store, "--json"]))
        #expect((epochs.last!["epoch"] as! NSNumber).uint64Value == last)
        for field in ["epoch", "timestamp", "metadata", "entries", "bytes"] {
            #expect(epochs[0][field] != nil, "\(field)")
        }
        #expect((epochs.last!["metadata"] as! [String: String])["soak.seed"] == "1")
        #expect((epochs.last!["timestamp"] as! String).hasSuffix("Z"))
    }

    @Test func showPrintsTheStateAtAnEpochUnderAPrefix() throws {
        let directory = TemporaryDirectory()
        let (store, last) = try Self.soakedStore(directory)
        let shown = try ToolRunner.json(try ToolRunner.run(["show", store, "--json"])) as! [String: Any]
        #expect((shown["epoch"] as! NSNumber).uint64Value == last)
        let objects = shown["objects"] as! [String: [String: Any]]
        #expect((objects["Soak/Epoch"]!["state"] as? String).flatMap { UInt64($0) } == last)
        #expect(objects.values.allSatisfy { $0["type"] != nil && $0["state"] != nil })
        let earlier =
            try ToolRunner.json(
                try ToolRunner.run(["show", store, "--epoch", String(last - 1), "--path", "Soak/Epoch", "--json"]))
            as! [String: Any]
        let earlierObjects = earlier["objects"] as! [String: [String: Any]]
        #expect(earlierObjects.keys.sorted() == ["Soak/Epoch"])
        #expect((earlierObjects["Soak/Epoch"]!["state"] as? String).flatMap { UInt64($0) } == last - 1)
        let text = try ToolRunner.run(["show", store, "--path", "Soak"])
        #expect(text.standardOutput.contains("Soak/Epoch"))
        let missing = try ToolRunner.run(["show", store, "--epoch", "999999999"])
        #expect(missing.status == 2)
        #expect(missing.standardError.contains("epoch 999999999 is not in this store"), "\(missing.standardError)")
    }

    @Test func diffAndHistoryReportChangesBetweenEpochs() throws {
        let directory = TemporaryDirectory()
        let (store, last) = try Self.soakedStore(directory)
        let diff =
            try ToolRunner.json(try ToolRunner.run(["diff", store, String(last - 1), String(last), "--json"]))
            as! [String: Any]
        let changed = diff["changed"] as! [String: Any]
        #expect(changed["Soak/Epoch"] != nil)
        let history = try ToolRunner.epochs(try ToolRunner.run(["history", store, "Soak/Epoch", "--json"]))
        #expect((history.last!["epoch"] as! NSNumber).uint64Value == last)
        let text = try ToolRunner.run(["history", store, "Soak/Epoch"])
        #expect(text.status == 0)
        #expect(text.standardOutput.contains(String(last)))
    }

    /// Flips a byte that a later commit shows was synced, so that it reads as damage: in the middle
    /// of a segment before the last, or in the first quarter of the last one's records (a flip in
    /// the journal's last commit reads as an unsynced tail, as a power cut can leave it). Returns
    /// the segment's name.
    static func damageSyncedBytes(in store: String) throws -> String {
        let segments = try Corruption.segmentNames(in: store)
        let segment = segments.count > 1 ? segments[segments.count - 2] : segments.last!
        let size = try Corruption.readFile(store + "/" + segment).count
        try Corruption.flipByte(store + "/" + segment, at: segments.count > 1 ? size / 2 : 44 + (size - 44) / 4)
        return segment
    }

    @Test func verifyCountsOneRetainedEpochInTheSingular() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try Journal.open(at: URL(fileURLWithPath: store), options: JournalOptions(durability: .none))
        try journal.commit([.put(RestorationPath("Main"), [1])])
        try journal.close()
        let one = try ToolRunner.run(["verify", store])
        #expect(one.standardOutput.contains("1 retained epoch checked;"), "\(one.standardOutput)")
        let reopened = try Journal.open(at: URL(fileURLWithPath: store), options: JournalOptions(durability: .none))
        try reopened.commit([.put(RestorationPath("Main"), [2])])
        try reopened.close()
        let two = try ToolRunner.run(["verify", store])
        #expect(two.standardOutput.contains("2 retained epochs checked;"), "\(two.standardOutput)")
    }

    @Test func verifySaysCleanDamagedOrUnusableWithItsExitStatus() throws {
        let directory = TemporaryDirectory()
        let (store, _) = try Self.soakedStore(directory, durability: "everyCommit")
        #expect(try ToolRunner.run(["verify", store]).status == 0)
        let notAStore = TemporaryDirectory()
        let unusable = try ToolRunner.run(["verify", notAStore.path, "--json"])
        #expect(unusable.status == 66)
        #expect((try ToolRunner.json(unusable) as! [String: Any])["status"] as? String == "unusable")

        let segment = try Self.damageSyncedBytes(in: store)
        let before = try Corruption.readFile(store + "/" + segment)
        let damaged = try ToolRunner.run(["verify", store, "--json"])
        #expect(damaged.status == 1)
        let report = try ToolRunner.json(damaged) as! [String: Any]
        #expect(report["status"] as? String == "damaged")
        #expect(report["damagedFile"] as? String == segment)
        #expect(try Corruption.readFile(store + "/" + segment) == before, "verify modified the store")
    }

    @Test func verifyCallsAStoreWithAnUnsyncedTailClean() throws {
        // Under `none` nothing in the last segment was synced: a bad record there, with intact ones
        // after it, is what a power cut leaves when later pages reached the disk and earlier ones did not.
        let directory = TemporaryDirectory()
        let (store, soaked) = try Self.soakedStore(directory)
        // Twelve more of soak's epochs, in one segment, none of them synced.
        let journal = try Journal.open(at: URL(fileURLWithPath: store), options: JournalOptions(durability: .none))
        let workload = SoakWorkload(objects: 12, seed: 1)
        for epoch in (soaked + 1)...(soaked + 12) {
            try journal.commit(workload.changes(at: epoch), metadata: ["soak.seed": "1", "soak.objects": "12"])
        }
        try journal.close()
        let last = soaked + 12
        let segment = try Corruption.segmentNames(in: store).last!
        let records = Corruption.records(ofSegment: try Corruption.readFile(store + "/" + segment))
        try #require(records.count >= 12)
        try Corruption.flipByte(store + "/" + segment, at: records[records.count - 6].offset + 9)
        let verified = try ToolRunner.run(["verify", store, "--json"])
        #expect(verified.status == 0, "\(verified.standardOutput)")
        let report = try ToolRunner.json(verified) as! [String: Any]
        #expect(report["status"] as? String == "clean")
        #expect(((report["unsyncedTailBytes"] as? NSNumber)?.int64Value ?? 0) > 0, "\(report)")
        let text = try ToolRunner.run(["verify", store])
        #expect(text.status == 0)
        #expect(text.standardOutput.contains("Recovered from a power cut"), "\(text.standardOutput)")
        // soak goes on in it, and its check passes.
        let kept = (report["consistentEpoch"] as? NSNumber)?.uint64Value ?? 0
        #expect(kept < last)
        let soak = try ToolRunner.run(["soak", store, "--seconds", "0.2", "--objects", "12", "--durability", "none"])
        #expect(soak.status == 0, "\(soak.standardError)")
        #expect(soak.standardOutput.hasPrefix("committed \(kept + 1)\n"), "\(soak.standardOutput.prefix(40))")
        #expect(try ToolRunner.run(["soak", store, "--check"]).status == 0)
    }

    @Test func everyReadCommandCopesWithATornTailAndAFlippedByte() throws {
        for damage in ["torn", "flipped"] {
            let directory = TemporaryDirectory()
            let (store, last) = try Self.soakedStore(directory, durability: damage == "torn" ? "none" : "everyCommit")
            if damage == "torn" {
                // What a crash in the middle of appending leaves: the start of a record, then nothing.
                let segment = store + "/" + (try Corruption.segmentNames(in: store).last!)
                try Corruption.append(segment, [0x12, 0x34, 0x56, 0x78, 0x40, 0x00, 0x00, 0x00, 0x01, 0x05])
            } else {
                _ = try Self.damageSyncedBytes(in: store)
            }
            let commands: [[String]] = [
                ["log", store], ["show", store], ["show", store, "--json"],
                ["diff", store, String(last - 3), String(last - 2)],
                ["history", store, "Soak/Epoch"], ["verify", store],
            ]
            for command in commands {
                let run = try ToolRunner.run(command)
                // 2 when the epochs compared come after the damage, which replay no longer reaches.
                #expect(
                    run.status == 0 || run.status == 1
                        || (run.status == 2 && run.standardError.contains("is not in this store")),
                    "\(damage): \(command) exited \(run.status): \(run.standardError)")
                #expect(!run.standardError.contains("Fatal error"), "\(damage): \(command) crashed")
            }
            let verify = try ToolRunner.run(["verify", store])
            #expect(verify.status == (damage == "torn" ? 0 : 1), "\(damage): \(verify.standardOutput)")
        }
    }

    @Test func showWorksBesideARunningSoak() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let process = Process()
        process.executableURL = ToolRunner.binary
        process.arguments = ["soak", store, "--seconds", "20", "--objects", "12"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        // Wait (up to 20 s, for a loaded machine) until the soak has created the store and committed.
        for _ in 0..<400 where (try? JournalReader(at: URL(fileURLWithPath: store)).history().isEmpty) ?? true {
            usleep(50_000)
        }
        var reads = 0
        for _ in 0..<8 {
            let run = try ToolRunner.run(["show", store, "--json"])
            #expect(run.status == 0, "\(run.standardError)")
            if let shown = try? ToolRunner.json(run) as? [String: Any], shown["epoch"] != nil { reads += 1 }
            usleep(50_000)
        }
        #expect(reads == 8)
    }

    @Test func rewindThenShowEqualsShowAtThatEpoch() throws {
        let directory = TemporaryDirectory()
        let (store, _) = try Self.soakedStore(directory)
        let target = directory.appending("rewound")
        // Five epochs before the last that the store retains: soak compacts by hand every 97
        // epochs, and a run that ends just after it keeps fewer than six.
        let retained = try ToolRunner.epochs(try ToolRunner.run(["log", store, "--json"])).map {
            ($0["epoch"] as! NSNumber).uint64Value
        }
        let epoch = String(try #require(retained.dropLast(5).last ?? retained.first))
        let rewind = try ToolRunner.run(["rewind", store, "--epoch", epoch, "--into", target])
        #expect(rewind.status == 0, "\(rewind.standardError)")
        let original =
            try ToolRunner.json(try ToolRunner.run(["show", store, "--epoch", epoch, "--json"])) as! [String: Any]
        let rewound = try ToolRunner.json(try ToolRunner.run(["show", target, "--json"])) as! [String: Any]
        #expect(
            NSDictionary(dictionary: original["objects"] as! [String: Any]).isEqual(
                to: rewound["objects"] as! [String: Any]))
        let again = try ToolRunner.run(["rewind", store, "--epoch", epoch, "--into", target])
        #expect(again.status != 0)
    }

    @Test func aDirectoryThatIsNotAStoreSaysSo() throws {
        let directory = TemporaryDirectory()
        _ = FileManager.default.createFile(atPath: directory.appending("notes.txt"), contents: Data("hello".utf8))
        for command in [["log", directory.path], ["show", directory.path], ["compact", directory.path]] {
            let run = try ToolRunner.run(command)
            #expect(run.status == 66, "\(command)")
            #expect(run.standardError.contains("not a StateJournal store"), "\(command): \(run.standardError)")
        }
    }

    @Test func compactRefusesWhileAWriterHoldsTheLock() throws {
        let directory = TemporaryDirectory()
        let (store, _) = try Self.soakedStore(directory)
        let journal = try Journal.open(at: URL(fileURLWithPath: store))
        let refused = try ToolRunner.run(["compact", store])
        #expect(refused.status == 75)
        #expect(refused.standardError.contains("in use by process"))
        try journal.close()
        let compacted = try ToolRunner.run(["compact", store])
        #expect(compacted.status == 0, "\(compacted.standardError)")
        #expect(try ToolRunner.run(["soak", store, "--check"]).status == 0)
    }
}
