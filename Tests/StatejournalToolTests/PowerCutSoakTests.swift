import Foundation
import StateJournal
import StateJournalComparison
import StateJournalTestSupport
import Testing

/// After a power cut under `interval` or `none`, the app carries on in the same store. A store is
/// written as `statejournal soak` writes it (the same workload, options and metadata), through the
/// fault-injecting file layer; at many points of the workload the image a power cut would leave is
/// taken, with a random part of the unsynced pages on the disk. On each image the built tool's
/// `verify` must call the store clean, `soak` must go on committing from the epoch after the last
/// one kept, and `soak --check` must then pass, with a gapless history that keeps every epoch that
/// was durable. It runs with both workloads: with the churn one, a cut often falls between an epoch's
/// batch records, which define paths, and its commit.
@Suite(.serialized) struct PowerCutSoakTests {
    static let cutPoints = Int(ProcessInfo.processInfo.environment["STATEJOURNAL_POWER_CUTS"] ?? "") ?? 10
    static let objects = 40

    @Test(arguments: ["interval", "none"], SoakWorkload.Kind.allCases)
    func soakGoesOnInAStoreRecoveredFromAPowerCutThatKeptPartOfItsUnsyncedTail(
        durability: String, kind: SoakWorkload.Kind
    ) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem()
        // `soak`'s options, with compaction run in the foreground at soak's own moments so that the
        // images do not depend on a background thread.
        let workload = SoakWorkload(objects: Self.objects, seed: 1, kind: kind)
        var options = JournalOptions(
            durability: durability == "none" ? .none : .interval(seconds: 3600),
            segmentSizeLimit: workload.segmentSizeLimit, retention: RetentionPolicy(checkpoints: 2))
        options.compaction = .manual
        let metadata = workload.metadata
        let journal = try Journal.open(path: store, options: options, fileSystem: fileSystem)
        var random = SplitMix64(seed: durability == "none" ? 3 : 4)
        var images = 0
        var unsyncedTails = 0
        var epoch: UInt64 = 0
        for cut in 0..<Self.cutPoints {
            for _ in 0..<(20 + random.next() % 60) {
                epoch += 1
                try journal.commit(workload.changes(at: epoch), metadata: metadata)
                if epoch % 97 == 0 { try journal.compact() }
                // The interval policy's background sync, at moments the test chooses.
                if durability == "interval" && random.next() % 30 == 0 { try journal.sync() }
            }
            let durable = journal.lastDurable?.epoch ?? 0
            let image = directory.appending("image-\(cut)")
            let seed = random.next()
            try fileSystem.writePowerLossImage(of: store, to: image) { name, page in
                var fate = SplitMix64(
                    seed: seed ^ name.utf8.reduce(UInt64(page) &* 0x9E37_79B9) { ($0 &* 31) &+ UInt64($1) })
                return fate.next() % 2 == 0 ? .written : .zeros
            }
            let label = "\(durability), \(kind), cut \(cut) after epoch \(epoch), \(durable) durable"

            let verify = try ToolRunner.run(["verify", image, "--json"])
            #expect(verify.status == 0, "\(label): \(verify.standardOutput)\(verify.standardError)")
            let verified = try ToolRunner.json(verify) as? [String: Any] ?? [:]
            if ((verified["unsyncedTailBytes"] as? NSNumber)?.int64Value ?? 0) > 0 { unsyncedTails += 1 }
            let kept = (verified["consistentEpoch"] as? NSNumber)?.uint64Value ?? 0
            #expect(kept >= durable, "\(label): the image keeps epoch \(kept)")

            let soak = try ToolRunner.run([
                "soak", image, "--seconds", "0.3", "--at-least", "5", "--durability", durability, "--objects",
                String(Self.objects), "--workload", kind.rawValue,
            ])
            #expect(soak.status == 0, "\(label): \(soak.standardError)")
            let committed = soak.standardOutput.split(separator: "\n").compactMap {
                UInt64($0.dropFirst("committed ".count))
            }
            #expect(committed.first == kept + 1, "\(label): soak went on with \(String(describing: committed.first))")
            let check = try ToolRunner.run(["soak", image, "--check"])
            #expect(check.status == 0, "\(label): \(check.standardOutput)\(check.standardError)")
            let log = try ToolRunner.epochs(try ToolRunner.run(["log", image, "--json"]))
            let epochs = log.compactMap { ($0["epoch"] as? NSNumber)?.uint64Value }
            #expect(epochs.last == committed.last, "\(label)")
            #expect(zip(epochs, epochs.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(label): a gap in \(epochs)")
            images += 1
            try? FileManager.default.removeItem(atPath: image)
        }
        try journal.close()
        #expect(images == Self.cutPoints)
        #expect(unsyncedTails > 0, "some images should keep later unsynced pages beyond a lost one")
    }
}
