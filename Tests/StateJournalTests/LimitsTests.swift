import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// The documented limits: enforced on write with `.limitExceeded` (the epoch stays usable), and on
/// read as damage, without ever allocating what a corrupt length claims.
@Suite struct LimitsTests {
    @Test func oversizedStatePathsAndMetadataAreRefusedAndTheEpochStaysUsable() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store)
        let epoch = try journal.beginEpoch()
        let ok = RestorationPath("Main")

        let tooBig = [UInt8](repeating: 7, count: JournalLimits.maximumStateSize + 1)
        let error = journalError(.limitExceeded) { try epoch.put(ok, tooBig) }
        #expect(error?.message.contains("\(JournalLimits.maximumStateSize)") == true)

        let deepest = RestorationPath((0..<JournalLimits.maximumPathDepth).map { "c\($0)" })
        journalError(.limitExceeded) { try epoch.put(deepest.appending("one-more"), [1]) }
        journalError(.limitExceeded) { try epoch.remove(deepest.appending("one-more")) }
        let longest = String(repeating: "x", count: JournalLimits.maximumComponentLength)
        journalError(.limitExceeded) { try epoch.put(RestorationPath("Main", longest + "x"), [1]) }
        // Component length counts UTF-8 bytes, not characters.
        let accented = String(repeating: "é", count: JournalLimits.maximumComponentLength / 2 + 1)
        journalError(.limitExceeded) { try epoch.put(RestorationPath(accented), [1]) }
        journalError(.invalidPath) { try epoch.put(RestorationPath([]), [1]) }

        let tooMany = Dictionary(
            uniqueKeysWithValues: (0...JournalLimits.maximumMetadataCount).map { ("key\($0)", "v") })
        journalError(.limitExceeded) { try epoch.commit(metadata: tooMany) }
        let longValue = String(repeating: "v", count: JournalLimits.maximumMetadataItemLength + 1)
        journalError(.limitExceeded) { try epoch.commit(metadata: ["bundleVersion": longValue]) }
        journalError(.limitExceeded) { try epoch.commit(metadata: [longValue: "1"]) }

        // The same epoch still takes entries at the limits and commits.
        try epoch.put(ok, [1, 2, 3])
        try epoch.put(deepest, [4])
        try epoch.put(RestorationPath("Main", longest), [5])
        let fullMetadata = Dictionary(
            uniqueKeysWithValues: (0..<JournalLimits.maximumMetadataCount).map { ("key\($0)", "v\($0)") })
        let info = try epoch.commit(metadata: fullMetadata)
        #expect(info.epoch == 1)
        try journal.close()

        let state = try openReader(store, recovery: .strict).state()
        #expect(state.entries == [ok: [1, 2, 3], deepest: [4], RestorationPath("Main", longest): [5]])
        #expect(state.epoch?.metadata == fullMetadata)
    }

    @Test func theConvenienceCommitRefusesAnOversizedChangeAndWritesNothing() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store)
        try journal.commit([.put(RestorationPath("Main"), [1])])
        let tooDeep = RestorationPath((0...JournalLimits.maximumPathDepth).map { "c\($0)" })
        journalError(.limitExceeded) { try journal.commit([.put(RestorationPath("Main"), [2]), .put(tooDeep, [3])]) }
        #expect(try journal.commit([.put(RestorationPath("Other"), [4])]).epoch == 2)
        try journal.close()
        #expect(
            try openReader(store, recovery: .strict).state().entries == [
                RestorationPath("Main"): [1], RestorationPath("Other"): [4],
            ])
    }

    /// A store of a few epochs in one segment, with its records.
    private func smallStore(_ directory: TemporaryDirectory) throws -> (
        store: String, segment: String, model: JournalModel, records: [Corruption.RecordSpan]
    ) {
        let store = directory.appending("store")
        var workload = WorkloadGenerator(seed: 31, pathCount: 5, removeAllPercent: 0)
        var model = JournalModel()
        // Under everyCommit each commit says the epochs before it were synced: damage there is damage.
        let journal = try openJournal(store, testOptions(durability: .everyCommit))
        try commitEpochs(5, journal, &workload, &model)
        try journal.close()
        let segment = store + "/" + (try Corruption.segmentNames(in: store))[0]
        return (store, segment, model, Corruption.records(ofSegment: try Corruption.readFile(segment)))
    }

    /// Reads `store` through a counting file system and returns the state and the largest read.
    private func readCounting(_ store: String) throws -> (JournalState, largestRead: Int) {
        let fileSystem = FaultInjectingFileSystem()
        let state = try JournalReader(path: store, recovery: .stopAtDamage, fileSystem: fileSystem).state()
        _ = try JournalReader(path: store, recovery: .stopAtDamage, fileSystem: fileSystem).history()
        return (state, fileSystem.largestRead)
    }

    @Test(arguments: [UInt32.max, 0x7FFF_FFFF, UInt32(JournalLimits.maximumRecordLength), UInt32(20 << 20)])
    func aRecordClaimingAHugeLengthIsDamageAndIsNeverAllocated(claimedLength: UInt32) throws {
        let directory = TemporaryDirectory()
        let (store, segment, model, records) = try smallStore(directory)
        let size = try fileSize(segment)
        // The length field of the second epoch's first record: damage in the middle.
        let firstOfSecond = records[records.firstIndex { $0.type == Corruption.RecordSpan.commit }! + 1]
        try Corruption.overwrite(
            segment, at: firstOfSecond.offset + 4, with: Corruption.littleEndianBytes(claimedLength))
        let (state, largestRead) = try readCounting(store)
        #expect(state.damage?.offset == Int64(firstOfSecond.offset))
        #expect(state.damage?.lastConsistentEpoch == 1)
        #expect(state.entries == model.states[1])
        #expect(largestRead <= size, "a read of \(largestRead) bytes from a \(size)-byte store")
        journalError(.damaged) { try openReader(store, recovery: .strict).state() }

        // At the tail it is a torn record: ignored, and cut by the next writer.
        try Corruption.truncate(segment, at: firstOfSecond.offset + Corruption.recordHeaderSize + 3)
        let (tail, tailRead) = try readCounting(store)
        #expect(tail.damage == nil)
        #expect(tail.entries == model.states[1])
        #expect(tailRead <= size)
        let cutBytes = try Corruption.readFile(segment)[firstOfSecond.offset...]
        let journal = try openJournal(store)
        #expect(journal.recoveryReport.truncatedTailBytes == tailLength(cutBytes))
        try journal.close()
    }

    /// A batch payload with the given descriptor bytes and a raw body, framed with valid checksums.
    private func craftedBatch(entries: [UInt8], body: [UInt8]) -> [UInt8] {
        let payload =
            entries + [0] + Corruption.varint(UInt64(body.count))
            + Corruption.littleEndianBytes(TestCRC32C.checksum(body)) + body
        return Corruption.frame(type: Corruption.RecordSpan.batch, payload: payload)
    }

    @Test func recordsWithValidChecksumsButImpossibleCountsAreNeverAllocated() throws {
        let put: UInt8 = 1
        let cases: [(String, [UInt8])] = [
            ("entry count 2^40", craftedBatch(entries: Corruption.varint(1 << 40) + [put, 0, 0], body: [])),
            ("state length 2^40", craftedBatch(entries: [1, put, 0] + Corruption.varint(1 << 40), body: [])),
            (
                "body length 2^40",
                Corruption.frame(
                    type: Corruption.RecordSpan.batch,
                    payload: [1, put, 0, 0, 0] + Corruption.varint(1 << 40) + [0, 0, 0, 0])
            ),
            ("path depth 10^6", craftedBatch(entries: [1, put, 0, 0], body: Corruption.varint(1_000_000))),
            ("component length 2^33", craftedBatch(entries: [1, put, 0, 0], body: [1] + Corruption.varint(1 << 33))),
            (
                "reference to an undefined path",
                craftedBatch(entries: [1, put] + Corruption.varint(1 << 20) + [0], body: [])
            ),
            ("a varint of 11 bytes", craftedBatch(entries: [1, put] + [UInt8](repeating: 0xFF, count: 11), body: [])),
            // A commit (batch count 1, so the digest is present) claiming 2^30 metadata items.
            (
                "metadata count 2^30",
                Corruption.frame(
                    type: Corruption.RecordSpan.commit,
                    payload: [99, 1, 1, 0, 0, 0, 0, 5, 1] + Corruption.varint(1 << 30))
            ),
        ]
        for (name, record) in cases {
            let directory = TemporaryDirectory()
            let (store, segment, model, _) = try smallStore(directory)
            let size = try fileSize(segment)
            try Corruption.append(segment, record)
            // No commit after the record says it was synced, so replay stops before it as before an
            // unsynced tail; what matters here is that nothing is allocated for its claims.
            let (state, largestRead) = try readCounting(store)
            #expect(
                state.damage == nil && state.unsyncedTail?.offset == Int64(size),
                "\(name): \(String(describing: state.unsyncedTail))")
            #expect(state.epoch?.epoch == model.epochs.last, "\(name)")
            #expect(state.entries == model.latest, "\(name)")
            #expect(largestRead <= size + record.count, "\(name): read \(largestRead) bytes at once")
            #expect(try openReader(store, recovery: .strict).state().entries == model.latest, "\(name)")
            // The writer cuts the record off and continues.
            let journal = try openJournal(store)
            #expect(journal.recoveryReport.truncatedTailBytes == tailLength(record), "\(name)")
            #expect(journal.recoveryReport.quarantinedFiles.isEmpty, "\(name)")
            let info = try journal.commit([.put(RestorationPath("After"), [1])])
            #expect(info.epoch == model.epochs.last! + 1, "\(name)")
            try journal.close()
            #expect(try openReader(store, recovery: .strict).state().entries.count == model.latest.count + 1, "\(name)")
        }
    }

    @Test func aManifestClaimingAHugeSegmentCountOrSizeIsRefusedWithoutReadingIt() throws {
        let directory = TemporaryDirectory()
        let (store, _, model, _) = try smallStore(directory)
        let manifest = store + "/MANIFEST"
        let original = try Corruption.readFile(manifest)
        // The segment count is the u32 in front of the segment list, which the checksum follows.
        let countOffset = original.count - 4 - 8 - 4
        #expect(Corruption.littleEndianU32(original, at: countOffset) == 1)

        for claimed: UInt32 in [.max, 1 << 20, (1 << 20) + 1, 2] {
            var bytes = Array(original.dropLast(4))
            bytes.replaceSubrange(countOffset..<countOffset + 4, with: Corruption.littleEndianBytes(claimed))
            bytes += Corruption.littleEndianBytes(TestCRC32C.checksum(bytes))
            try Corruption.writeFile(manifest, bytes)
            let fileSystem = FaultInjectingFileSystem()
            let error = journalError(.damaged) {
                try JournalReader(path: store, recovery: .stopAtDamage, fileSystem: fileSystem)
            }
            #expect(error?.file?.hasSuffix("MANIFEST") == true)
            #expect(fileSystem.largestRead <= bytes.count)
            journalError(.damaged) { try openJournal(store) }
        }

        // A manifest file far larger than any valid one is refused before it is read.
        try Corruption.writeFile(manifest, original)
        let handle = try #require(FileHandle(forWritingAtPath: manifest))
        try handle.truncate(atOffset: 64 << 20)
        try handle.close()
        let fileSystem = FaultInjectingFileSystem()
        journalError(.damaged) { try JournalReader(path: store, recovery: .stopAtDamage, fileSystem: fileSystem) }
        #expect(fileSystem.largestRead == 0)
        journalError(.damaged) { try openJournal(store) }

        try Corruption.writeFile(manifest, original)
        #expect(try openReader(store, recovery: .strict).state().entries == model.latest)
    }
}
