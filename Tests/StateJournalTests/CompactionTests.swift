import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

@Suite struct CompactionTests {
    static func options(retention: RetentionPolicy = RetentionPolicy(), segmentSize: Int = 64 << 20) -> JournalOptions {
        var options = JournalOptions(durability: .none, segmentSizeLimit: segmentSize, retention: retention)
        options.compaction = .manual
        return options
    }

    /// Writes `epochs` epochs, compacting every `every`, and returns the model.
    static func write(
        _ journal: Journal, epochs: Int, compactEvery every: Int, generator: inout WorkloadGenerator,
        model: inout JournalModel, checkpointOnly: Bool = false
    ) throws {
        for index in 1...epochs {
            let changes = generator.nextEpoch()
            let info = try journal.commit(changes)
            model.commit(info.epoch, changes)
            if index % every == 0 { try checkpointOnly ? journal.checkpoint() : journal.compact() }
        }
    }

    @Test func replayEqualsTheModelAtEveryRetainedEpochAcrossCompactions() throws {
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: 7, pathCount: 40)
        var model = JournalModel()
        let journal = try Journal.open(
            path: directory.path, options: Self.options(retention: RetentionPolicy(checkpoints: 3)),
            fileSystem: PosixFileSystem())
        try Self.write(journal, epochs: 120, compactEvery: 25, generator: &generator, model: &model)
        let history = try journal.history()
        #expect(history.last?.epoch == 120)
        // Three checkpoints are kept: at 50, 75 and 100; history starts at the oldest.
        #expect(history.first?.epoch == 50)
        #expect(history.map(\.epoch) == Array(50...120).map(UInt64.init))
        for info in history {
            #expect(try journal.state(through: info.epoch).entries == model.states[info.epoch], "epoch \(info.epoch)")
        }
        #expect(throws: JournalError.self) { try journal.state(through: 49) }
        try journal.close()

