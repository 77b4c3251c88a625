import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// Pins format version 3: today's writer produces exactly the committed bytes, and today's reader
/// reads the committed stores of versions 1, 2 and 3 to exactly the committed state. Set
/// `STATEJOURNAL_RECORD_GOLDEN=1` to write the golden files of the current version anew after a
/// deliberate format change (with a new format version, keeping the older stores).
@Suite struct GoldenFileTests {
    static let names = ["MANIFEST", "segment-0000000000000001.sjl"]
    static let currentStore = "store-v3"

    static func goldenDirectory(_ name: String = currentStore) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/" + name)
    }

    static func options() -> JournalOptions {
        var options = JournalOptions(durability: .none)
        options.clock = { Date(timeIntervalSince1970: 1_790_000_000.123) }
        options.newStoreID = { Array(0x10...0x1F) }
        return options
    }

    /// A small workload that touches every record type and encoding: new and known paths, states
    /// stored raw and compressed against previous versions, removes, a clear, repeated and changed
    /// metadata, a metadata-only epoch, and (from epoch 6 on, which the stores of versions 1 and 2
    /// do not have) epochs of one entry that version 3 writes as compact commits: patches against
    /// the previous version, of the same path twice, and a remove.
    static func writeWorkload(to path: String) throws {
        let journal = try Journal.open(path: path, options: options(), fileSystem: PosixFileSystem())
        let inbox = RestorationPath("Main", "Inbox")
        let draft = RestorationPath("Main", "Compose/Draft")
        func state(_ scroll: Int) -> [UInt8] {
            let text =
                "{\"selection\":\"Message-42\",\"scrollOffset\":\(scroll),"
                + "\"sort\":\"date-descending\",\"filter\":\"unread\"}"
            return Array(text.utf8)
        }
        try journal.commit([.put(RestorationPath("Main"), Array("hello".utf8))], metadata: ["v": "1"])
        try journal.commit(
            [.put(inbox, state(120)), .put(draft, Array(repeating: 0x61, count: 300))], metadata: ["v": "1"])
        try journal.commit([.put(inbox, state(128)), .remove(draft)], metadata: ["v": "2"])
        try journal.commit([], metadata: ["v": "2", "note": "metadata only"])
        try journal.commit([.removeAll, .put(inbox, state(0))], metadata: ["v": "2"])
        try journal.commit([.put(inbox, state(136))], metadata: ["v": "2"])
        try journal.commit([.put(inbox, state(2048))], metadata: ["v": "2"])
        try journal.commit([.remove(draft)], metadata: ["v": "2"])
        try journal.close()
    }

    @Test func theWriterProducesTheGoldenBytes() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        try Self.writeWorkload(to: store)
        if ProcessInfo.processInfo.environment["STATEJOURNAL_RECORD_GOLDEN"] == "1" {
            let golden = Self.goldenDirectory()
            try FileManager.default.createDirectory(at: golden, withIntermediateDirectories: true)
            for name in Self.names {
                let target = golden.appendingPathComponent(name)
                try? FileManager.default.removeItem(at: target)
                try FileManager.default.copyItem(atPath: store + "/" + name, toPath: target.path)
            }
        }
        for name in Self.names {
            let written = try Data(contentsOf: URL(fileURLWithPath: store + "/" + name))
            let golden = try Data(contentsOf: Self.goldenDirectory().appendingPathComponent(name))
            #expect(written == golden, "\(name) differs from the golden file: the on-disk format changed")
        }
    }

    /// Copies a golden store into a new directory.
    static func copy(_ golden: String, to directory: TemporaryDirectory) throws {
        for name in names {
            try FileManager.default.copyItem(
                atPath: goldenDirectory(golden).appendingPathComponent(name).path, toPath: directory.appending(name))
        }
    }

    @Test(arguments: ["store-v1", "store-v2", "store-v3"])
    func theReaderReadsTheGoldenStore(_ golden: String) throws {
        let directory = TemporaryDirectory()
        try Self.copy(golden, to: directory)
        let reader = try JournalReader(at: directory.url)
        let history = try reader.history()
        // Stores of versions 1 and 2 end with epoch 5; version 3 adds the compact epochs 6 to 8.
        let compact = golden == "store-v3"
        #expect(history.map(\.epoch) == (compact ? [1, 2, 3, 4, 5, 6, 7, 8] : [1, 2, 3, 4, 5]))
        #expect(history.map(\.entryCount) == (compact ? [1, 2, 2, 0, 2, 1, 1, 1] : [1, 2, 2, 0, 2]))
        #expect(history[3].metadata == ["v": "2", "note": "metadata only"])
        #expect(history.dropFirst(4).allSatisfy { $0.metadata == ["v": "2"] })
        #expect(history.allSatisfy { $0.timestamp == Date(timeIntervalSince1970: 1_790_000_000.123) })
        let latest = try reader.state()
        #expect(latest.epoch?.epoch == (compact ? 8 : 5))
        #expect(latest.damage == nil)
        #expect(Set(latest.entries.keys) == [RestorationPath("Main", "Inbox")])
        #expect(
            String(decoding: latest.entries[RestorationPath("Main", "Inbox")]!, as: UTF8.self).contains(
                compact ? "\"scrollOffset\":2048," : "\"scrollOffset\":0,"))
        if compact {
            let sixth = try reader.state(through: 6).entries[RestorationPath("Main", "Inbox")]!
            #expect(String(decoding: sixth, as: UTF8.self).contains("\"scrollOffset\":136,"))
            let fifth = try reader.state(through: 5).entries[RestorationPath("Main", "Inbox")]!
            #expect(String(decoding: fifth, as: UTF8.self).contains("\"scrollOffset\":0,"))
            let types = Corruption.records(
                ofSegment: try Corruption.readFile(directory.appending(Self.names[1]))
            ).map(\.type).suffix(3)
            #expect(Array(types) == Array(repeating: Corruption.RecordSpan.compactCommit, count: 3))
        }
        let third = try reader.state(through: 3)
        #expect(third.entries[RestorationPath("Main")] == Array("hello".utf8))
        #expect(third.entries[RestorationPath("Main", "Compose/Draft")] == nil)
        #expect(
            String(decoding: third.entries[RestorationPath("Main", "Inbox")]!, as: UTF8.self).contains(
                "\"scrollOffset\":128,"))
        let second = try reader.state(through: 2)
        #expect(second.entries[RestorationPath("Main", "Compose/Draft")] == Array(repeating: 0x61, count: 300))
    }

    /// The upgrade path: a writer opening a store of format version 1 or 2 seals its segment and
    /// goes on in a new segment of version 3, so that no segment mixes two versions; readers read
    /// both, and the new segment's small epochs are compact commits.
    @Test(arguments: [("store-v1", UInt8(1)), ("store-v2", UInt8(2))])
    func aWriterContinuesAnOlderStoreInANewVersion3Segment(_ golden: String, _ version: UInt8) throws {
        let directory = TemporaryDirectory()
        try Self.copy(golden, to: directory)
        let journal = try Journal.open(path: directory.path, options: Self.options(), fileSystem: PosixFileSystem())
        #expect(journal.recoveryReport.isClean, "\(journal.recoveryReport)")
        #expect(journal.recoveredState.epoch?.epoch == 5)
        let info = try journal.commit([.put(RestorationPath("Main"), Array("upgraded".utf8))], metadata: ["v": "3"])
        #expect(info.epoch == 6)
        try journal.commit([.put(RestorationPath("Main"), Array("upgraded again".utf8))], metadata: ["v": "3"])
        try journal.close()

        let segments = try Corruption.segmentNames(in: directory.path)
        #expect(segments.count == 2)
        let versions = try segments.map { try Corruption.readFile(directory.appending($0))[4] }
        #expect(versions == [version, 3], "the old segment keeps its version, the new one is of version 3")
        #expect(try Corruption.readFile(directory.appending("MANIFEST"))[4] == 3)
        let old = Corruption.records(ofSegment: try Corruption.readFile(directory.appending(segments[0])))
        #expect(old.last?.type == Corruption.RecordSpan.seal && old.last?.headerLength == 9)
        let types = Corruption.records(ofSegment: try Corruption.readFile(directory.appending(segments[1])))
            .map(\.type)
        #expect(types == [Corruption.RecordSpan.commit, Corruption.RecordSpan.compactCommit])
        let reader = try JournalReader(at: directory.url)
        #expect(try reader.history().map(\.epoch) == [1, 2, 3, 4, 5, 6, 7])
        #expect(try reader.state().entries[RestorationPath("Main")] == Array("upgraded again".utf8))
        #expect(try reader.state(through: 6).entries[RestorationPath("Main")] == Array("upgraded".utf8))
        #expect(try reader.state(through: 5).entries.keys.sorted() == [RestorationPath("Main", "Inbox")])
        let reopened = try Journal.open(path: directory.path, options: Self.options(), fileSystem: PosixFileSystem())
        #expect(reopened.recoveryReport.isClean)
        #expect(reopened.recoveredState.epoch?.epoch == 7)
        try reopened.close()
    }

    /// Version 1 commit records do not say what was synced, so damage in a version 1 segment keeps
    /// that version's rule: a bad record with an intact one after it is damage.
    @Test func damageInAVersion1SegmentIsStillDamage() throws {
        let directory = TemporaryDirectory()
        try Self.copy("store-v1", to: directory)
        let segment = directory.appending(Self.names[1])
        let records = Corruption.records(ofSegment: try Corruption.readFile(segment))
        try Corruption.flipByte(segment, at: records[1].offset + 12)
        let state = try JournalReader(at: directory.url).state()
        #expect(state.damage?.offset == Int64(records[1].offset))
        #expect(state.unsyncedTail == nil)
        #expect(state.epoch?.epoch == 1)
    }
}
