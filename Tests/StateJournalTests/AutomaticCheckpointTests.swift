import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// Checkpoints bound what a restore replays; compaction is what deletes history. With automatic
/// compaction off, the journal still writes checkpoints by itself and deletes no segment.
@Suite struct AutomaticCheckpointTests {
    static func options(_ compaction: CompactionPolicy) -> JournalOptions {
        var options = JournalOptions(durability: .none, segmentSizeLimit: 16 << 10)
        options.compaction = compaction
        options.compaction.growthRatio = 1
        options.compaction.minimumJournalBytes = 4 << 10
        return options
    }

    static let compactionOff = options(CompactionPolicy(isAutomatic: false))

    static func checkpointFiles(in directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("checkpoint-") }
            .sorted()
    }

    /// The bytes of the segments a restore replays after the checkpoint it starts from, and of all.
    static func journalBytes(of directory: TemporaryDirectory) throws -> (afterCheckpoint: Int64, all: Int64) {
        let store = StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path)
        let manifest = try store.readManifest()
        let start = manifest.checkpoints.last?.epoch ?? 0
        var after: Int64 = 0
        var all: Int64 = 0
        for sequence in manifest.segments {
            let size = try store.fileSize(FileNames.segment(sequence))
            all += size
            if try store.segmentBase(sequence) >= start { after += size }
        }
        return (after, all)
    }

    @Test(arguments: [4 as UInt64, 23, 57])
    func withAutomaticCompactionOffTheJournalStillWritesCheckpointsAndDeletesNoHistory(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: seed, pathCount: 30, changesPerEpoch: 1...8)
        var model = JournalModel()
        for _ in 0..<3 {
            // Relaunching in between: closing waits for a checkpoint under way.
            let journal = try Journal.open(
                path: directory.path, options: Self.compactionOff, fileSystem: PosixFileSystem())
            #expect(journal.recoveredState.entries == model.latest)
            try commitEpochs(150, journal, &generator, &model, settling: true)
            try journal.close()
        }
        let checkpoints = try Self.checkpointFiles(in: directory)
        #expect(checkpoints.count == 2, "the two newest checkpoints, older ones deleted: \(checkpoints)")
        let reader = try JournalReader(at: directory.url)
        #expect(try reader.history().map(\.epoch) == model.epochs, "every epoch from the first is retained")
        for epoch in model.epochs where epoch % 11 == 0 {
            #expect(try reader.state(through: epoch).entries == model.states[epoch], "epoch \(epoch)")
        }
        #expect(try reader.state().entries == model.latest)
        let start = try #require(try AllHistoryRetentionTests.replayStart(of: directory))
        #expect(start.epoch > model.epochs.last! / 2, "a restore starts from a recent checkpoint")
        #expect(StoreInspector.verify(directory.url).status == .clean)
    }

    @Test func withCompactionAndCheckpointsBothManualNothingIsWrittenInTheBackground() throws {
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: 8, pathCount: 30, changesPerEpoch: 1...8)
        var model = JournalModel()
        let journal = try Journal.open(
            path: directory.path, options: Self.options(.manual), fileSystem: PosixFileSystem())
        try commitEpochs(400, journal, &generator, &model)
        try journal.close()
        #expect(try Self.checkpointFiles(in: directory).isEmpty)
        #expect(try AllHistoryRetentionTests.replayStart(of: directory) == nil, "a restore replays every epoch")
        #expect(try Self.journalBytes(of: directory).all > 16 << 10, "enough was written to trigger a checkpoint")
        #expect(try JournalReader(at: directory.url).state().entries == model.latest)
    }

    @Test func whatARestoreReplaysStaysBoundedByTheStateWhileCompactionIsOff() throws {
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: 12, pathCount: 40, changesPerEpoch: 1...6)
        var model = JournalModel()
        var largestReplay: Int64 = 0
        var largestCheckpoint: Int64 = 0
        for _ in 0..<20 {
            let journal = try Journal.open(
                path: directory.path, options: Self.compactionOff, fileSystem: PosixFileSystem())
            #expect(journal.recoveredState.entries == model.latest)
            try commitEpochs(100, journal, &generator, &model, settling: true)
            // Closing lets a checkpoint under way finish, as a relaunch would find it.
            try journal.close()
            largestReplay = max(largestReplay, try Self.journalBytes(of: directory).afterCheckpoint)
            let store = StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path)
            for name in try Self.checkpointFiles(in: directory) {
                largestCheckpoint = max(largestCheckpoint, try store.fileSize(name))
            }
        }
        // A checkpoint starts once the journal since the last one outgrows both 4 KiB and the
        // checkpoint; what a round writes while one is folded comes on top.
        let roundBytes = try Self.journalBytes(of: directory).all / 20
        let bound = max(4 << 10, largestCheckpoint) + 2 * roundBytes
        #expect(largestReplay <= bound, "replayed at most \(largestReplay) bytes, against a bound of \(bound)")
        let all = try Self.journalBytes(of: directory).all
        #expect(all > 4 * bound, "the history kept (\(all) bytes) is much larger than what a restore replays")
        #expect(try JournalReader(at: directory.url).history().map(\.epoch) == model.epochs)
        #expect(try JournalReader(at: directory.url).state().entries == model.latest)
    }

    @Test func aCheckpointByHandKeepsEveryEpochWhereCompactionDropsThem() throws {
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: 31, pathCount: 20)
        var model = JournalModel()
        let journal = try Journal.open(
            path: directory.path, options: Self.options(.manual), fileSystem: PosixFileSystem())
        var removed: [String] = []
        for _ in 0..<4 {
            try commitEpochs(40, journal, &generator, &model)
            let report = try #require(try journal.checkpoint())
            #expect(report.checkpointEpoch == model.epochs.last)
            removed += report.removedFiles
        }
        #expect(removed.allSatisfy { $0.hasPrefix("checkpoint-") }, "only superseded checkpoints go: \(removed)")
        #expect(removed.count == 2)
        #expect(try journal.checkpoint() == nil, "nothing committed since the last checkpoint")
        #expect(try journal.history().map(\.epoch) == model.epochs)
        #expect(try journal.state(through: 1).entries == model.states[1])

        try commitEpochs(40, journal, &generator, &model)
        let compaction = try #require(try journal.compact())
        #expect(compaction.removedFiles.contains { $0.hasPrefix("segment-") }, "compaction applies retention")
        #expect(try journal.history().first!.epoch > 1)
        try journal.close()
        #expect(try JournalReader(at: directory.url).state().entries == model.latest)
    }

    @Test func compactionAppliesRetentionEvenWhenTheNewestCheckpointIsAlreadyAtTheLatestEpoch() throws {
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: 44, pathCount: 20)
        var model = JournalModel()
        let journal = try Journal.open(
            path: directory.path, options: Self.options(.manual), fileSystem: PosixFileSystem())
        for _ in 0..<3 {
            try commitEpochs(40, journal, &generator, &model)
            try journal.checkpoint()
        }
        #expect(try journal.history().first?.epoch == 1)
        let checkpoints = try journal.store.readManifest().checkpoints
        #expect(checkpoints.map(\.epoch) == [80, 120])

        // As a store left by automatic checkpoints is: nothing to fold, only history to drop.
        let report = try #require(try journal.compact(), "compaction dropped nothing")
        #expect(report.checkpointEpoch == 120)
        #expect(report.liveEntries == model.latest.count)
        #expect(report.removedFiles.contains { $0.hasPrefix("segment-") })
        #expect(try journal.history().first?.epoch == 80, "from the older retained checkpoint on")
        #expect(try journal.compact() == nil, "nothing more to drop")
        try commitEpochs(5, journal, &generator, &model)
        try journal.close()
        let reader = try JournalReader(at: directory.url)
        #expect(try reader.state().entries == model.latest)
        #expect(try reader.history().first?.epoch == 80)
        #expect(StoreInspector.verify(directory.url).status == .clean)
    }

    /// Commits 20,000 epochs of one put of 200 random bytes (which compress to no fewer), to 50 paths.
    static func commitRandomStates(to journal: Journal) throws {
        var random = SplitMix64(seed: 3)
        let paths = (0..<50).map { RestorationPath("Main", "Item-\($0)") }
        for index in 0..<20_000 {
            let state = (0..<25).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } }
            try journal.commit([.put(paths[index % 50], state)])
        }
    }

    @Test(arguments: [false, true])
    func aBackgroundCheckpointStartsOnlyOnceTheJournalHasGrownByTheThreshold(automaticCompaction: Bool) throws {
        // What an epoch of this workload takes in the journal.
        let measured = TemporaryDirectory()
        let plain = try Journal.open(path: measured.path, options: Self.options(.manual), fileSystem: PosixFileSystem())
        try Self.commitRandomStates(to: plain)
        try plain.close()
        let epochBytes = Double(try Self.journalBytes(of: measured).all) / 20_000

        let directory = TemporaryDirectory()
        let logs = CapturedLogs()
        var options = Self.options(CompactionPolicy(isAutomatic: automaticCompaction))
        options.compaction.growthRatio = 0
        options.compaction.minimumJournalBytes = 64 << 10
        options.segmentSizeLimit = 64 << 20
        options.logger = logs.logger
        let journal = try Journal.open(path: directory.path, options: options, fileSystem: PosixFileSystem())
        try Self.commitRandomStates(to: journal)
        try journal.close()
        let epochs = logs.entries(.info, containing: "into a checkpoint").compactMap {
            $0.metadata["epoch"].flatMap { UInt64("\($0)") }
        }
        #expect(epochs.count >= 2, "checkpoints: \(epochs)")
        // A checkpoint starts once the journal since the last one reaches 64 KiB: a commit that
        // found one due while another was about to start would start one sooner.
        let least = UInt64((Double(64 << 10) / epochBytes).rounded(.down))
        let gaps = zip(epochs, epochs.dropFirst()).map { $1 - $0 }
        #expect(gaps.allSatisfy { $0 >= least }, "epochs between checkpoints: \(gaps), at least \(least)")
    }

    @Test func closingRightAfterACommitThatScheduledACheckpointNeitherHangsNorReportsAFailure() throws {
        let logs = CapturedLogs()
        var cancelledOrRun = 0
        for round in 0..<100 {
            let directory = TemporaryDirectory()
            var options = Self.options(CompactionPolicy(isAutomatic: round % 2 == 0))
            options.compaction.growthRatio = 0
            options.compaction.minimumJournalBytes = 1
            options.logger = logs.logger
            let journal = try Journal.open(path: directory.path, options: options, fileSystem: PosixFileSystem())
            // Each commit is past the threshold: the first schedules a checkpoint, and closing
            // follows at once, most often before its thread begins.
            try journal.commit([.put(RestorationPath("Main"), Array(repeating: UInt8(round), count: 64))])
            try journal.close()
            let reader = try JournalReader(at: directory.url)
            #expect(try reader.state().entries == [RestorationPath("Main"): Array(repeating: UInt8(round), count: 64)])
            cancelledOrRun += 1
        }
        #expect(cancelledOrRun == 100)
        #expect(logs.entries(.error, containing: "").isEmpty, "\(logs.entries(.error, containing: "").map(\.message))")
    }

    /// The policies a random run switches between when it reopens the store.
    static let policies: [(name: String, compaction: CompactionPolicy, retention: RetentionPolicy)] = [
        ("compaction off", CompactionPolicy(isAutomatic: false), RetentionPolicy()),
        ("manual", .manual, RetentionPolicy()),
        ("automatic compaction", CompactionPolicy(), RetentionPolicy(checkpoints: 1)),
        ("automatic, all history", CompactionPolicy(), .allHistory),
    ]

    @Test(arguments: [1 as UInt64, 2, 3, 4, 5, 6, 7, 8])
    func randomRunsOfCommitsCheckpointsCompactionsAndReopensKeepEveryRetainedEpochIntact(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        var random = SplitMix64(seed: seed)
        var generator = WorkloadGenerator(seed: seed, pathCount: 25, changesPerEpoch: 1...6)
        var model = JournalModel()
        func open(_ policy: Int) throws -> Journal {
            var options = Self.options(Self.policies[policy].compaction)
            options.compaction.growthRatio = 0.5
            options.compaction.minimumJournalBytes = 2 << 10
            options.retention = Self.policies[policy].retention
            return try Journal.open(path: directory.path, options: options, fileSystem: PosixFileSystem())
        }
        var policy = Int(random.next() % 4)
        var journal = try open(policy)
        // History may lose its oldest epochs only once something that applies retention has run.
        var historyMayShrink = false
        for step in 0..<600 {
            let roll = random.next() % 100
            let context = "seed \(seed), step \(step), \(Self.policies[policy].name)"
            if roll < 75 {
                let changes = generator.nextEpoch()
                model.commit(try journal.commit(changes).epoch, changes)
                if policy == 2 { historyMayShrink = true }
            } else if roll < 82 {
                try journal.checkpoint()
            } else if roll < 86 {
                try journal.compact()
                historyMayShrink = historyMayShrink || !Self.policies[policy].retention.keepsAllHistory
            } else if roll < 92 {
                try journal.close()
                policy = Int(random.next() % 4)
                journal = try open(policy)
                #expect(journal.recoveredState.entries == model.latest, "\(context): reopened")
            } else {
                // A background compaction may drop the oldest epochs between reading the history
                // and reading one of its epochs (which then says `noSuchEpoch`, as documented):
                // let the one a commit started finish, and none starts until the next commit.
                journal.waitForCompactions()
                let history = try journal.history().map(\.epoch)
                guard let first = history.first else {
                    #expect(model.epochs.isEmpty, "\(context): no history")
                    continue
                }
                #expect(history == Array(first...(model.epochs.last ?? first)), "\(context): gaps or a lost tail")
                if !historyMayShrink { #expect(first == 1, "\(context): history starts at \(first)") }
                let epoch = history[Int(random.next() % UInt64(history.count))]
                #expect(try journal.state(through: epoch).entries == model.states[epoch], "\(context): epoch \(epoch)")
            }
        }
        try journal.close()
        #expect(try JournalReader(at: directory.url).state().entries == model.latest)
        #expect(StoreInspector.verify(directory.url).status == .clean)
    }
}
