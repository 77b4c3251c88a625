import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// `RetentionPolicy.allHistory`: compaction writes checkpoints, so that a restore starts from the
/// newest one, and deletes no segment, so that every epoch since the first stays readable.
@Suite struct AllHistoryRetentionTests {
    static func options(automatic: Bool) -> JournalOptions {
        var options = JournalOptions(durability: .none, segmentSizeLimit: 16 << 10, retention: .allHistory)
        options.compaction = CompactionPolicy(
            isAutomatic: automatic, checkpointsAutomatically: automatic, growthRatio: 1, minimumJournalBytes: 4 << 10)
        return options
    }

    /// The checkpoint a full replay of the store starts from, as the writer's open would choose it.
    static func replayStart(of directory: TemporaryDirectory) throws -> Manifest.CheckpointReference? {
        let manifest = try StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path).readManifest()
        return try JournalScanner(
            fileSystem: PosixFileSystem(), directory: directory.path, manifest: manifest, options: ScanOptions()
        ).run().startCheckpoint
    }

    @Test(arguments: [3 as UInt64, 19, 41])
    func everyEpochStaysReadableWhileAutomaticCompactionKeepsWritingCheckpoints(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: seed, pathCount: 30, changesPerEpoch: 1...8)
        var model = JournalModel()
        var journal = try Journal.open(
            path: directory.path, options: Self.options(automatic: true), fileSystem: PosixFileSystem())
        for round in 0..<3 {
            for _ in 0..<150 {
                let changes = generator.nextEpoch()
                model.commit(try journal.commit(changes).epoch, changes)
                // The background compaction a commit starts finishes before the next commit, so that
                // which checkpoints exist does not depend on the machine's speed.
                journal.waitForCompactions()
            }
            // Relaunching in between (closing waits for a compaction under way): a writer that
            // opens the store goes on keeping everything.
            try journal.close()
            journal = try Journal.open(
                path: directory.path, options: Self.options(automatic: round < 2), fileSystem: PosixFileSystem())
            #expect(journal.recoveredState.entries == model.latest)
        }
        let history = try journal.history()
        #expect(history.map(\.epoch) == model.epochs, "every epoch from the first is retained")
        for info in history where info.epoch % 7 == 0 || info.epoch == model.epochs.last {
            #expect(try journal.state(through: info.epoch).entries == model.states[info.epoch], "epoch \(info.epoch)")
        }
        try journal.close()

        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let checkpoints = names.filter { $0.hasPrefix("checkpoint-") }
        #expect(checkpoints.count == 2, "the two newest checkpoints are kept, older ones deleted: \(checkpoints)")
        // A restore starts from the newest checkpoint instead of replaying all history.
        let manifest = try StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path).readManifest()
        let start = try #require(try Self.replayStart(of: directory))
        #expect(start == manifest.checkpoints.last)
        #expect(start.epoch > model.epochs.last! / 2)
        let reader = try JournalReader(at: directory.url)
        #expect(try reader.state().entries == model.latest)
        #expect(try reader.history().map(\.epoch) == model.epochs)
        #expect(StoreInspector.verify(directory.url).status == .clean)
    }

    @Test func aStoreWhoseOlderHistoryWasAlreadyDeletedKeepsItsOldestCheckpointAsWhereHistoryStarts() throws {
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: 5, pathCount: 20)
        var model = JournalModel()
        var options = Self.options(automatic: false)
        options.retention = RetentionPolicy(checkpoints: 1)
        var journal = try Journal.open(path: directory.path, options: options, fileSystem: PosixFileSystem())
        for _ in 0..<40 {
            let changes = generator.nextEpoch()
            model.commit(try journal.commit(changes).epoch, changes)
        }
        try journal.compact()
        try journal.close()
        let firstRetained = try JournalReader(at: directory.url).history().first!.epoch
        #expect(firstRetained == 40)

        options.retention = .allHistory
        journal = try Journal.open(path: directory.path, options: options, fileSystem: PosixFileSystem())
        for batch in 0..<4 {
            for _ in 0..<30 {
                let changes = generator.nextEpoch()
                model.commit(try journal.commit(changes).epoch, changes)
            }
            try journal.compact()
            let history = try journal.history()
            #expect(history.first?.epoch == firstRetained, "after compaction \(batch + 1)")
            #expect(history.last?.epoch == model.epochs.last)
        }
        for epoch in stride(from: firstRetained, through: model.epochs.last!, by: 9) {
            #expect(try journal.state(through: epoch).entries == model.states[epoch], "epoch \(epoch)")
        }
        try journal.close()
        let checkpoints = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("checkpoint-")
        }
        #expect(checkpoints.count == 3, "the oldest and the two newest: \(checkpoints)")
    }
}

