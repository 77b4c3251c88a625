import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// A power cut under ``Durability/interval(seconds:)`` or ``Durability/none`` may leave any part of
/// what was written after the last sync on the disk, page by page and in any order. Recovery keeps
/// the longest consistent prefix, which holds every epoch the writer knew durable, reports the rest
/// as an unsynced tail (not damage), and the writer goes on in the same store.
@Suite struct UnsyncedTailTests {
    static let cutPoints = Int(ProcessInfo.processInfo.environment["STATEJOURNAL_UNSYNCED_CUTS"] ?? "") ?? 48
    static let imagesPerCut = 6

    /// The policies that leave an unsynced tail; the interval is long so that the test decides when
    /// the background sync happens (it calls ``Journal/sync()`` at random moments instead).
    static let policies: [Durability] = [.interval(seconds: 3600), .none]

    /// A fate for each unsynced page of each file, drawn from `seed`: half of them written, most
    /// others lost, some garbage.
    static func pageFate(seed: UInt64) -> (String, Int) -> UnsyncedPageFate {
        { name, page in
            var random = SplitMix64(
                seed: seed ^ name.utf8.reduce(UInt64(page) &* 0x9E37_79B9) { ($0 &* 31) &+ UInt64($1) })
            switch random.next() % 10 {
            case 0..<5: return .written
            case 5..<9: return .zeros
            default: return .garbage
            }
        }
    }

