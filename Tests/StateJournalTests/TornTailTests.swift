import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// A torn tail (a crash inside the last epoch, or junk after the last commit) is ignored by readers
/// and cut by the next writer, and nothing is ever appended after it.
@Suite struct TornTailTests {
    /// A store of `epochs` committed epochs, the segment's size before the last one, and the model.
    private struct Fixture {
        let directory = TemporaryDirectory()
        var store: String { directory.appending("store") }
        var segment: String
        var model: JournalModel
        var workload: WorkloadGenerator
        var sizeBeforeLast: Int
        var sizeAfterLast: Int

        init(epochs: Int, lastEpochPuts: Int, seed: UInt64) throws {
            var workload = WorkloadGenerator(seed: seed, pathCount: 8, removeAllPercent: 0)
            var model = JournalModel()
            let store = directory.appending("store")
            let first = try openJournal(store)
            try commitEpochs(epochs - 1, first, &workload, &model)
            // Closed, the segment ends with its last record (a live one has zeros written ahead).
            try first.close()
            let segment = store + "/" + (try Corruption.segmentNames(in: store)).last!
            sizeBeforeLast = try fileSize(segment)
            let journal = try openJournal(store)
            // The last epoch: puts of new and known paths, a remove, so that it has batch and commit records.
            var changes: [JournalChange] = []
            for index in 0..<lastEpochPuts {
                let path = workload.paths[index % workload.paths.count]
                changes.append(
                    .put(path, Array("last epoch \(index) \(path)".utf8) + [UInt8](repeating: UInt8(index), count: 40)))
            }
            changes.append(.remove(workload.paths[0]))
            model.commit(try journal.commit(changes, metadata: ["last": "yes"]).epoch, changes)
            try journal.close()
            sizeAfterLast = try fileSize(segment)
            self.segment = segment
            self.model = model
            self.workload = workload
        }
    }

    @Test func truncationAtEveryOffsetOfTheLastEpochReplaysExactlyTheEpochsBefore() throws {
        let fixture = try Fixture(epochs: 4, lastEpochPuts: 3, seed: 1)
        let snapshot = try DirectorySnapshot(of: fixture.store)
        let last = fixture.model.epochs.last!
        let before = fixture.model.epochs.dropLast().last!
        let range = fixture.sizeBeforeLast..<fixture.sizeAfterLast
        #expect(range.count > 50)
        let whole = try Corruption.readFile(fixture.segment)
        var cases = 0
        for cut in range {
            try snapshot.restore(to: fixture.store)
            try Corruption.truncate(fixture.segment, at: cut)
            let torn = tailLength(whole[fixture.sizeBeforeLast..<cut])
            for recovery in [RecoveryMode.stopAtDamage, .strict] {
                let state = try openReader(fixture.store, recovery: recovery).state()
                #expect(state.epoch?.epoch == before, "cut at \(cut)")
                #expect(state.entries == fixture.model.states[before], "cut at \(cut)")
                #expect(state.damage == nil, "cut at \(cut): \(String(describing: state.damage))")
                #expect(state.uncommittedTailBytes == torn, "cut at \(cut)")
            }
            #expect(try openReader(fixture.store).history().map(\.epoch) == Array(fixture.model.epochs.dropLast()))

            // A writer cuts the tail, and the epoch it writes next takes the lost epoch's number.
            let journal = try openJournal(fixture.store)
            #expect(journal.recoveryReport.truncatedTailBytes == torn, "cut at \(cut)")
            #expect(journal.recoveryReport.damage == nil)
            #expect(journal.recoveredState.entries == fixture.model.states[before])
            #expect(try fileSize(fixture.segment) == fixture.sizeBeforeLast)
            let changes: [JournalChange] = [.put(RestorationPath("After", "Cut"), Array("cut \(cut)".utf8))]
            let info = try journal.commit(changes)
            #expect(info.epoch == last, "cut at \(cut)")
            try journal.close()
            let after = try openReader(fixture.store, recovery: .strict).state()
            #expect(after.entries == JournalModel.applying(changes, to: fixture.model.states[before]!), "cut at \(cut)")
            #expect(after.uncommittedTailBytes == 0)
            cases += 1
        }
        noteSweep("truncation inside the last epoch: \(cases) offsets")
        #expect(cases == range.count)
        // Untouched, the store still has every epoch.
        try snapshot.restore(to: fixture.store)
        #expect(try openReader(fixture.store).state().entries == fixture.model.latest)
    }

