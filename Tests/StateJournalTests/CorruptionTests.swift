import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Damage before the tail: default replay stops at the last consistent epoch and says where,
/// strict mode throws, and a writer keeps the damaged bytes aside and carries on.
///
/// Damage is bytes that were durable and are now wrong, so the stores here are written under
/// ``Durability/everyCommit``: each commit record says the epochs before it were synced. (Bytes no
/// sync was known to reach are an unsynced tail instead: see `UnsyncedTailTests`.)
@Suite struct CorruptionTests {
    private struct Fixture {
        let directory = TemporaryDirectory()
        var store: String { directory.appending("store") }
        var model = JournalModel()
        var workload = WorkloadGenerator(seed: 21, pathCount: 6, removeAllPercent: 0)
        /// Per segment: its name and the end offset of each epoch in it.
        var segments: [String] = []
        var epochEnds: [UInt64: (segment: String, end: Int)] = [:]

        init(epochs: Int, segmentSizeLimit: Int = 64 << 20) throws {
            let journal = try openJournal(
                store, testOptions(durability: .everyCommit, segmentSizeLimit: segmentSizeLimit))
            for _ in 0..<epochs {
                let changes = workload.nextEpoch()
                let info = try journal.commit(changes, metadata: ["v": "1"])
                model.commit(info.epoch, changes)
                let segment = try Corruption.segmentNames(in: store).last!
                epochEnds[info.epoch] = (segment, writtenEnd(of: journal))
            }
            try journal.close()
            segments = try Corruption.segmentNames(in: store)
        }

        func path(_ segment: String) -> String { store + "/" + segment }

        /// The byte range of an epoch's records in its segment.
        func range(of epoch: UInt64) -> Range<Int> {
            let (segment, end) = epochEnds[epoch]!
            let start =
                epochEnds[epoch - 1].flatMap { $0.segment == segment ? $0.end : nil } ?? Corruption.segmentHeaderSize
            return start..<end
        }
    }

