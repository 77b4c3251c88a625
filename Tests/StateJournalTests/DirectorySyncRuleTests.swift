import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Every operation's calls, recorded through the seam, follow the directory-sync rules of
/// ``DirectorySyncAudit`` at each point the store makes a promise.
@Suite struct DirectorySyncRuleTests {
    static func path(_ n: Int) -> RestorationPath { RestorationPath(["Main", "Item-\(n)"]) }

    /// Runs a workload that creates a store, commits, rolls segments, compacts with retention,
    /// syncs, closes and rewinds, marking each promise. Returns the record of calls.
    static func record(durability: Durability) throws -> (records: [IOCallRecord], directory: TemporaryDirectory) {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem(keepsLog: true)
        let options = testOptions(durability: durability, segmentSizeLimit: 4 << 10)
        let strict = durability == .everyCommit
        var journal = try Journal.open(path: store, options: options, fileSystem: fileSystem)
        fileSystem.mark("the store was created")
        for round in 0..<3 {
            for n in 0..<40 {
                let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* (n + 7) &+ round) }
                try journal.commit([.put(path(n), bytes)])
                fileSystem.mark(strict ? "commit returned" : "commit returned (not a promise)")
            }
            try journal.commit([.remove(path(round))])
            fileSystem.mark(strict ? "commit returned" : "commit returned (not a promise)")
            _ = try journal.compact()
            fileSystem.mark("compaction returned")
        }
        try journal.sync()
        fileSystem.mark("sync returned")
        try journal.close()
        fileSystem.mark("close returned")
        journal = try Journal.open(path: store, options: options, fileSystem: fileSystem)
        fileSystem.mark("the store was reopened")
        try journal.close()
        let reader = try JournalReader(path: store, recovery: .stopAtDamage, fileSystem: fileSystem)
        let target = URL(fileURLWithPath: directory.appending("rewound"))
        _ = try StoreInspector(reader: reader).rewind(
            to: try reader.history().last?.epoch ?? 1, into: target, fileSystem: fileSystem)
        fileSystem.mark("rewind returned")
        return (fileSystem.records, directory)
    }

    @Test(arguments: [Durability.everyCommit, .interval(seconds: 3600), .none])
    func everyPromiseFollowsTheDirectorySyncRules(durability: Durability) throws {
        let (records, _) = try Self.record(durability: durability)
        let violations = DirectorySyncAudit.violations(in: records) { !$0.hasSuffix("(not a promise)") }
        #expect(violations.isEmpty, "\(violations.prefix(10).joined(separator: "\n"))")
        #expect(records.contains { if case .rename = $0.operation { true } else { false } })
    }

    @Test func theStoreDirectoryIsSyncedInItsParentBeforeTheStoreIsCreated() throws {
        let (records, directory) = try Self.record(durability: .everyCommit)
        let made = try #require(records.firstIndex { $0.operation == .makeDirectory })
        let created = try #require(records.firstIndex { $0 == IOCallRecord(.mark("the store was created"), path: "") })
        let syncs = records[made..<created].filter { $0.operation == .sync }.map(\.path)
        #expect(syncs.contains(directory.path), "\(syncs)")
    }

    @Test func theAuditFindsAMissingDirectorySyncAndAnUnsyncedRename() {
        let records = [
            IOCallRecord(.create, path: "/s/a.tmp"), IOCallRecord(.write, path: "/s/a.tmp"),
            IOCallRecord(.rename, path: "/s/a.tmp", destination: "/s/a"), IOCallRecord(.mark("ack"), path: ""),
        ]
        let violations = DirectorySyncAudit.violations(in: records)
        #expect(violations.count == 2, "\(violations)")
        let fixed = [
            IOCallRecord(.create, path: "/s/a.tmp"), IOCallRecord(.write, path: "/s/a.tmp"),
            IOCallRecord(.sync, path: "/s/a.tmp"), IOCallRecord(.rename, path: "/s/a.tmp", destination: "/s/a"),
            IOCallRecord(.sync, path: "/s"), IOCallRecord(.mark("ack"), path: ""),
        ]
        #expect(DirectorySyncAudit.violations(in: fixed).isEmpty)
    }
}
