import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// Format version 3's compact commit record and its varint-framed header, against damage and
/// against the model.
@Suite struct CompactCommitTests {
    /// A store whose one segment holds an ordinary commit, then two compact commits of the same
    /// path; the states as of each epoch.
    private static func writeCompactStore(at store: String) throws -> [UInt64: [RestorationPath: [UInt8]]] {
        let path = RestorationPath("Main", "Window-0", "List-3", "Item-7")
        var state = Array(#"{"id":"item-7","title":"Quarterly report","selectedRow":12,"scrollOffset":250.5}"#.utf8)
        let journal = try openJournal(store)
        var model: [UInt64: [RestorationPath: [UInt8]]] = [:]
        model[try journal.commit([.put(path, state)], metadata: ["v": "1"]).epoch] = [path: state]
        state.replaceSubrange(70..<75, with: Array("1024.75".utf8))
        model[try journal.commit([.put(path, state)], metadata: ["v": "1"]).epoch] = [path: state]
        state.replaceSubrange(58..<60, with: Array("3".utf8))
        model[try journal.commit([.put(path, state)], metadata: ["v": "1"]).epoch] = [path: state]
        try journal.close()
        return model
    }

    @Test func everyTruncationAndEveryBitFlipOfACompactCommitIsDetected() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let model = try Self.writeCompactStore(at: store)
        let segment = store + "/" + (try Corruption.segmentNames(in: store)).last!
        let whole = try Corruption.readFile(segment)
        let records = Corruption.records(ofSegment: whole)
        #expect(records.map(\.type) == [2, 4, 4].map { UInt8($0) })
        #expect(records[1].headerLength == 6 && records[1].length < 24, "\(records[1])")
        var cases = 0
        // Damage to the first compact commit leaves epoch 1; to the second, epoch 2. Never another
        // state, and never a later epoch.
        for (index, expectedEpoch) in [(1, UInt64(1)), (2, UInt64(2))] {
            let record = records[index]
            var damaged: [[UInt8]] = []
            for cut in record.offset..<record.end { damaged.append(Array(whole[..<cut])) }
            for bit in 0..<(8 * record.length) {
                var bytes = whole
                bytes[record.offset + bit / 8] ^= 1 << UInt8(bit % 8)
                damaged.append(bytes)
            }
            for bytes in damaged {
                try Corruption.writeFile(segment, bytes)
                let state = try openReader(store).state()
                cases += 1
                #expect(state.epoch?.epoch == expectedEpoch)
                #expect(state.entries == model[expectedEpoch]!)
            }
        }
        try Corruption.writeFile(segment, whole)
        #expect(try openReader(store).state().entries == model[3]!)
        #expect(cases >= 200)
    }

    @Test(
        arguments: [UInt64(JournalLimits.maximumRecordLength) + 1, UInt64((1 << 28) - 1), UInt64(20 << 20)] as [UInt64])
    func aVarintLengthBeyondTheLimitOrTheFileIsDamageAndIsNeverAllocated(claimed: UInt64) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let path = RestorationPath("Main")
        var model = JournalModel()
        // Under everyCommit each commit says the ones before it were synced: damage there is damage.
        let journal = try openJournal(store, testOptions(durability: .everyCommit))
        for value in 0..<4 {
            let changes: [JournalChange] = [.put(path, Array("state number \(value) of Main".utf8))]
            model.commit(try journal.commit(changes).epoch, changes)
        }
        try journal.close()
        let segment = store + "/" + (try Corruption.segmentNames(in: store))[0]
        let size = try fileSize(segment)
        let second = Corruption.records(ofSegment: try Corruption.readFile(segment))[1]
        #expect(second.type == Corruption.RecordSpan.compactCommit)
        // A 4-byte varint where the 1-byte length was, then a valid type byte.
        let length = Corruption.varint(claimed)
        #expect(length.count == 4)
        try Corruption.overwrite(segment, at: second.offset + 4, with: length + [Corruption.RecordSpan.commit])

        let fileSystem = FaultInjectingFileSystem()
        let state = try JournalReader(path: store, recovery: .stopAtDamage, fileSystem: fileSystem).state()
        #expect(state.damage?.offset == Int64(second.offset))
        #expect(state.epoch?.epoch == 1)
        #expect(state.entries == model.states[1])
        #expect(fileSystem.largestRead <= size, "a read of \(fileSystem.largestRead) bytes from a \(size)-byte store")
    }

    @Test func randomWorkloadsMixingSmallAndLargeEpochsReplayToTheModel() throws {
        for seed in UInt64(1)...4 {
            let directory = TemporaryDirectory()
            let store = directory.appending("store")
            var random = SplitMix64(seed: seed)
            var workload = WorkloadGenerator(seed: seed, pathCount: 40, removeAllPercent: 1)
            var model = JournalModel()
            var journal = try openJournal(store, testOptions(segmentSizeLimit: 256 << 10))
            var metadata = ["pass": "0"]
            for round in 0..<300 {
                var changes: [JournalChange]
                switch Int.random(in: 0..<20, using: &random) {
                case 0:
                    // A large epoch: everything, in several batch records.
                    changes = workload.paths.map { path in
                        .put(path, WorkloadGenerator.freshState(for: path, size: 1_200, random: &random))
                    }
                case 1: changes = workload.nextEpoch()
                case 2:
                    let path = workload.paths[Int.random(in: 0..<workload.paths.count, using: &random)]
                    changes = [.remove(path)]
                default:
                    // A small epoch: one path changed a little, or put anew.
                    let path = workload.paths[Int.random(in: 0..<8, using: &random)]
                    let previous =
                        model.latest[path] ?? WorkloadGenerator.freshState(for: path, size: 180, random: &random)
                    changes = [.put(path, WorkloadGenerator.edit(previous, sizes: 0...400, random: &random))]
                }
                if Int.random(in: 0..<20, using: &random) == 0 { metadata = ["pass": "\(round)"] }
                model.commit(try journal.commit(changes, metadata: metadata).epoch, changes)
                switch Int.random(in: 0..<60, using: &random) {
                case 0:
                    // A writer that continues the segment writes compact commits relative to what it read.
                    try journal.close()
                    journal = try openJournal(store, testOptions(segmentSizeLimit: 256 << 10))
                case 1: _ = try journal.compact()
                default: break
                }
            }
            try journal.close()

            var compactRecords = 0
            for name in try Corruption.segmentNames(in: store) {
                compactRecords +=
                    Corruption.records(ofSegment: try Corruption.readFile(store + "/" + name))
                    .filter { $0.type == Corruption.RecordSpan.compactCommit }.count
            }
            // Counted in the segments compaction kept.
            #expect(compactRecords > 30, "seed \(seed)")

            let reader = try openReader(store)
            var replayed = model.states[try reader.history().first!.epoch - 1] ?? [:]
            try reader.forEachEpoch { info, changes in
                replayed = JournalModel.applying(changes, to: replayed)
                #expect(replayed == model.states[info.epoch], "seed \(seed), epoch \(info.epoch)")
                return true
            }
            #expect(try reader.state().entries == model.latest, "seed \(seed)")
            let reopened = try openJournal(store)
            #expect(reopened.recoveredState.entries == model.latest)
            #expect(reopened.recoveryReport.isClean)
            try reopened.close()
        }
    }
}

