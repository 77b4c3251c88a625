import Foundation
import StateJournalComparison
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// Stores written by released versions open, read, verify and continue.
///
/// `Golden/store-v2-release-0.1.0` was written by the engine of release 0.1.0 (format version 2):
/// the workload of `statejournal soak --objects 12 --seed 1` for epochs 1 to 60, under
/// `Durability.everyCommit`, with 2 KiB segments and `CompactionPolicy(isAutomatic: false)`, compacted
/// by hand after epochs 24 and 48, so that it holds version 2 checkpoints (the golden stores of
/// ``GoldenFileTests`` have none), sealed segments, a live segment, and history deleted by retention.
@Suite struct ReleaseStoreTests {
    static let workload = SoakWorkload(objects: 12, seed: 1)

    static func copy(_ golden: String, to directory: TemporaryDirectory) throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Golden/" + golden)
        for name in try FileManager.default.contentsOfDirectory(atPath: source.path) {
            try FileManager.default.copyItem(
                atPath: source.appendingPathComponent(name).path, toPath: directory.appending(name))
        }
    }

    /// Checks the store against the workload at its latest epoch and every retained one.
    static func expectMatchesTheWorkload(_ directory: TemporaryDirectory, latest: UInt64) throws {
        let verification = StoreInspector.verify(directory.url)
        #expect(verification.status == .clean, "\(verification)")
        #expect(verification.consistentEpoch == latest)
        switch try workload.check(directory.url) {
        case .success(let checked): #expect(checked > 0)
        case .failure(let mismatch): Issue.record("\(mismatch)")
        }
        #expect(try JournalReader(at: directory.url).state().epoch?.epoch == latest)
    }

    @Test func aCompactedStoreOfRelease010OpensVerifiesAndContinuesInVersion3() throws {
        let directory = TemporaryDirectory()
        try Self.copy("store-v2-release-0.1.0", to: directory)
        #expect(try Corruption.readFile(directory.appending("MANIFEST"))[4] == 2)

        // Read as 0.1.0 left it: its version 2 checkpoints are where replay starts.
        try Self.expectMatchesTheWorkload(directory, latest: 60)
        let files = try JournalReader(at: directory.url).fileSet().files
        let checkpoints = files.filter { $0.kind == .checkpoint }
        #expect(checkpoints.map(\.lastEpoch) == [24, 48])
        let reader = try JournalReader(at: directory.url)
        #expect(try reader.state(through: 30).entries == Self.workload.state(at: 30))
        #expect(try reader.history().map(\.epoch) == Array(24...60))

        // Continued by today's writer: new epochs, a compaction that writes a version 3 checkpoint
        // and lets retention drop the oldest version 2 one, more epochs, and a reopening.
        var options = JournalOptions(durability: .everyCommit)
        options.compaction = .manual
        let journal = try Journal.open(at: directory.url, options: options)
        #expect(journal.recoveryReport.isClean, "\(journal.recoveryReport)")
        #expect(journal.recoveredState.entries == Self.workload.state(at: 60))
        for epoch in UInt64(61)...72 {
            #expect(try journal.commit(Self.workload.changes(at: epoch)).epoch == epoch)
        }
        _ = try journal.compact()
        for epoch in UInt64(73)...80 {
            #expect(try journal.commit(Self.workload.changes(at: epoch)).epoch == epoch)
        }
        try journal.close()
        #expect(try Corruption.readFile(directory.appending("MANIFEST"))[4] == 3)
        let after = try JournalReader(at: directory.url).fileSet().files
        #expect(after.filter { $0.kind == .checkpoint }.map(\.lastEpoch) == [48, 72])
        try Self.expectMatchesTheWorkload(directory, latest: 80)

        let reopened = try Journal.open(at: directory.url, options: options)
        #expect(reopened.recoveryReport.isClean)
        #expect(reopened.recoveredState.entries == Self.workload.state(at: 80))
        try reopened.close()
    }

    /// Sets the format version of a manifest or a segment to `version`, with its checksum made
    /// again, as a later release would write it (not as damage, which the checksum would catch).
    static func setVersion(_ version: UInt16, of file: String, in directory: TemporaryDirectory) throws {
        var bytes = try Corruption.readFile(directory.appending(file))
        bytes[4] = UInt8(version & 0xFF)
        bytes[5] = UInt8(version >> 8)
        // A manifest's checksum ends it; a segment header's is at offset 40, over the 40 bytes before.
        let end = file == "MANIFEST" ? bytes.count - 4 : 40
        let checksum = CRC32C.checksum(Array(bytes[0..<end]))
        for index in 0..<4 { bytes[end + index] = UInt8((checksum >> (8 * UInt32(index))) & 0xFF) }
        try Data(bytes).write(to: URL(fileURLWithPath: directory.appending(file)))
    }

    /// A later release that changes the format writes its version into the manifest, which every
    /// reader and writer reads first.
    @Test func aStoreOfALaterFormatVersionIsRefusedNamingTheVersion() throws {
        let directory = TemporaryDirectory()
        try Self.copy("store-v2-release-0.1.0", to: directory)
        try Self.setVersion(9, of: "MANIFEST", in: directory)
        for open in [
            { _ = try Journal.open(at: directory.url) },
            { _ = try JournalReader(at: directory.url).state() },
        ] {
            let error = try #require(throws: JournalError.self) { try open() }
            #expect(error.code == .unsupportedFormat, "\(error)")
            #expect(error.description.contains("format version 9 is not supported"), "\(error)")
        }
    }
}
