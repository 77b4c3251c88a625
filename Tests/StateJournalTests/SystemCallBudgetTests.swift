import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// What a one-entry commit asks of the kernel under each durability policy, counted at the I/O
/// seam: a figure that a shared machine cannot disturb, held here so that a change adding a system
/// call to every commit fails the tests instead of being found in a benchmark later.
@Suite struct SystemCallBudgetTests {
    /// Commits `count` one-entry epochs after a warm-up and returns the calls of each kind per commit.
    static func callsPerCommit(_ durability: Durability, count: Int = 2_000) throws -> [IOCallKind: Double] {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        var options = JournalOptions(durability: durability)
        options.compaction = .manual
        let journal = try Journal.open(path: directory.path, options: options, fileSystem: fileSystem)
        let paths = (0..<50).map { RestorationPath("Main", "Item-\($0)") }
        for (index, path) in paths.enumerated() { try journal.commit([.put(path, Array("item \(index)".utf8))]) }
        let before = IOCallKind.allCases.map { fileSystem.callCount(of: $0) }
        for index in 0..<count {
            try journal.commit([
                .put(paths[index % paths.count], Array("item \(index % 50), scrolled to \(index)".utf8))
            ])
        }
        let after = IOCallKind.allCases.map { fileSystem.callCount(of: $0) }
        try journal.close()
        var perCommit: [IOCallKind: Double] = [:]
        for (kind, (first, last)) in zip(IOCallKind.allCases, zip(before, after)) {
            perCommit[kind] = Double(last - first) / Double(count)
        }
        return perCommit
    }

    /// The kinds no commit needs, whatever the policy.
    static let neverPerCommit: [IOCallKind] = [
        .open, .read, .size, .truncate, .fullSync, .rename, .remove, .makeDirectory, .contentsOfDirectory, .tryLock,
    ]

    @Test func aCommitWithoutSyncingIsOneWrite() throws {
        let calls = try Self.callsPerCommit(.none)
        // Writing the segment ahead with zeros adds a write every few hundred kilobytes.
        #expect(calls[.write]! >= 1 && calls[.write]! <= 1.005, "\(calls)")
        #expect(calls[.dataSync] == 0, "\(calls)")
        for kind in Self.neverPerCommit { #expect(calls[kind] == 0, "\(kind): \(calls)") }
    }

    @Test func aCommitUnderEveryCommitIsOneWriteAndOneDataSync() throws {
        let calls = try Self.callsPerCommit(.everyCommit)
        #expect(calls[.write]! >= 1 && calls[.write]! <= 1.005, "\(calls)")
        // fdatasync, not fsync: the file's size does not change, as it was written ahead.
        #expect(calls[.dataSync] == 1, "\(calls)")
        for kind in Self.neverPerCommit { #expect(calls[kind] == 0, "\(kind): \(calls)") }
    }

    @Test func aCommitUnderTheIntervalPolicyIsOneWriteAndSyncsStayOnTheBackgroundClock() throws {
        let started = Date()
        let calls = try Self.callsPerCommit(.interval(seconds: 1))
        let seconds = Date().timeIntervalSince(started)
        #expect(calls[.write]! >= 1 && calls[.write]! <= 1.005, "\(calls)")
        // About one sync a second in the background (and one at close), however many commits.
        #expect(calls[.dataSync]! * 2_000 <= seconds + 3, "\(calls) in \(seconds) s")
        for kind in Self.neverPerCommit { #expect(calls[kind] == 0, "\(kind): \(calls)") }
    }
}