    @Test func truncationInsideAMultiBatchLastEpochNeverShowsPartOfIt() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var model = JournalModel()
        var workload = WorkloadGenerator(seed: 3)
        let journal = try openJournal(store)
        try commitEpochs(3, journal, &workload, &model)
        let segment = store + "/" + (try Corruption.segmentNames(in: store)).last!
        let sizeBefore = writtenEnd(of: journal)
        // Incompressible states, so that the epoch needs several 32 KiB batch records.
        var random = SplitMix64(seed: 9)
        let big: [JournalChange] = (0..<3).map { .put(RestorationPath("Big", "\($0)"), random.bytes(30_000)) }
        model.commit(try journal.commit(big).epoch, big)
        try journal.close()
        let bytes = try Corruption.readFile(segment)
        let records = Corruption.records(ofSegment: bytes).filter { $0.offset >= sizeBefore }
        #expect(records.count >= 2, "the epoch should need more than one record")
        // Every record boundary, and a stride through the rest, plus the bytes around each boundary.
        var cuts = Set(stride(from: sizeBefore, to: bytes.count, by: 401))
        for record in records {
            for delta in -10...10 where (sizeBefore..<bytes.count).contains(record.offset + delta) {
                cuts.insert(record.offset + delta)
            }
        }
        let previous = model.epochs.dropLast().last!
        noteSweep("truncation inside a multi-record last epoch: \(cuts.count) offsets of \(bytes.count - sizeBefore)")
        for cut in cuts.sorted() {
            try Corruption.writeFile(segment, Array(bytes[..<cut]))
            let state = try openReader(store).state()
            #expect(state.epoch?.epoch == previous, "cut at \(cut)")
            #expect(state.entries == model.states[previous], "cut at \(cut)")
            #expect(state.damage == nil, "cut at \(cut)")
        }
    }

    enum Tail: CaseIterable, Sendable {
        case oneZero, recordHeaderOfZeros, pageOfZeros, fewGarbageBytes, pageOfGarbage, lotsOfGarbage

        /// Zeros after the last record are what a writer writes ahead of its records, not a tail.
        var isZeros: Bool { self == .oneZero || self == .recordHeaderOfZeros || self == .pageOfZeros }

        var bytes: [UInt8] {
            switch self {
            case .oneZero: Corruption.zeros(1)
            case .recordHeaderOfZeros: Corruption.zeros(9)
            case .pageOfZeros: Corruption.zeros(4096)
            case .fewGarbageBytes: Corruption.garbage(5, seed: 11)
            case .pageOfGarbage: Corruption.garbage(4096, seed: 12)
            case .lotsOfGarbage: Corruption.garbage(100_000, seed: 13)
            }
        }
    }

    @Test(arguments: Tail.allCases)
    func zerosOrGarbageAfterTheLastCommitAreCutByTheNextWriter(tail: Tail) throws {
        var fixture = try Fixture(epochs: 5, lastEpochPuts: 4, seed: 2)
        let extra = tail.bytes
        try Corruption.append(fixture.segment, extra)

        for recovery in [RecoveryMode.stopAtDamage, .strict] {
            let state = try openReader(fixture.store, recovery: recovery).state()
            #expect(state.epoch?.epoch == fixture.model.epochs.last)
            #expect(state.entries == fixture.model.latest)
            #expect(state.damage == nil)
            #expect(state.uncommittedTailBytes == (tail.isZeros ? 0 : Int64(extra.count)))
        }

        let journal = try openJournal(fixture.store)
        #expect(journal.recoveryReport.truncatedTailBytes == (tail.isZeros ? 0 : Int64(extra.count)))
        #expect(journal.recoveryReport.damage == nil)
        #expect(journal.recoveryReport.quarantinedFiles.isEmpty)
        #expect(try fileSize(fixture.segment) == fixture.sizeAfterLast)
        try commitEpochs(5, journal, &fixture.workload, &fixture.model)
        try journal.close()

        let reopened = try openJournal(fixture.store, testOptions(recovery: .strict))
        #expect(reopened.recoveryReport.isClean)
        for epoch in fixture.model.epochs {
            #expect(try reopened.state(through: epoch).entries == fixture.model.states[epoch], "epoch \(epoch)")
        }
        #expect(try reopened.history().map(\.epoch) == fixture.model.epochs)
        try reopened.close()
    }

    @Test func aLeftoverTemporaryManifestAndAnUnnamedSegmentAreRemovedOnOpen() throws {
        let fixture = try Fixture(epochs: 3, lastEpochPuts: 2, seed: 4)
        // What a crash in the middle of a segment roll leaves: a new segment holding at most its
        // header, and a temporary manifest.
        try Corruption.writeFile(fixture.store + "/segment-00000000000000ff.sjl", Corruption.garbage(44, seed: 1))
        try Corruption.writeFile(fixture.store + "/MANIFEST.tmp", Corruption.garbage(30, seed: 2))
        // More than a header, in which no commit record says a sync reached it: a segment a roll
        // started, whose seal a power cut lost, holding only unsynced bytes. It is removed.
        try Corruption.writeFile(fixture.store + "/segment-00000000000000fe.sjl", Corruption.garbage(100, seed: 3))
        #expect(try openReader(fixture.store, recovery: .strict).state().entries == fixture.model.latest)
        let journal = try openJournal(fixture.store)
        let removed: Set = ["segment-00000000000000ff.sjl", "MANIFEST.tmp", "segment-00000000000000fe.sjl"]
        #expect(Set(journal.recoveryReport.removedLeftovers) == removed)
        #expect(journal.recoveryReport.quarantinedFiles == [])
        #expect(journal.recoveryReport.unsyncedTail?.file == "segment-00000000000000fe.sjl")
        #expect(journal.recoveryReport.unsyncedTail?.bytesDropped == 100)
        #expect(journal.recoveryReport.damage == nil)
        #expect(journal.recoveredState.entries == fixture.model.latest)
        try journal.close()
        #expect(try Corruption.segmentNames(in: fixture.store).count == 1)
    }

    @Test func anUnnamedSegmentWhoseRecordsWereSyncedIsSetAsideNotRemoved() throws {
        let fixture = try Fixture(epochs: 3, lastEpochPuts: 2, seed: 5)
        // A segment of another store written under everyCommit: its later commits say a sync
        // reached the bytes before them, so no power cut can explain it. It is kept as evidence.
        let other = fixture.directory.appending("other")
        let writer = try openJournal(other, testOptions(durability: .everyCommit))
        for value in 0..<3 { try writer.commit([.put(RestorationPath("Other"), [UInt8(value)])]) }
        try writer.close()
        let synced = try Corruption.readFile(other + "/" + (try Corruption.segmentNames(in: other))[0])
        try Corruption.writeFile(fixture.store + "/segment-00000000000000fe.sjl", synced)
        let journal = try openJournal(fixture.store)
        #expect(journal.recoveryReport.quarantinedFiles == ["damaged-00000000000000fe-at-0.bin"])
        #expect(journal.recoveryReport.unsyncedTail == nil)
        #expect(try Corruption.readFile(fixture.store + "/damaged-00000000000000fe-at-0.bin") == synced)
        #expect(journal.recoveredState.entries == fixture.model.latest)
        try journal.close()
    }
}