/// What a manifest can name is bounded by the format; no policy may make the writer go past it.
@Suite struct ManifestLimitTests {
    @Test func aManifestNamingMoreThanTheFormatAllowsIsRefusedAndTheOldOneStays() throws {
        let directory = TemporaryDirectory()
        let journal = try Journal.open(
            path: directory.path, options: JournalOptions(durability: .none), fileSystem: PosixFileSystem())
        try journal.commit([.put(RestorationPath("Main"), [1, 2, 3])])
        let before = try Data(contentsOf: directory.url.appendingPathComponent("MANIFEST"))
        var tooMany = try journal.store.readManifest()
        tooMany.segments = (1...UInt64(Manifest.maximumSegments + 1)).map { $0 }
        #expect {
            try journal.store.writeManifest(tooMany)
        } throws: { ($0 as? JournalError)?.code == .limitExceeded }
        var checkpoints = try journal.store.readManifest()
        checkpoints.checkpoints = (1...UInt64(Manifest.maximumCheckpoints + 1)).map {
            Manifest.CheckpointReference(sequence: $0, epoch: $0, timestampMilliseconds: $0)
        }
        #expect {
            try journal.store.writeManifest(checkpoints)
        } throws: { ($0 as? JournalError)?.code == .limitExceeded }
        #expect(try Data(contentsOf: directory.url.appendingPathComponent("MANIFEST")) == before)
        try journal.close()
        let reopened = try Journal.open(
            path: directory.path, options: JournalOptions(durability: .none), fileSystem: PosixFileSystem())
        #expect(reopened.recoveredState.entries == [RestorationPath("Main"): [1, 2, 3]])
        try reopened.close()
    }

    @Test(arguments: [
        RetentionPolicy(checkpoints: .max), .allHistory, RetentionPolicy(checkpoints: 1, maximumAge: 3600),
    ])
    func retentionNeverKeepsMoreCheckpointsThanAManifestCanName(policy: RetentionPolicy) throws {
        let directory = TemporaryDirectory()
        var options = JournalOptions(durability: .none, retention: policy)
        options.compaction = .manual
        let journal = try Journal.open(path: directory.path, options: options, fileSystem: PosixFileSystem())
        try journal.commit([.put(RestorationPath("Main"), [1])])
        var manifest = try journal.store.readManifest()
        let count = Manifest.maximumCheckpoints + 10
        // Every checkpoint is younger than the age limit, which on its own would keep them all.
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        manifest.checkpoints = (1...UInt64(count)).map {
            Manifest.CheckpointReference(sequence: 1_000_000 + $0, epoch: $0, timestampMilliseconds: now - 60_000 + $0)
        }
        let dropped = try journal.retirement(
            of: manifest, adding: nil, now: Date(), policy: journal.options.retention)
        let droppedSequences = Set(dropped.checkpoints)
        let kept = manifest.checkpoints.filter { !droppedSequences.contains($0.sequence) }
        #expect(kept.count <= Manifest.maximumCheckpoints)
        #expect(dropped.checkpoints.count >= 10)
        #expect(kept.last?.epoch == UInt64(count), "the newest checkpoint is always kept")
        try journal.close()
    }
}
