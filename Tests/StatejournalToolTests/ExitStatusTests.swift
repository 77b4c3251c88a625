import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// The exit statuses `statejournal --help` documents, the same in every command, and errors that
/// speak in the tool's terms.
@Suite struct ExitStatusTests {
    @Test func theRootHelpDocumentsEveryExitStatus() throws {
        let help = try ToolRunner.run(["--help"])
        #expect(help.status == 0)
        for line in [
            "0  success", "1  damage found", "2  usage", "65  EX_DATAERR", "66  EX_NOINPUT", "70  EX_SOFTWARE",
            "73  EX_CANTCREAT", "74  EX_IOERR", "75  EX_TEMPFAIL", "77  EX_NOPERM", "143  restore stopped by SIGTERM",
        ] {
            #expect(help.standardOutput.contains(line), "\(line)")
        }
    }

    @Test func usageErrorsExitWithTwo() throws {
        let directory = TemporaryDirectory()
        let (store, _) = try ReadCommandTests.soakedStore(directory)
        for command in [
            ["log", store, "--bogus"], ["show", store, "--at", "yesterday"],
            ["show", store, "--epoch", "1", "--at", "-1m"],
            ["nonsense"], ["history", store, "Soak//Epoch"], ["log", store, "--color", "sometimes"],
        ] {
            let run = try ToolRunner.run(command)
            #expect(run.status == 2, "\(command): \(run.standardError)")
            #expect(!run.standardError.isEmpty, "\(command)")
        }
    }

