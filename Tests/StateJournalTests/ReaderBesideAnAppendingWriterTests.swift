import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// A reader beside the writer (a shipper, `log`, a read-only `Journal`) reads the live segment a
/// window at a time while the writer appends over the zeros it wrote ahead; what one window saw as
/// zeros a later read sees as records. That is a segment growing, never damage.
@Suite struct ReaderBesideAnAppendingWriterTests {
    /// The real file system, except that reads of a segment see zeros from `visibleEnd` on until
    /// the first read that reaches past it, as the file held before the writer appended there;
    /// every read after it sees the file as it is.
    final class AppendedAfterTheFirstRead: ForwardingFileSystem, @unchecked Sendable {
        // @unchecked Sendable: `state` is a lock-protected box.
        let base: any FileSystem = PosixFileSystem()
        private let state = Locked<(segments: Set<Int32>, appended: Bool, reads: Int)>(([], false, 0))
        let visibleEnd: Int64

        init(visibleEnd: Int64) { self.visibleEnd = visibleEnd }

        /// How many reads of a segment saw the file as it is.
        var readsAfterTheAppend: Int { state.withLock { $0.reads } }

        func open(_ path: String, _ mode: FileOpenMode) throws -> Int32 {
            let descriptor = try base.open(path, mode)
            if path.hasSuffix(".sjl") { state.withLock { _ = $0.segments.insert(descriptor) } }
            return descriptor
        }
        func close(_ descriptor: Int32) {
            state.withLock { _ = $0.segments.remove(descriptor) }
            base.close(descriptor)
        }
        func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
            let count = try base.read(descriptor, into: buffer, at: offset)
            let end = offset + Int64(count)
            let before = state.withLock { state -> Bool in
                guard state.segments.contains(descriptor) else { return false }
                if state.appended {
                    state.reads += 1
                    return false
                }
                if end > visibleEnd, offset <= visibleEnd { state.appended = true }
                return true
            }
            if before, end > visibleEnd {
                for index in Int(max(0, visibleEnd - offset))..<count { buffer[index] = 0 }
            }
            return count
        }
    }

    /// A store whose one segment is larger than a read window (1 MiB) and holds small epochs, as an
    /// app writes them, with the end of an epoch 20 KiB before the window's end and its number. The
    /// epoch after that one was synced, so that the commits after it say the bytes before them are
    /// durable: zeros among those bytes are damage, not an unsynced tail.
    private func storeWithALargeSegment(_ directory: TemporaryDirectory) throws -> (
        path: String, visibleEnd: Int64, visibleEpoch: UInt64, lastEpoch: UInt64
    ) {
        let store = directory.appending("store")
        let journal = try openJournal(store, realFileSystem: true)
        var visible: (end: Int64, epoch: UInt64) = (0, 0)
        var index = 0
        while writtenEnd(of: journal) < (1 << 20) + (100 << 10) {
            let state = "{\"offset\":\(index % 977),\"selection\":\"\(UUID())\"}"
            let epoch = try journal.commit([.put(RestorationPath("Main", "Item-\(index % 50)"), Array(state.utf8))])
            if writtenEnd(of: journal) < (1 << 20) - (20 << 10) {
                visible = (Int64(writtenEnd(of: journal)), epoch.epoch)
            } else if epoch.epoch == visible.epoch + 1 {
                try journal.sync()
            }
            index += 1
        }
        let last = try #require(journal.lastCommitted?.epoch)
        try journal.close()
        return (store, visible.end, visible.epoch, last)
    }

    @Test func theFileSetOfASegmentAppendedToDuringTheReadEndsAtWhatTheFirstReadSawInsteadOfReportingDamage()
        throws
    {
        let directory = TemporaryDirectory()
        let store = try storeWithALargeSegment(directory)
        let fileSystem = AppendedAfterTheFirstRead(visibleEnd: store.visibleEnd)
        let set = try JournalReader(path: store.path, recovery: .stopAtDamage, fileSystem: fileSystem).fileSet()
        #expect(fileSystem.readsAfterTheAppend > 0, "the scan read the segment again past its first window")
        #expect(set.lastEpoch?.epoch == store.visibleEpoch)
        #expect(set.files.last?.length == store.visibleEnd && set.files.last?.isSealed == false)
        // Read again, the whole segment is there.
        #expect(try openReader(store.path).fileSet().lastEpoch?.epoch == store.lastEpoch)
    }

    @Test func theHistoryOfASegmentAppendedToDuringTheReadEndsAtWhatTheFirstReadSaw() throws {
        let directory = TemporaryDirectory()
        let store = try storeWithALargeSegment(directory)
        let reader = try JournalReader(
            path: store.path, recovery: .strict, fileSystem: AppendedAfterTheFirstRead(visibleEnd: store.visibleEnd))
        #expect(try reader.history().last?.epoch == store.visibleEpoch)
    }

    @Test func zerosThatStayZerosBeforeLaterRecordsAreStillDamage() throws {
        let directory = TemporaryDirectory()
        let store = try storeWithALargeSegment(directory)
        let segment = store.path + "/" + (try Corruption.segmentNames(in: store.path)).last!
        let handle = try #require(FileHandle(forUpdatingAtPath: segment))
        try handle.seek(toOffset: UInt64(store.visibleEnd))
        try handle.write(contentsOf: Data(count: 4096))
        try handle.close()
        journalError(.damaged) { try openReader(store.path).fileSet() }
    }
}