        let reopened = try Journal.open(
            path: directory.path, options: Self.options(retention: RetentionPolicy(checkpoints: 3)),
            fileSystem: PosixFileSystem())
        #expect(reopened.recoveredState.entries == model.latest)
        #expect(reopened.recoveryReport.isClean)
        try reopened.close()
        let reader = try JournalReader(at: directory.url)
        #expect(try reader.history().map(\.epoch) == history.map(\.epoch))
    }

    @Test func compactionWhileOtherThreadsCommitChangesNothingObservable() throws {
        let directory = TemporaryDirectory()
        // Syncs are tracked, not made: compactions then take as long as their CPU work, whatever the disk.
        let journal = try Journal.open(
            path: directory.path, options: Self.options(retention: RetentionPolicy(checkpoints: 100)),
            fileSystem: FaultInjectingFileSystem())
        let committed = Locked<[(UInt64, [JournalChange])]>([])
        let done = Locked(0)
        let compactions = Locked(0)
        let writerCount = 3
        for thread in 0..<writerCount {
            Thread {
                var generator = WorkloadGenerator(seed: UInt64(thread + 1), pathCount: 30, removeAllPercent: 0)
                // Three rounds of 20 commits; before each next round, a writer waits for one more
                // compaction, so that compactions run between and during the writers' commits.
                for commits in 0..<60 {
                    if commits > 0 && commits % 20 == 0 {
                        while compactions.withLock({ $0 }) < commits / 20 { usleep(100) }
                    }
                    let changes = generator.nextEpoch().map { change -> JournalChange in
                        // Each thread owns its own paths, so the model does not depend on interleaving.
                        switch change {
                        case .put(let path, let bytes): .put(path.appending("t\(thread)"), bytes)
                        case .remove(let path): .remove(path.appending("t\(thread)"))
                        case .removeAll: .removeAll
                        }
                    }
                    do {
                        let info = try journal.commit(changes)
                        committed.withLock { $0.append((info.epoch, changes)) }
                    } catch {
                        Issue.record("a commit failed during compaction: \(error)")
                    }
                }
                done.withLock { $0 += 1 }
            }.start()
        }
        while done.withLock({ $0 }) < writerCount {
            do {
                if try journal.compact() != nil { compactions.withLock { $0 += 1 } }
            } catch {
                Issue.record("a compaction failed: \(error)")
                // Let the writers finish without waiting for compactions.
                compactions.withLock { $0 = Int.max / 2 }
            }
        }
        try journal.compact()
        var model = JournalModel()
        for (epoch, changes) in committed.withLock({ $0 }).sorted(by: { $0.0 < $1.0 }) { model.commit(epoch, changes) }
        #expect(try journal.state().entries == model.latest)
        for epoch in try journal.history().map(\.epoch) {
            #expect(try journal.state(through: epoch).entries == model.states[epoch], "epoch \(epoch)")
        }
        #expect(compactions.withLock { $0 } >= 2)
        try journal.close()
    }

    @Test func closingWaitsForABackgroundCompactionSoNothingIsWrittenAfterTheLockIsReleased() throws {
        for round in 0..<5 {
            let directory = TemporaryDirectory()
            var options = JournalOptions(durability: .none, retention: RetentionPolicy(checkpoints: 2))
            options.compaction = CompactionPolicy(isAutomatic: true, growthRatio: 0, minimumJournalBytes: 1)
            var generator = WorkloadGenerator(seed: UInt64(round), pathCount: 300, stateSizes: 200...400)
            var model = JournalModel()
            let journal = try Journal.open(path: directory.path, options: options, fileSystem: PosixFileSystem())
            for _ in 0..<40 {
                let changes = generator.nextEpoch()
                model.commit(try journal.commit(changes).epoch, changes)
            }
            try journal.close()
            let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
            let reopened = try Journal.open(
                path: directory.path, options: Self.options(), fileSystem: PosixFileSystem())
            #expect(reopened.recoveryReport.isClean, "round \(round): \(reopened.recoveryReport)")
            #expect(reopened.recoveredState.entries == model.latest)
            try reopened.close()
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == names)
        }
    }

    @Test func theLZ4ToolAcceptsEveryCheckpoint() throws {
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: 3, pathCount: 200, stateSizes: 50...3000)
        var model = JournalModel()
        let journal = try Journal.open(
            path: directory.path, options: Self.options(retention: RetentionPolicy(checkpoints: 4)),
            fileSystem: PosixFileSystem())
        try Self.write(journal, epochs: 40, compactEvery: 10, generator: &generator, model: &model)
        try journal.close()
        let checkpoints = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("checkpoint-")
        }
        #expect(checkpoints.count == 4)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/lz4") else {
            Issue.record(
                "the lz4 tool is missing: install Debian's lz4 package (bash .ci/deps) to check checkpoints with it")
            return
        }
        for name in checkpoints {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/lz4")
            process.arguments = ["-t", "-q", directory.appending(name)]
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "lz4 -t rejected \(name)")
        }
    }

    @Test func retentionKeepsExactlyWhatThePolicySays() throws {
        for kept in [1, 2, 5] {
            let directory = TemporaryDirectory()
            var generator = WorkloadGenerator(seed: 11, pathCount: 20)
            var model = JournalModel()
            let journal = try Journal.open(
                path: directory.path, options: Self.options(retention: RetentionPolicy(checkpoints: kept)),
                fileSystem: PosixFileSystem())
            try Self.write(journal, epochs: 60, compactEvery: 10, generator: &generator, model: &model)
            let oldest = UInt64(60 - 10 * (kept - 1))
            #expect(try journal.history().first?.epoch == oldest, "keeping \(kept) checkpoints")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(names.filter { $0.hasPrefix("checkpoint-") }.count == kept)
            try journal.close()
        }
        // A byte budget smaller than one generation keeps only the current checkpoint.
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: 12, pathCount: 20)
        var model = JournalModel()
        let journal = try Journal.open(
            path: directory.path, options: Self.options(retention: RetentionPolicy(checkpoints: 10, byteBudget: 1)),
            fileSystem: PosixFileSystem())
        try Self.write(journal, epochs: 30, compactEvery: 10, generator: &generator, model: &model)
        #expect(try journal.history().first?.epoch == 30)
        // An age limit keeps every checkpoint younger than it.
        var ageOptions = Self.options(retention: RetentionPolicy(checkpoints: 1, maximumAge: 3600))
        ageOptions.clock = { Date() }
        try journal.close()
        let aged = try Journal.open(path: TemporaryDirectory().path, options: ageOptions, fileSystem: PosixFileSystem())
        var ageModel = JournalModel()
        try Self.write(aged, epochs: 30, compactEvery: 10, generator: &generator, model: &ageModel)
        #expect(try aged.history().first?.epoch == 1)
        try aged.close()
    }

    @Test func aDamagedCheckpointFallsBackToThePreviousOneAndIsReported() throws {
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: 5, pathCount: 30)
        var model = JournalModel()
        let journal = try Journal.open(path: directory.path, options: Self.options(), fileSystem: PosixFileSystem())
        try Self.write(journal, epochs: 30, compactEvery: 10, generator: &generator, model: &model)
        try journal.close()
        let newest = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("checkpoint-")
        }.sorted().last!
        try Corruption.flipByte(directory.appending(newest), at: 20)

        #expect(throws: JournalError.self) { try JournalReader(at: directory.url, recovery: .strict).state() }
        let state = try JournalReader(at: directory.url).state()
        #expect(state.entries == model.latest)
        #expect(state.epoch?.epoch == 30)

        let reopened = try Journal.open(path: directory.path, options: Self.options(), fileSystem: PosixFileSystem())
        #expect(reopened.recoveredState.entries == model.latest)
        #expect(reopened.recoveryReport.damagedCheckpoints.map(\.file) == [newest])
        #expect(reopened.recoveryReport.quarantinedFiles == ["damaged-" + newest])
        try reopened.close()
    }

    @Test func whenEveryCheckpointIsDamagedTheErrorNamesThem() throws {
        let directory = TemporaryDirectory()
        var generator = WorkloadGenerator(seed: 6, pathCount: 10)
        var model = JournalModel()
        let journal = try Journal.open(
            path: directory.path, options: Self.options(retention: RetentionPolicy(checkpoints: 1)),
            fileSystem: PosixFileSystem())
        try Self.write(journal, epochs: 20, compactEvery: 10, generator: &generator, model: &model)
        try journal.close()
        let only = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("checkpoint-")
        }
        #expect(only.count == 1)
        try Corruption.flipByte(directory.appending(only[0]), at: 30)
        do {
            _ = try JournalReader(at: directory.url).state()
            Issue.record("replay succeeded without any consistent checkpoint")
        } catch let error as JournalError {
            #expect(error.code == .damaged)
            #expect(error.message.contains(only[0]))
        }
    }

    /// `operation` is `compact`, `checkpoint` (which deletes no history), or `retention`: a
    /// compaction with nothing to fold, after checkpoints written by hand up to the latest epoch,
    /// which only drops history.
    @Test(arguments: [
        (RetentionPolicy(checkpoints: 1), "compact"), (.allHistory, "compact"),
        (RetentionPolicy(checkpoints: 1), "checkpoint"),
        (RetentionPolicy(checkpoints: 1), "retention"),
    ])
    func aCrashAtEveryIOCallOfACompactionLeavesAStoreThatOpensToTheSameState(
        retention: RetentionPolicy, operation: String
    ) throws {
        let keepsHistory = retention.keepsAllHistory || operation == "checkpoint"
        let epochs = operation == "retention" ? 10 : 12
        var cases = 0
        var call = 1
        while true {
            let directory = TemporaryDirectory()
            var generator = WorkloadGenerator(seed: 9, pathCount: 15)
            var model = JournalModel()
            let setup = try Journal.open(
                path: directory.path, options: Self.options(retention: retention),
                fileSystem: PosixFileSystem())
            try Self.write(
                setup, epochs: epochs, compactEvery: 5, generator: &generator, model: &model,
                checkpointOnly: operation != "compact")
            try setup.close()

            let faulty = FaultInjectingFileSystem()
            let journal = try Journal.open(
                path: directory.path, options: Self.options(retention: retention),
                fileSystem: faulty)
            faulty.arm(FaultPlan(at: call, fault: .eio, persistent: true))
            let completed = (try? operation == "checkpoint" ? journal.checkpoint() : journal.compact()) != nil
            let fired = faulty.faultsFired > 0
            try? journal.close()
            // The process "dies" here: reopen with the real file system.
            let reopened = try Journal.open(
                path: directory.path, options: Self.options(retention: retention),
                fileSystem: PosixFileSystem())
            #expect(reopened.recoveredState.entries == model.latest, "fault at compaction call \(call)")
            #expect(reopened.recoveredState.epoch?.epoch == UInt64(epochs))
            if keepsHistory {
                #expect(try reopened.history().map(\.epoch) == model.epochs, "fault at compaction call \(call)")
            }
            try reopened.close()
            let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
            let manifest = try StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path).readManifest()
            let named = Set(
                manifest.segments.map(FileNames.segment)
                    + manifest.checkpoints.map { FileNames.checkpoint($0.sequence) } + ["MANIFEST", "LOCK"])
            #expect(names == named, "leftover files after a fault at compaction call \(call)")
            cases += 1
            if completed && !fired { break }
            call += 1
        }
        // Keeping all history, a compaction deletes one checkpoint and no segment; with nothing to
        // fold, it reads the checkpoint, writes the manifest and deletes: fewer calls.
        #expect(cases > (keepsHistory || operation == "retention" ? 5 : 10))
    }
}