    @Test func aMissingStoreIsNoInputAndADirectoryWithoutAStoreToo() throws {
        let directory = TemporaryDirectory()
        for command in ["log", "show", "verify", "compact"] {
            let missing = try ToolRunner.run([command, directory.appending("absent")])
            #expect(missing.status == 66, "\(command): \(missing.standardError)")
            #expect(
                (missing.standardOutput + missing.standardError).contains("does not exist"),
                "\(command): \(missing.standardError)")
            let empty = try ToolRunner.run([command, directory.path])
            #expect(empty.status == 66, "\(command): \(empty.standardError)")
        }
    }

    @Test func aStoreTheUserMayNotReadIsAPermissionError() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try Journal.open(at: URL(fileURLWithPath: store))
        try journal.commit([.put(RestorationPath("Main"), [1])])
        try journal.close()
        let refused: ToolRunner.Output
        if getuid() == 0 {
            // Root is refused nothing: the tool runs as `nobody`, whom the store's mode (0700) keeps out.
            refused = try ToolRunner.runAsNobody(["log", store])
        } else {
            chmod(store, 0)
            defer { chmod(store, 0o700) }
            refused = try ToolRunner.run(["log", store])
        }
        #expect(refused.status == 77, "\(refused.standardError)")
        #expect(refused.standardError.contains("Permission denied"), "\(refused.standardError)")
    }

    @Test func aStoreInANewerFormatIsADataError() throws {
        let directory = TemporaryDirectory()
        let (store, _) = try ReadCommandTests.soakedStore(directory)
        // The manifest's format version, a UInt16 after its 4-byte magic, from the future, with the
        // checksum that ends the manifest made again: a later release's manifest, not a damaged one.
        var manifest = try Corruption.readFile(store + "/MANIFEST")
        manifest[4] = 0x09
        manifest[5] = 0x00
        let checksum = TestCRC32C.checksum(Array(manifest[0..<(manifest.count - 4)]))
        for index in 0..<4 { manifest[manifest.count - 4 + index] = UInt8((checksum >> (8 * UInt32(index))) & 0xFF) }
        try Data(manifest).write(to: URL(fileURLWithPath: store + "/MANIFEST"))
        for command in [["log", store], ["verify", store], ["compact", store]] {
            let run = try ToolRunner.run(command)
            #expect(run.status == 65, "\(command): \(run.standardOutput) \(run.standardError)")
            #expect(
                (run.standardOutput + run.standardError).contains("format version 9 is not supported"),
                "\(command): \(run.standardOutput) \(run.standardError)")
        }
    }

    @Test func aLockedStoreIsATemporaryFailureAndAnOccupiedRewindTargetCannotBeCreated() throws {
        let directory = TemporaryDirectory()
        let (store, last) = try ReadCommandTests.soakedStore(directory)
        let journal = try Journal.open(at: URL(fileURLWithPath: store))
        for command in [["compact", store], ["soak", store, "--seconds", "0.1"]] {
            let run = try ToolRunner.run(command)
            #expect(run.status == 75, "\(command): \(run.standardError)")
            #expect(run.standardError.contains("in use by"), "\(command): \(run.standardError)")
        }
        try journal.close()
        let target = directory.appending("occupied")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: target + "/notes.txt", contents: Data("x".utf8))
        let rewind = try ToolRunner.run(["rewind", store, "--epoch", String(last), "--into", target])
        #expect(rewind.status == 73, "\(rewind.standardError)")
        let orphan = try ToolRunner.run([
            "rewind", store, "--epoch", String(last), "--into", directory.appending("no/such/dir"),
        ])
        #expect(orphan.status == 73, "\(orphan.standardError)")
    }

    @Test func damageFoundExitsWithOneFromVerifyAndFromShowOfTheLatestState() throws {
        // One segment, every commit synced, no checkpoint: replay of the latest state meets the damage.
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try Journal.open(
            at: URL(fileURLWithPath: store), options: JournalOptions(durability: .everyCommit))
        for epoch in 1...40 {
            try journal.commit(
                [.put(RestorationPath("Item-\(epoch % 5)"), Array("state \(epoch)".utf8))], metadata: [:])
        }
        try journal.close()
        let segment = store + "/" + (try Corruption.segmentNames(in: store).last!)
        let size = try Corruption.readFile(segment).count
        try Corruption.flipByte(segment, at: 44 + (size - 44) / 4)
        #expect(try ToolRunner.run(["verify", store]).status == 1)
        let show = try ToolRunner.run(["show", store, "--json"])
        #expect(show.status == 1, "\(show.standardError)")
        let shown = try ToolRunner.json(show) as! [String: Any]
        #expect(shown["damage"] is String)
        // An epoch before the damage is read whole.
        let consistent = (shown["epoch"] as! NSNumber).uint64Value
        #expect(try ToolRunner.run(["show", store, "--epoch", String(consistent)]).status == 0)
    }

    @Test func historyOfAPathNoEpochWroteFailsAndSuggestsNearPaths() throws {
        let directory = TemporaryDirectory()
        let (store, _) = try ReadCommandTests.soakedStore(directory)
        let typo = try ToolRunner.run(["history", store, "Soak/Epohc"])
        #expect(typo.status == 2)
        #expect(typo.standardOutput.isEmpty)
        #expect(typo.standardError.contains("no retained epoch wrote Soak/Epohc"), "\(typo.standardError)")
        #expect(typo.standardError.contains("Did you mean"), "\(typo.standardError)")
        #expect(typo.standardError.contains("    Soak/Epoch\n"), "\(typo.standardError)")
        // Only the last component, as someone who remembers the name but not where it lives.
        let bare = try ToolRunner.run(["history", store, "Epoch", "--json"])
        #expect(bare.status == 2)
        #expect(bare.standardOutput.isEmpty, "no JSON for a failure")
        #expect(bare.standardError.contains("    Soak/Epoch\n"), "\(bare.standardError)")
        // Nothing near: no suggestions, but how to list the paths.
        let far = try ToolRunner.run(["history", store, "Zzzzzzzz/Qqqqqq"])
        #expect(far.status == 2)
        #expect(!far.standardError.contains("Did you mean"))
        #expect(far.standardError.contains("statejournal show"))
    }

    @Test func showUnderAPrefixThatHoldsNothingFailsAndSuggestsNearPaths() throws {
        let directory = TemporaryDirectory()
        let (store, _) = try ReadCommandTests.soakedStore(directory)
        let run = try ToolRunner.run(["show", store, "--path", "Soak/Item-O"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("nothing is under Soak/Item-O at epoch"), "\(run.standardError)")
        // The items present at that epoch, one typing mistake away.
        #expect(run.standardError.contains("Did you mean"), "\(run.standardError)")
        #expect(run.standardError.contains("\n    Soak/Item-"), "\(run.standardError)")
        let json = try ToolRunner.run(["show", store, "--path", "Nowhere", "--json"])
        #expect(json.status == 2)
        #expect(json.standardOutput.isEmpty)
    }

    @Test func versionPrintsTheReleaseTheChangelogNames() throws {
        let run = try ToolRunner.run(["--version"])
        #expect(run.status == 0)
        let version = run.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version.range(of: #"^\d+\.\d+\.\d+$"#, options: .regularExpression) != nil, "\(version)")
        let changelog = try String(contentsOf: Self.packageRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        #expect(
            changelog.contains("## [\(version)] - ") || changelog.contains("will be released as \(version)"),
            "CHANGELOG.md should have a section for \(version), or name it as the next release")
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("from: \"\(version)\""), "README.md's dependency line should use \(version)")
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}
