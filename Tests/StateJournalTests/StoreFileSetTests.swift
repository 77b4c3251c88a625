import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Copying a store by its file set, and assembling the copy at any epoch.
@Suite struct StoreFileSetTests {
    /// Copies the first `length` bytes of each file of `set` from `source` into `target`.
    func copy(_ set: StoreFileSet, from source: String, to target: String) throws {
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        for file in set.files {
            let handle = try #require(FileHandle(forReadingAtPath: source + "/" + file.name))
            let bytes = try handle.read(upToCount: Int(file.length)) ?? Data()
            try handle.close()
            #expect(bytes.count == Int(file.length))
            try bytes.write(to: URL(fileURLWithPath: target + "/" + file.name))
        }
    }

    func commitEpochs(_ journal: Journal, _ count: Int, from start: Int = 0) throws {
        for index in start..<(start + count) {
            let epoch = try journal.beginEpoch()
            try epoch.put(RestorationPath("Main", "Item-\(index % 5)"), Array("value \(index)".utf8))
            if index % 4 == 3 { try epoch.remove(RestorationPath("Main", "Item-\((index + 1) % 5)")) }
            try epoch.commit(metadata: ["index": "\(index)"])
        }
    }

    @Test func aCopyOfTheFileSetAssembledAtAnyRetainedEpochHasThatEpochsStateAndVerifiesClean() throws {
        let directory = TemporaryDirectory()
        let source = directory.appending("store")
        let journal = try openJournal(source, testOptions(segmentSizeLimit: 512), realFileSystem: true)
        try commitEpochs(journal, 40)
        _ = try journal.compact()
        try commitEpochs(journal, 25, from: 40)
        // Read beside the live writer, as a shipper does.
        let set = try openReader(source).fileSet()
        #expect(set.files.contains { $0.kind == .checkpoint })
        #expect(set.files.filter { !$0.isSealed }.count == 1)
        #expect(set.files.last?.isSealed == false)
        #expect(set.lastEpoch?.epoch == journal.lastCommitted?.epoch)
        for (earlier, later) in zip(
            set.files.filter { $0.kind == .segment }, set.files.filter { $0.kind == .segment }.dropFirst())
        {
            #expect(earlier.lastEpoch == later.baseEpoch)
        }
        let history = try journal.history()
        for (index, info) in history.enumerated() where index % 6 == 0 || index == history.count - 1 {
            let target = directory.appending("copy-\(info.epoch)")
            try copy(set, from: source, to: target)
            let reached = try set.assembleStore(in: URL(fileURLWithPath: target), through: info.epoch)
            #expect(reached?.epoch == info.epoch)
            #expect(try openReader(target).state().entries == journal.state(through: info.epoch).entries)
            #expect(StoreInspector.verify(URL(fileURLWithPath: target)).status == .clean)
            // The copy opens for writing and goes on after the epoch it ends at.
            let reopened = try openJournal(target, testOptions(), realFileSystem: true)
            let next = try reopened.beginEpoch()
            try next.put(RestorationPath("Main", "After"), [1])
            #expect(try next.commit().epoch > info.epoch)
            try reopened.close()
        }
        let latest = directory.appending("copy-latest")
        try copy(set, from: source, to: latest)
        #expect(try set.assembleStore(in: URL(fileURLWithPath: latest))?.epoch == history.last?.epoch)
        try journal.close()
    }

    @Test func assemblingAtAnEpochTheFilesDoNotHoldIsNoSuchEpoch() throws {
        let directory = TemporaryDirectory()
        let source = directory.appending("store")
        let journal = try openJournal(source, testOptions(), realFileSystem: true)
        try commitEpochs(journal, 3)
        let set = try openReader(source).fileSet()
        try copy(set, from: source, to: directory.appending("copy"))
        journalError(.noSuchEpoch) {
            try set.assembleStore(in: URL(fileURLWithPath: directory.appending("copy")), through: 9)
        }
        try journal.close()
    }

    /// A restore assembles what a bucket held, and a forged live segment makes the scan for the
    /// latest epoch long: it must end at the first read after a cancellation (SIGTERM), not run on.
    @Test func assemblingAStoreStopsAtTheFirstReadAfterItIsCancelled() throws {
        let directory = TemporaryDirectory()
        let source = directory.appending("store")
        let journal = try openJournal(source, testOptions(), realFileSystem: true)
        try commitEpochs(journal, 5)
        let set = try openReader(source).fileSet()
        try journal.close()
        let live = try #require(set.files.last { $0.kind == .segment })
        func copyWithForgedTail(_ name: String) throws -> URL {
            let target = directory.appending(name)
            try copy(set, from: source, to: target)
            // Bytes shaped like a record header at every offset: the scan tries each of them.
            let handle = try #require(FileHandle(forWritingAtPath: target + "/" + live.name))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(repeating: 1, count: 4 << 20))
            try handle.close()
            return URL(fileURLWithPath: target)
        }

        let reads = Locked(0)
        let whole = try set.assembleStore(
            in: try copyWithForgedTail("whole"), through: nil,
            isCancelled: {
                reads.withLock { $0 += 1 }
                return false
            })
        #expect(whole?.epoch == 5)
        let allReads = reads.withLock { $0 }
        #expect(allReads > 40, "the scan read \(allReads) times")

        let checks = Locked(0)
        #expect(throws: CancellationError.self) {
            try set.assembleStore(
                in: try copyWithForgedTail("cancelled"), through: nil,
                isCancelled: {
                    checks.withLock { count in
                        count += 1
                        return count >= 20
                    }
                })
        }
        #expect(checks.withLock { $0 } == 20, "reads went on after the cancellation")
    }
}