    /// Reads a store whose `segment` is damaged at `offset`, in both modes, and checks the report.
    private func expectDamage(
        in fixture: Fixture, segment: String, at recordOffset: Int, lastConsistent: UInt64?, epochsLost: Int?,
        context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let state = try openReader(fixture.store).state()
        let damage = try #require(state.damage, "\(context): no damage reported", sourceLocation: sourceLocation)
        #expect(damage.file == segment, "\(context)", sourceLocation: sourceLocation)
        #expect(damage.offset == Int64(recordOffset), "\(context): \(damage)", sourceLocation: sourceLocation)
        #expect(damage.lastConsistentEpoch == lastConsistent, "\(context)", sourceLocation: sourceLocation)
        if let epochsLost {
            #expect(damage.epochsLost == epochsLost, "\(context): \(damage)", sourceLocation: sourceLocation)
        }
        #expect(damage.bytesDropped > 0, "\(context)", sourceLocation: sourceLocation)
        #expect(state.epoch?.epoch == lastConsistent, "\(context)", sourceLocation: sourceLocation)
        #expect(
            state.entries == (lastConsistent.flatMap { fixture.model.states[$0] } ?? [:]), "\(context)",
            sourceLocation: sourceLocation)
        let history = try openReader(fixture.store).history().map(\.epoch)
        #expect(
            history == fixture.model.epochs.filter { epoch in lastConsistent.map { epoch <= $0 } ?? false },
            "\(context)", sourceLocation: sourceLocation)

        let strict = journalError(.damaged, sourceLocation: sourceLocation) {
            try openReader(fixture.store, recovery: .strict).state()
        }
        #expect(
            strict?.file?.hasSuffix("/" + segment) == true, "\(context): \(String(describing: strict))",
            sourceLocation: sourceLocation)
        #expect(strict?.offset == Int64(recordOffset), "\(context)", sourceLocation: sourceLocation)
        journalError(.damaged, sourceLocation: sourceLocation) {
            try openJournal(fixture.store, testOptions(recovery: .strict))
        }
    }

    /// Opens a writer on the damaged store, checks what it set aside, writes an epoch and reopens.
    private func expectWriterContinues(
        _ fixture: Fixture, damaged: [UInt8], segment: String, committedEnd: Int, lastConsistent: UInt64?,
        context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let journal = try openJournal(fixture.store)
        let report = journal.recoveryReport
        #expect(report.damage != nil, "\(context)", sourceLocation: sourceLocation)
        #expect(journal.recoveredState.epoch?.epoch == lastConsistent, "\(context)", sourceLocation: sourceLocation)
        let sequence = segment.dropFirst("segment-".count).prefix(16)
        let quarantine = "damaged-\(sequence)-at-\(committedEnd).bin"
        #expect(
            report.quarantinedFiles.first == quarantine, "\(context): \(report.quarantinedFiles)",
            sourceLocation: sourceLocation)
        let kept = try? Corruption.readFile(fixture.store + "/" + quarantine)
        #expect(
            kept == Array(damaged[committedEnd...]), "\(context): the damaged bytes are kept",
            sourceLocation: sourceLocation)

        let changes: [JournalChange] = [.put(RestorationPath("Fresh"), Array(context.utf8))]
        let info = try journal.commit(changes)
        let highest = fixture.model.epochs.last!
        #expect(
            info.epoch == highest + 1, "\(context): numbers keep growing past every epoch seen",
            sourceLocation: sourceLocation)
        try journal.close()

        let reopened = try openJournal(fixture.store, testOptions(recovery: .strict))
        #expect(
            reopened.recoveryReport.isClean, "\(context): \(reopened.recoveryReport)", sourceLocation: sourceLocation)
        let base = lastConsistent.flatMap { fixture.model.states[$0] } ?? [:]
        #expect(
            reopened.recoveredState.entries == JournalModel.applying(changes, to: base), "\(context)",
            sourceLocation: sourceLocation)
        let expectedHistory =
            fixture.model.epochs.filter { epoch in lastConsistent.map { epoch <= $0 } ?? false } + [info.epoch]
        #expect(try reopened.history().map(\.epoch) == expectedHistory, "\(context)", sourceLocation: sourceLocation)
        try reopened.close()
    }

    @Test func aFlippedByteInAnyRecordOfAnEarlyEpochStopsReplayBeforeIt() throws {
        let fixture = try Fixture(epochs: 6)
        #expect(fixture.segments.count == 1)
        let segment = fixture.segments[0]
        let original = try Corruption.readFile(fixture.path(segment))
        let snapshot = try DirectorySnapshot(of: fixture.store)
        let records = Corruption.records(ofSegment: original)
        let target: UInt64 = 2
        let range = fixture.range(of: target)
        var cases = 0
        var writerCases = 0
        for offset in range {
            try snapshot.restore(to: fixture.store)
            try Corruption.flipByte(fixture.path(segment), at: offset)
            let damaged = try Corruption.readFile(fixture.path(segment))
            let record = records.first { $0.offset <= offset && offset < $0.end }!
            // Epoch 2's commit survives a flip in its batch, so it counts among the epochs lost.
            let lost = record.type == Corruption.RecordSpan.commit ? 4 : 5
            let context = "byte \(offset) of \(segment) (record at \(record.offset), type \(record.type))"
            try expectDamage(
                in: fixture, segment: segment, at: record.offset, lastConsistent: target - 1, epochsLost: lost,
                context: context)
            // The writer's repair does not depend on where in a record the byte is: every record
            // header byte, and every fifth byte of the rest.
            if offset - record.offset < Corruption.recordHeaderSize || offset % 5 == 0 {
                try expectWriterContinues(
                    fixture, damaged: damaged, segment: segment, committedEnd: range.lowerBound,
                    lastConsistent: target - 1, context: context)
                writerCases += 1
            }
            cases += 1
        }
        noteSweep("flipped bytes in epoch 2: \(cases) offsets read, \(writerCases) repaired by a writer")
        #expect(cases == range.count && cases > 40)
    }

    @Test func aFlippedByteInTheSegmentHeaderStopsReplayAtTheSegmentStart() throws {
        let fixture = try Fixture(epochs: 4)
        let segment = fixture.segments[0]
        let snapshot = try DirectorySnapshot(of: fixture.store)
        for offset in 0..<Corruption.segmentHeaderSize {
            try snapshot.restore(to: fixture.store)
            try Corruption.flipByte(fixture.path(segment), at: offset)
            let damaged = try Corruption.readFile(fixture.path(segment))
            let context = "header byte \(offset)"
            try expectDamage(in: fixture, segment: segment, at: 0, lastConsistent: nil, epochsLost: 4, context: context)
            try expectWriterContinues(
                fixture, damaged: damaged, segment: segment, committedEnd: 0, lastConsistent: nil, context: context)
        }
    }

    @Test func damageInAnEarlierSegmentSetsTheLaterSegmentsAside() throws {
        let fixture = try Fixture(epochs: 24, segmentSizeLimit: 1024)
        #expect(fixture.segments.count >= 3, "\(fixture.segments)")
        let snapshot = try DirectorySnapshot(of: fixture.store)
        let first = fixture.segments[0]
        let second = fixture.segments[1]
        let epochsInFirst = fixture.model.epochs.filter { fixture.epochEnds[$0]!.segment == first }
        let epochsInSecond = fixture.model.epochs.filter { fixture.epochEnds[$0]!.segment == second }
        let original = try Corruption.readFile(fixture.path(first))
        let records = Corruption.records(ofSegment: original)

        // A byte in the first segment's second epoch, in every record of it.
        let target = epochsInFirst[1]
        let range = fixture.range(of: target)
        for record in records where range.contains(record.offset) {
            try snapshot.restore(to: fixture.store)
            try Corruption.flipByte(fixture.path(first), at: record.offset + record.length / 2)
            let damaged = try Corruption.readFile(fixture.path(first))
            let context = "record at \(record.offset) of \(first)"
            try expectDamage(
                in: fixture, segment: first, at: record.offset, lastConsistent: target - 1, epochsLost: nil,
                context: context)
            // Every later commit, in this segment and the ones after it, is counted as lost.
            let damage = try openReader(fixture.store).state().damage
            #expect(
                damage?.epochsLost ?? 0 >= fixture.model.epochs.count - Int(target),
                "\(context): \(String(describing: damage))")
            try expectWriterContinues(
                fixture, damaged: damaged, segment: first, committedEnd: range.lowerBound, lastConsistent: target - 1,
                context: context)
            for later in fixture.segments.dropFirst() {
                let name = "damaged-\(later.dropFirst("segment-".count).prefix(16))-at-0.bin"
                #expect(
                    try Corruption.readFile(fixture.store + "/" + name) == snapshot.files[later],
                    "\(context): \(later) kept as \(name)")
            }
        }

        // The second segment's header: replay ends with the first segment.
        try snapshot.restore(to: fixture.store)
        try Corruption.flipByte(fixture.path(second), at: 20)
        try expectDamage(
            in: fixture, segment: second, at: 0, lastConsistent: epochsInFirst.last, epochsLost: nil,
            context: "second header")
        let damaged = try Corruption.readFile(fixture.path(second))
        try expectWriterContinues(
            fixture, damaged: damaged, segment: second, committedEnd: 0, lastConsistent: epochsInFirst.last,
            context: "second header")

        // A segment the manifest names has gone missing.
        try snapshot.restore(to: fixture.store)
        try FileManager.default.removeItem(atPath: fixture.path(second))
        let state = try openReader(fixture.store).state()
        #expect(state.damage?.file == second)
        #expect(state.epoch?.epoch == epochsInFirst.last)
        journalError(.damaged) { try openReader(fixture.store, recovery: .strict).state() }
        let journal = try openJournal(fixture.store)
        #expect(journal.recoveredState.entries == fixture.model.states[epochsInFirst.last!])
        let info = try journal.commit([.put(RestorationPath("Fresh"), [1])])
        #expect(info.epoch == fixture.model.epochs.last! + 1)
        try journal.close()
        #expect(epochsInSecond.count > 0)
    }

    @Test func damageAfterACheckpointStopsReplayBetweenTheCheckpointAndTheDamage() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var options = testOptions(durability: .everyCommit)
        options.retention = RetentionPolicy(checkpoints: 1)
        options.compaction = .manual
        var workload = WorkloadGenerator(seed: 41, pathCount: 6, removeAllPercent: 0)
        var model = JournalModel()
        let journal = try openJournal(store, options)
        try commitEpochs(4, journal, &workload, &model)
        try journal.compact()
        let segment = try Corruption.segmentNames(in: store).last!
        var ends: [UInt64: Int] = [:]
        for _ in 0..<4 {
            try commitEpochs(1, journal, &workload, &model)
            ends[model.epochs.last!] = writtenEnd(of: journal)
        }
        try journal.close()
        #expect(
            try Corruption.segmentNames(in: store) == [segment], "retention keeps only the segment after the checkpoint"
        )
        let snapshot = try DirectorySnapshot(of: store)
        let original = try Corruption.readFile(store + "/" + segment)
        let records = Corruption.records(ofSegment: original)

        // Every byte of epoch 6, then two bytes of the segment header.
        var offsets = Array(ends[5]!..<ends[6]!)
        offsets += [4, 30]
        for offset in offsets {
            try snapshot.restore(to: store)
            try Corruption.flipByte(store + "/" + segment, at: offset)
            let inHeader = offset < Corruption.segmentHeaderSize
            let lastConsistent: UInt64 = inHeader ? 4 : 5
            let recordOffset = inHeader ? 0 : records.first { $0.offset <= offset && offset < $0.end }!.offset
            let context = "byte \(offset) after the checkpoint"
            let state = try openReader(store).state()
            #expect(state.damage?.offset == Int64(recordOffset), "\(context): \(String(describing: state.damage))")
            #expect(state.damage?.lastConsistentEpoch == lastConsistent, "\(context)")
            #expect(state.epoch?.epoch == lastConsistent, "\(context)")
            #expect(state.entries == model.states[lastConsistent], "\(context)")
            journalError(.damaged) { try openReader(store, recovery: .strict).state() }

            let writer = try openJournal(store, options)
            #expect(writer.recoveredState.entries == model.states[lastConsistent], "\(context)")
            let info = try writer.commit([.put(RestorationPath("Fresh"), [1])])
            #expect(info.epoch == 9, "\(context)")
            try writer.close()
            let reopened = try openJournal(store, testOptions(recovery: .strict))
            #expect(try reopened.history().map(\.epoch) == Array(4...lastConsistent) + [9], "\(context)")
            #expect(
                reopened.recoveredState.entries
                    == JournalModel.applying([.put(RestorationPath("Fresh"), [1])], to: model.states[lastConsistent]!))
            try reopened.close()
        }
        noteSweep("flipped bytes after a checkpoint: \(offsets.count) offsets")
    }

    @Test func aDamagedManifestIsRefusedWithAClearErrorAtEveryByte() throws {
        let fixture = try Fixture(epochs: 3)
        let manifest = fixture.store + "/MANIFEST"
        let original = try Corruption.readFile(manifest)
        for offset in original.indices {
            var bytes = original
            bytes[offset] ^= 0x5A
            try Corruption.writeFile(manifest, bytes)
            journalError(.damaged) { try openReader(fixture.store) }
            journalError(.damaged) { try openJournal(fixture.store) }
        }
        for length in [0, 1, 40, original.count - 1] {
            try Corruption.writeFile(manifest, Array(original[..<length]))
            journalError(.damaged) { try openReader(fixture.store) }
        }
        try Corruption.writeFile(manifest, original)
        #expect(try openReader(fixture.store, recovery: .strict).state().entries == fixture.model.latest)
    }
}