/// What recovery learns from compact commits it reads on their own, beyond damage.
@Suite struct CompactCommitReadAloneTests {
    /// Writes `count` one-entry epochs of one path, each a small change, and returns the segment's
    /// bytes and the epochs in order.
    static func writeSmallEpochs(at store: String, count: Int, durability: Durability) throws -> (String, [UInt64]) {
        var options = testOptions()
        options.durability = durability
        let journal = try openJournal(store, options, realFileSystem: true)
        var epochs: [UInt64] = []
        for index in 0..<count {
            let state = Array(#"{"row":\#(index % 50),"scroll":\#(index * 3)}"#.utf8)
            epochs.append(try journal.commit([.put(RestorationPath("Main", "List"), state)]).epoch)
        }
        try journal.close()
        return (store + "/" + (try Corruption.segmentNames(in: store)).last!, epochs)
    }

    /// The commits read on their own after `offset`, as recovery reads them.
    static func commitsReadAlone(in segment: String, after offset: Int64) throws -> [CommitRecord] {
        let fileSystem = PosixFileSystem()
        let descriptor = try fileSystem.open(segment, .read)
        defer { fileSystem.close(descriptor) }
        var commits: [CommitRecord] = []
        try JournalScanner.forEachIntactCommit(
            fileSystem: fileSystem, descriptor: descriptor, after: offset, version: FormatVersion.current
        ) { commit in
            commits.append(commit)
            return true
        }
        return commits
    }

    @Test func everyCompactCommitReadAloneBeyondDamageSaysExactlyWhichEpochItEnds() throws {
        let directory = TemporaryDirectory()
        let (segment, epochs) = try Self.writeSmallEpochs(
            at: directory.appending("store"), count: 300, durability: .none)
        let whole = try Corruption.readFile(segment)
        let records = Corruption.records(ofSegment: whole)
        #expect(records.filter { $0.type == 4 }.count > 250, "most epochs are compact commits")
        var random = SplitMix64(seed: 17)
        for _ in 0..<40 {
            // Garble one record: every intact commit after it must report its true epoch.
            let damaged = Int.random(in: 1..<records.count - 1, using: &random)
            var bytes = whole
            bytes[records[damaged].offset + records[damaged].headerLength] ^= 0x5A
            try Corruption.writeFile(segment, bytes)
            let read = try Self.commitsReadAlone(in: segment, after: Int64(records[damaged].offset))
            #expect(read.map(\.epoch) == Array(epochs[(damaged + 1)...]), "damage in record \(damaged)")
        }
        try Corruption.writeFile(segment, whole)
    }

    @Test func aCompactCommitAfterAGapInItsSectorDoesNotVouchForLessThanItsSyncedEnd() throws {
        let directory = TemporaryDirectory()
        let (segment, _) = try Self.writeSmallEpochs(
            at: directory.appending("store"), count: 200, durability: .interval(seconds: 3600))
        let whole = try Corruption.readFile(segment)
        let records = Corruption.records(ofSegment: whole)
        // The first commit starting in each 512-byte sector states its synced end; the others may
        // repeat it. Read alone, those that repeat it after a gap say nothing (nil), which counts as
        // vouching, never 0.
        var sectors = Set<Int>()
        for (index, record) in records.enumerated() where record.type == 2 || record.type == 4 {
            let firstInSector = sectors.insert(record.offset / 512).inserted
            if firstInSector && record.type == 4 {
                #expect(
                    whole[record.offset + record.headerLength] & CompactCommit.sameSyncedEnd == 0, "record \(index)")
            }
        }
        let repeating = try #require(
            records.indices.dropFirst().first { index in
                records[index].type == 4 && whole[records[index].offset + records[index].headerLength] & 0x02 != 0
                    && records[index - 1].type == 4
            })
        var bytes = whole
        bytes[records[repeating - 1].offset + records[repeating - 1].headerLength] ^= 0x5A
        try Corruption.writeFile(segment, bytes)
        let read = try Self.commitsReadAlone(in: segment, after: Int64(records[repeating - 1].offset))
        #expect(read.first?.syncedEnd == nil)
        try Corruption.writeFile(segment, whole)
    }
}
