import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// A file whose checksum holds but whose format version is later than this library reads was
/// written by a later release: it is refused with `unsupportedFormat`, never taken for damage, so
/// that no reader passes over it and no writer sets it aside and goes on without its epochs.
@Suite struct LaterFormatVersionTests {
    /// Every file of the store and its bytes.
    static func contents(of directory: TemporaryDirectory) throws -> [String: [UInt8]] {
        var contents: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            contents[name] = try Corruption.readFile(directory.appending(name))
        }
        return contents
    }

    /// Rewrites a checkpoint as a later release would: its content in format version `version`,
    /// with its checksum made again, in a new LZ4 frame.
    static func setVersion(_ version: UInt16, ofCheckpoint name: String, in directory: TemporaryDirectory) throws {
        let compressed = try Corruption.readFile(directory.appending(name))
        let decompressor = try LZ4FrameDecompressor(limit: 1 << 26)
        _ = try compressed.withUnsafeBytes { try decompressor.feed($0) }
        let arena = decompressor.takeOutput()
        var content = withExtendedLifetime(arena) { Array(arena.bytes) }
        content[4] = UInt8(version & 0xFF)
        content[5] = UInt8(version >> 8)
        let end = content.count - 4
        let checksum = CRC32C.checksum(Array(content[0..<end]))
        for index in 0..<4 { content[end + index] = UInt8((checksum >> (8 * UInt32(index))) & 0xFF) }
        let compressor = try LZ4FrameCompressor()
        let frame = try compressor.begin() + compressor.update(content) + compressor.end()
        try Data(frame).write(to: URL(fileURLWithPath: directory.appending(name)))
    }

    /// Opens the store every way a program does, expecting each that reads `file` to refuse it
    /// naming the version, and the store to be left exactly as it was. History is read from the
    /// oldest checkpoint on, so it reads the newest checkpoint only when `historyReadsIt`.
    static func expectRefused(_ directory: TemporaryDirectory, naming file: String, historyReadsIt: Bool) throws {
        let before = try contents(of: directory).filter { $0.key != "LOCK" }
        let attempts: [(String, () throws -> Void)] = [
            ("a writer", { _ = try Journal.open(at: directory.url) }),
            ("a reader's state", { _ = try JournalReader(at: directory.url).state() }),
        ]
        let history: (String, () throws -> Void) = (
            "a reader's history", { _ = try JournalReader(at: directory.url).history() }
        )
        for (who, attempt) in attempts + (historyReadsIt ? [history] : []) {
            let error = try #require(throws: JournalError.self, "\(who)") { try attempt() }
            #expect(error.code == .unsupportedFormat, "\(who): \(error)")
            #expect(error.description.contains("format version 9"), "\(who): \(error)")
            #expect(error.description.contains(file), "\(who): \(error)")
        }
        if !historyReadsIt {
            // What it reads instead is intact: the older checkpoint and the segments after it.
            #expect(try JournalReader(at: directory.url).history().last?.epoch == 60)
        }
        let verification = StoreInspector.verify(directory.url)
        #expect(verification.status == .unusable, "\(verification)")
        #expect(verification.failure?.contains("format version 9") == true, "\(verification)")
        // A writer leaves its lock file, which holds no state.
        let after = try contents(of: directory).filter { $0.key != "LOCK" }
        #expect(after == before, "the store changed: \(Set(after.keys).symmetricDifference(before.keys))")
    }

    @Test func aSegmentOfALaterFormatVersionIsRefusedAndLeftAsItIs() throws {
        for segment in ["segment-0000000000000005.sjl", "segment-0000000000000006.sjl"] {
            let directory = TemporaryDirectory()
            try ReleaseStoreTests.copy("store-v2-release-0.1.0", to: directory)
            try ReleaseStoreTests.setVersion(9, of: segment, in: directory)
            try Self.expectRefused(directory, naming: segment, historyReadsIt: true)
        }
    }

    @Test func aCheckpointOfALaterFormatVersionIsRefusedNotPassedOverForAnOlderOne() throws {
        let directory = TemporaryDirectory()
        try ReleaseStoreTests.copy("store-v2-release-0.1.0", to: directory)
        try Self.setVersion(9, ofCheckpoint: "checkpoint-0000000000000007.lz4", in: directory)
        try Self.expectRefused(directory, naming: "checkpoint-0000000000000007.lz4", historyReadsIt: false)
    }
}
