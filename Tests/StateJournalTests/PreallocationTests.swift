import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// The writer writes zeros ahead of its records, so that syncs overwrite blocks the file already
/// has; the zeros are never mistaken for a torn tail, and stores at rest hold none.
@Suite struct PreallocationTests {
    private func commit(_ count: Int, to journal: Journal, from first: Int = 0) throws {
        for index in first..<first + count {
            try journal.commit([.put(RestorationPath("Main", "Item-\(index % 7)"), Array("state \(index)".utf8))])
        }
    }

    /// A copy of the store's files as they are now, as a crash of the writer leaves them.
    private func crashImage(of store: String, in directory: TemporaryDirectory) throws -> String {
        let copy = directory.appending("crashed")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: store) where name != "LOCK" {
            try FileManager.default.copyItem(atPath: store + "/" + name, toPath: copy + "/" + name)
        }
        return copy
    }

    @Test func aLiveSegmentIsWrittenAheadWithZerosAndAClosedOneEndsAtItsLastRecord() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store, realFileSystem: true)
        try commit(20, to: journal)
        let segment = store + "/" + (try Corruption.segmentNames(in: store)).last!
        let end = writtenEnd(of: journal)
        #expect(try fileSize(segment) >= end + (64 << 10) - 4096, "zeros are written a step ahead")
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: segment)))
        #expect(bytes[end...].allSatisfy { $0 == 0 })
        try journal.close()
        #expect(try fileSize(segment) == end)
    }

    @Test func aSealedSegmentEndsAtItsSeal() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store, testOptions(segmentSizeLimit: 600), realFileSystem: true)
        // Enough epochs for several segments, most of them compact commits of a few bytes.
        try commit(200, to: journal)
        let names = try Corruption.segmentNames(in: store)
        #expect(names.count > 3)
        for name in names.dropLast() {
            let size = try fileSize(store + "/" + name)
            #expect(size < 4096, "\(name) holds \(size) bytes")
        }
        try journal.close()
        #expect(try openReader(store).state().epoch?.epoch == 200)
    }

    @Test func theZerosAfterTheLastRecordOfACrashedWriterAreNeitherATornTailNorReported() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store, realFileSystem: true)
        try commit(20, to: journal)
        let crashed = try crashImage(of: store, in: directory)
        try journal.close()

        let state = try openReader(crashed).state()
        #expect(state.epoch?.epoch == 20)
        #expect(state.uncommittedTailBytes == 0)
        #expect(state.damage == nil)
        #expect(state.unsyncedTail == nil)

        let reopened = try openJournal(crashed, realFileSystem: true)
        #expect(reopened.recoveryReport.truncatedTailBytes == 0)
        #expect(reopened.recoveryReport.isClean)
        try commit(5, to: reopened, from: 20)
        try reopened.close()
        #expect(try openReader(crashed).state().epoch?.epoch == 25)
    }

    @Test func aTornRecordBeforeTheZerosIsATailOfItsOwnLength() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store, realFileSystem: true)
        try commit(20, to: journal)
        let end = writtenEnd(of: journal)
        let crashed = try crashImage(of: store, in: directory)
        try journal.close()
        let segment = crashed + "/" + (try Corruption.segmentNames(in: crashed)).last!
        let handle = try #require(FileHandle(forUpdatingAtPath: segment))
        try handle.seek(toOffset: UInt64(end))
        handle.write(Data(repeating: 0xAB, count: 30))
        try handle.close()

        let state = try openReader(crashed).state()
        #expect(state.epoch?.epoch == 20)
        #expect(state.uncommittedTailBytes == 30)
        #expect(state.damage == nil)

        let reopened = try openJournal(crashed, realFileSystem: true)
        #expect(reopened.recoveryReport.truncatedTailBytes == 30)
        try reopened.close()
        #expect(try fileSize(segment) == end)
    }
}
