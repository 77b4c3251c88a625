import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// A roll seals the active segment and continues in a new one without waiting for the manifest:
/// readers and the next open follow the seal, and only a seal that leads to a matching header counts.
@Suite struct SegmentRollTests {
    /// A store of 10 epochs whose second segment (epochs 6 to 10) the manifest on disk does not name:
    /// the manifest is the one written before the roll, as a crash before the roll's manifest leaves it.
    struct UnnamedSegmentStore {
        let directory = TemporaryDirectory()
        var model = JournalModel()
        var path: String { directory.path }
        var newSegment: String { directory.appending(FileNames.segment(2)) }

        init() throws {
            var workload = WorkloadGenerator(seed: 31, pathCount: 12)
            let first = try openJournal(directory.path, realFileSystem: true)
            try commitEpochs(5, first, &workload, &model)
            try first.close()
            // Reopened with the first segment at its size limit, the next epoch rolls.
            let limit = try fileSize(directory.appending(FileNames.segment(1)))
            let beforeRoll = try Corruption.readFile(directory.appending(FileNames.manifest))
            let journal = try openJournal(directory.path, testOptions(segmentSizeLimit: limit), realFileSystem: true)
            try commitEpochs(5, journal, &workload, &model)
            try journal.close()
            try Corruption.writeFile(directory.appending(FileNames.manifest), beforeRoll)
            let stored = try StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path).readStoredManifest()
            #expect(stored.segments == [1], "the manifest on disk names only the sealed segment")
        }
    }

    @Test func aReaderFollowsTheSealToASegmentTheManifestDoesNotNameYet() throws {
        let store = try UnnamedSegmentStore()
        let reader = try openReader(store.path)
        let state = try reader.state()
        #expect(state.epoch?.epoch == 10)
        #expect(state.entries == store.model.latest)
        #expect(try reader.history().map(\.epoch) == Array(1...10))
        #expect(try reader.state(through: 7).entries == store.model.states[7])
    }

    @Test func openingAdoptsTheSegmentTheSealLeadsToAndNamesItInTheManifest() throws {
        let store = try UnnamedSegmentStore()
        let journal = try openJournal(store.path, realFileSystem: true)
        #expect(journal.recoveredState.epoch?.epoch == 10)
        #expect(journal.recoveredState.entries == store.model.latest)
        #expect(journal.recoveryReport.isClean)
        let stored = try StoreDirectory(fileSystem: PosixFileSystem(), path: store.path).readStoredManifest()
        #expect(stored.segments == [1, 2])
        #expect(stored.nextFileSequence >= 3)

        var workload = WorkloadGenerator(seed: 32, pathCount: 12)
        var model = store.model
        try commitEpochs(3, journal, &workload, &model)
        try journal.close()
        let reopened = try openJournal(store.path, realFileSystem: true)
        defer { try? reopened.close() }
        #expect(reopened.recoveryReport.isClean)
        #expect(reopened.recoveredState.entries == model.latest)
        #expect(try reopened.history().map(\.epoch) == Array(1...13))
    }

    /// Ways the segment after a seal can fail to continue it.
    enum Mismatch: String, CaseIterable, CustomTestStringConvertible {
        case damagedHeader, headerOfAnotherStore, headerWithAnotherBaseEpoch, sealCutOff
        var testDescription: String { rawValue }
    }

    @Test(arguments: Mismatch.allCases)
    func aSegmentTheSealDoesNotLeadToIsSetAsideAndTheStoreOpensAtTheSeal(mismatch: Mismatch) throws {
        let store = try UnnamedSegmentStore()
        var header = Array(try Corruption.readFile(store.newSegment)[0..<SegmentHeader.size])
        let decoded = try header.withUnsafeBytes { try SegmentHeader.decode($0) }
        switch mismatch {
        case .damagedHeader:
            header[20] ^= 0x40
        case .headerOfAnotherStore:
            header = SegmentHeader(storeID: .random(), sequence: decoded.sequence, baseEpoch: decoded.baseEpoch)
                .encoded()
        case .headerWithAnotherBaseEpoch:
            header = SegmentHeader(
                storeID: decoded.storeID, sequence: decoded.sequence, baseEpoch: decoded.baseEpoch - 1
            ).encoded()
        case .sealCutOff:
            let first = directory(store, FileNames.segment(1))
            let records = Corruption.records(ofSegment: try Corruption.readFile(first))
            try Corruption.truncate(first, at: records.last!.offset)
        }
        if mismatch != .sealCutOff { try Corruption.overwrite(store.newSegment, at: 0, with: header) }

        let reader = try openReader(store.path)
        #expect(try reader.state().entries == store.model.states[5], "readers stop at the seal")
        let journal = try openJournal(store.path, realFileSystem: true)
        defer { try? journal.close() }
        #expect(journal.recoveredState.epoch?.epoch == 5)
        #expect(journal.recoveredState.entries == store.model.states[5])
        // The records in it are kept for inspection, never deleted.
        #expect(journal.recoveryReport.quarantinedFiles == [FileNames.quarantine(2, offset: 0)])
        #expect(!FileManager.default.fileExists(atPath: store.newSegment))
        // Epoch numbers seen there are not used again.
        let next = try journal.commit([.put(RestorationPath("After"), [1])])
        #expect(next.epoch > 5)
    }

    private func directory(_ store: UnnamedSegmentStore, _ name: String) -> String { store.directory.appending(name) }

    @Test(arguments: [Durability.none, .everyCommit])
    func commitsGoOnWhileACompactionWaitsForTheDiskToWriteTheManifest(durability: Durability) throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        var options = testOptions(durability: durability)
        options.compaction = .manual
        let journal = try Journal.open(path: directory.path, options: options, fileSystem: fileSystem)
        var workload = WorkloadGenerator(seed: 33, pathCount: 20)
        var model = JournalModel()
        try commitEpochs(10, journal, &workload, &model)

        // The manifest is replaced by a rename: hold it, as a disk that takes its time would.
        fileSystem.hold([.rename])
        let compaction = Locked<Result<CompactionReport?, any Error>?>(nil)
        let thread = Thread {
            let result = Result { try journal.compact() }
            compaction.withLock { $0 = result }
        }
        thread.start()
        #expect(
            fileSystem.waitForHeldCall(until: Date(timeIntervalSinceNow: 600)),
            "the compaction reaches its manifest write")

        // The compaction has switched to a new segment and is waiting on the disk; writers are not.
        try commitEpochs(20, journal, &workload, &model)
        #expect(compaction.withLock { $0 } == nil, "the manifest write is still held")
        #expect(try journal.state().entries == model.latest)
        #expect(try openReader(directory.path).state().entries == model.latest, "a reader follows the seal meanwhile")

        fileSystem.release()
        while compaction.withLock({ $0 }) == nil { usleep(1_000) }
        let report = try #require(try compaction.withLock { $0 }!.get())
        #expect(report.checkpointEpoch == 10)
        try commitEpochs(5, journal, &workload, &model)
        try journal.close()
        let reopened = try openJournal(directory.path)
        defer { try? reopened.close() }
        #expect(reopened.recoveryReport.isClean)
        #expect(reopened.recoveredState.entries == model.latest)
    }
}