    @Test(arguments: policies)
    func everyPowerCutImageOpensWithItsDurableEpochsAndTheWriterGoesOn(durability: Durability) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem()
        let options = testOptions(durability: durability, segmentSizeLimit: 20 << 10)
        let journal = try Journal.open(path: store, options: options, fileSystem: fileSystem)
        var workload = WorkloadGenerator(seed: durability == .none ? 41 : 42, stateSizes: 200...1200)
        var model = JournalModel()
        var random = SplitMix64(seed: durability == .none ? 7 : 8)
        var images = 0
        var cuts = 0
        var unsyncedTails = 0
        var acknowledgedLost = 0
        for cut in 0..<Self.cutPoints {
            try commitEpochs(1 + Int(random.next() % 4), journal, &workload, &model)
            // The background sync of the interval policy; `none` leaves it to explicit syncs and rolls.
            if random.next() % (durability == .none ? 12 : 6) == 0 { try journal.sync() }
            let durable = journal.lastDurable?.epoch ?? 0
            for variant in 0..<Self.imagesPerCut {
                let image = directory.appending("image-\(cut)-\(variant)")
                try fileSystem.writePowerLossImage(
                    of: store, to: image, unsyncedPage: Self.pageFate(seed: random.next()))
                let outcome = try checkRecovery(
                    of: image, options: options, durable: durable, model: model,
                    label: "\(durability) cut \(cut) image \(variant)")
                if outcome.recovered < durable { acknowledgedLost += 1 }
                if outcome.cut { cuts += 1 }
                if outcome.unsynced { unsyncedTails += 1 }
                images += 1
                try? FileManager.default.removeItem(atPath: image)
            }
        }
        try journal.close()
        #expect(acknowledgedLost == 0)
        // Most images lose part of what was not synced, many with later pages kept beyond a gap.
        #expect(cuts > images / 5, "\(cuts) of \(images) images cut a tail")
        #expect(unsyncedTails > images / 20, "\(unsyncedTails) of \(images) images had an unsynced tail beyond a gap")
        noteSweep(
            """
            \(durability): \(images) power-cut images, \(cuts) cut a tail, \(unsyncedTails) beyond a gap, \
            \(acknowledgedLost) lost a durable epoch
            """
        )
    }

    struct Outcome {
        var recovered: UInt64
        /// Whether opening cut anything off.
        var cut: Bool
        /// Whether what it cut was reported as an unsynced tail beyond a gap.
        var unsynced: Bool
    }

    /// Opens `image` as a writer and checks what it recovered, then commits more epochs and reads
    /// the store back with a reader.
    func checkRecovery(of image: String, options: JournalOptions, durable: UInt64, model: JournalModel, label: String)
        throws -> Outcome
    {
        // A reader, even a strict one, sees the same as the writer will, and calls nothing damage.
        let read = try openReader(image, recovery: .strict).state()
        #expect(read.damage == nil, "\(label)")
        let journal = try Journal.open(path: image, options: options, fileSystem: FaultInjectingFileSystem())
        let report = journal.recoveryReport
        #expect(report.damage == nil, "\(label): \(String(describing: report.damage))")
        #expect(report.quarantinedFiles.isEmpty, "\(label): \(report.quarantinedFiles)")
        let recovered = journal.recoveredState.epoch?.epoch ?? 0
        #expect(read.epoch?.epoch ?? 0 == recovered, "\(label)")
        if let seen = read.unsyncedTail {
            #expect(
                report.unsyncedTail?.file == seen.file && report.unsyncedTail?.offset == seen.offset,
                "\(label): \(seen)")
        }
        #expect(recovered >= durable, "\(label): recovered epoch \(recovered), but \(durable) was durable")
        #expect(
            journal.recoveredState.entries == (model.states[recovered] ?? [:]), "\(label): state of epoch \(recovered)")
        if let tail = report.unsyncedTail {
            #expect(tail.lastConsistentEpoch ?? 0 == recovered, "\(label): \(tail)")
            #expect(tail.bytesDropped > 0 && !report.isClean, "\(label): \(tail)")
        }
        var continued = JournalModel(base: journal.recoveredState.entries, epoch: recovered == 0 ? nil : recovered)
        var workload = WorkloadGenerator(seed: recovered &+ 99)
        for offset in 1...3 {
            let changes = workload.nextEpoch()
            let info = try journal.commit(changes)
            #expect(info.epoch == recovered + UInt64(offset), "\(label): the epoch after \(recovered) is \(info.epoch)")
            continued.commit(info.epoch, changes)
        }
        try journal.close()
        let reader = try openReader(image)
        let history = try reader.history().map(\.epoch)
        #expect(history == Array(1...(recovered + 3)), "\(label): history \(history)")
        let latest = try reader.state()
        #expect(latest.damage == nil, "\(label)")
        #expect(latest.entries == continued.latest, "\(label)")
        return Outcome(
            recovered: recovered, cut: report.truncatedTailBytes > 0 || report.unsyncedTail != nil,
            unsynced: report.unsyncedTail != nil)
    }

    /// Writes epochs under `durability`, syncing after `syncedThrough` of them, then more, and
    /// returns the store's only segment with the offsets where each epoch ends.
    private func writeStore(
        _ store: String, fileSystem: FaultInjectingFileSystem, durability: Durability, epochs: Int, syncedThrough: Int
    ) throws -> (journal: Journal, model: JournalModel, ends: [UInt64: Int]) {
        let journal = try Journal.open(
            path: store, options: testOptions(durability: durability), fileSystem: fileSystem)
        var workload = WorkloadGenerator(
            seed: 77, pathCount: 6, stateSizes: 1500...3000, changesPerEpoch: 2...4, removeAllPercent: 0)
        var model = JournalModel()
        var ends: [UInt64: Int] = [:]
        for index in 1...epochs {
            try commitEpochs(1, journal, &workload, &model)
            ends[model.epochs.last!] = writtenEnd(of: journal)
            if index == syncedThrough { try journal.sync() }
        }
        return (journal, model, ends)
    }

    @Test(arguments: policies)
    func damageBeforeTheLastDurablePointIsStillDamageBesideAnUnsyncedTail(durability: Durability) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem()
        // Epochs 1 to 6 synced; the commit of epoch 7 says so. Epochs 7 to 30 were never synced.
        let (journal, model, ends) = try writeStore(
            store, fileSystem: fileSystem, durability: durability, epochs: 30, syncedThrough: 6)
        #expect(journal.lastDurable?.epoch == 6)
        let segment = (try Corruption.segmentNames(in: store))[0]
        // A power cut keeps every unsynced page but the one after the page where epoch 7 ends.
        let image = directory.appending("image")
        let lostPage = ends[7]! / 4096 + 1
        #expect((lostPage + 1) * 4096 < ends[30]!, "a written page follows the lost one")
        try fileSystem.writePowerLossImage(of: store, to: image) { _, page in page == lostPage ? .zeros : .written }
        try journal.close()
        let snapshot = try DirectorySnapshot(of: image)

        // Without damage the gap is an unsynced tail: every synced epoch is kept.
        let tail = try openReader(image, recovery: .strict).state()
        #expect(tail.damage == nil)
        print("DEBUG", tail.uncommittedTailBytes, String(describing: tail.epoch?.epoch), String(describing: tail.damage), ends[7]!, ends[30]!, lostPage)
        #expect(tail.unsyncedTail?.file == segment)
        #expect(tail.epoch.map { $0.epoch >= 7 } == true)

        // A byte flipped in epoch 3, which epoch 7's commit says was synced: damage, whatever the tail.
        let records = Corruption.records(ofSegment: try Corruption.readFile(image + "/" + segment))
        let target = records.first { $0.offset >= ends[2]! }!
        try Corruption.flipByte(image + "/" + segment, at: target.offset + 10)
        let state = try openReader(image).state()
        #expect(state.damage?.offset == Int64(target.offset), "\(String(describing: state.damage))")
        #expect(state.damage?.lastConsistentEpoch == 2)
        #expect(state.unsyncedTail == nil)
        #expect(state.entries == model.states[2])
        journalError(.damaged) { try openReader(image, recovery: .strict).state() }
        journalError(.damaged) {
            try Journal.open(
                path: image, options: testOptions(durability: durability, recovery: .strict),
                fileSystem: FaultInjectingFileSystem())
        }
        let writer = try Journal.open(
            path: image, options: testOptions(durability: durability), fileSystem: FaultInjectingFileSystem())
        #expect(writer.recoveryReport.damage?.offset == Int64(target.offset))
        #expect(writer.recoveryReport.unsyncedTail == nil)
        #expect(writer.recoveryReport.quarantinedFiles == ["damaged-0000000000000001-at-\(ends[2]!).bin"])
        #expect(writer.recoveredState.epoch?.epoch == 2)
        try writer.close()

        // A flip in the last synced epoch, 6, is damage too: epoch 7's commit vouches for it.
        try snapshot.restore(to: image)
        let sixth = records.first { $0.offset >= ends[5]! }!
        try Corruption.flipByte(image + "/" + segment, at: sixth.offset + 10)
        #expect(try openReader(image).state().damage?.offset == Int64(sixth.offset))
    }

    @Test func everyCommitKeepsEveryCommitButTheLastVouchedForSoDamageThereIsDamage() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem()
        let (journal, model, ends) = try writeStore(
            store, fileSystem: fileSystem, durability: .everyCommit, epochs: 8, syncedThrough: 0)
        try journal.close()
        let segment = store + "/" + (try Corruption.segmentNames(in: store))[0]
        let records = Corruption.records(ofSegment: try Corruption.readFile(segment))
        let snapshot = try DirectorySnapshot(of: store)
        // Every epoch but the last has a later commit saying it was synced.
        for epoch in UInt64(1)...7 {
            try snapshot.restore(to: store)
            let record = records.first { $0.offset >= (ends[epoch - 1] ?? Corruption.segmentHeaderSize) }!
            try Corruption.flipByte(segment, at: record.offset + 9)
            let state = try openReader(store).state()
            #expect(state.damage?.lastConsistentEpoch == (epoch == 1 ? nil : epoch - 1), "epoch \(epoch)")
            #expect(state.unsyncedTail == nil, "epoch \(epoch)")
            #expect(state.entries == (model.states[epoch - 1] ?? [:]), "epoch \(epoch)")
        }
    }
}
