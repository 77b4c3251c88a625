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
            var random = SplitMix64(seed: seed ^ name.utf8.reduce(UInt64(page) &* 0x9E37_79B9) { ($0 &* 31) &+ UInt64($1) })
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
            if random.next() % (durability == .none ? 12 : 4) == 0 { try journal.sync() }
            let durable = journal.lastDurable?.epoch ?? 0
            for variant in 0..<Self.imagesPerCut {
                let image = directory.appending("image-\(cut)-\(variant)")
                try fileSystem.writePowerLossImage(of: store, to: image, unsyncedPage: Self.pageFate(seed: random.next()))
                let outcome = try checkRecovery(
                    of: image, options: options, durable: durable, model: model, label: "\(durability) cut \(cut) image \(variant)")
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
        #expect(cuts > images / 3, "\(cuts) of \(images) images cut a tail")
        #expect(unsyncedTails > images / 8, "\(unsyncedTails) of \(images) images had an unsynced tail beyond a gap")
        noteSweep(
            "\(durability): \(images) power-cut images, \(cuts) cut a tail, \(unsyncedTails) beyond a gap, \(acknowledgedLost) lost a durable epoch")
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
    func checkRecovery(of image: String, options: JournalOptions, durable: UInt64, model: JournalModel, label: String) throws -> Outcome {
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
            #expect(report.unsyncedTail?.file == seen.file && report.unsyncedTail?.offset == seen.offset, "\(label): \(seen)")
        }
        #expect(recovered >= durable, "\(label): recovered epoch \(recovered), but \(durable) was durable")
        #expect(journal.recoveredState.entries == (model.states[recovered] ?? [:]), "\(label): state of epoch \(recovered)")
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
            recovered: recovered, cut: report.truncatedTailBytes > 0 || report.unsyncedTail != nil, unsynced: report.unsyncedTail != nil)
    }
}
