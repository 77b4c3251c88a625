import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Everything that may run at once does: several threads commit (group commit under `everyCommit`,
/// the background sync under a short interval), compaction runs by hand and by policy, segments
/// roll, a reader replays the store from disk and another reads through the writer. Run under
/// ThreadSanitizer by `.ci/sanitizers`.
@Suite struct ConcurrencyTests {
    static let writerCount = 3
    static let epochsPerWriter = 30

    @Test(.timeLimit(.minutes(10)), arguments: [Durability.everyCommit, .interval(seconds: 0.002)])
    func writersCompactionAndReadersAtOnceChangeNothingObservable(durability: Durability) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var options = testOptions(durability: durability, segmentSizeLimit: 2048)
        options.retention = RetentionPolicy(checkpoints: 1000)
        options.compaction = CompactionPolicy(isAutomatic: true, growthRatio: 0.5, minimumJournalBytes: 4096)
        let journal = try openJournal(store, options)
        let committed = Locked<[(epoch: UInt64, changes: [JournalChange])]>([])
        let seen = Locked<[(epoch: UInt64, entries: [RestorationPath: [UInt8]])]>([])
        let problems = Locked<[String]>([])
        let writersLeft = Locked(Self.writerCount)
        let group = DispatchGroup()

        for thread in 0..<Self.writerCount {
            group.enter()
            Thread {
                defer {
                    writersLeft.withLock { $0 -= 1 }
                    group.leave()
                }
                var generator = WorkloadGenerator(seed: UInt64(thread + 11), pathCount: 10, removeAllPercent: 0)
                for round in 0..<Self.epochsPerWriter {
                    // Each thread owns its paths, so the model does not depend on the interleaving.
                    let changes = generator.nextEpoch().map { change -> JournalChange in
                        switch change {
                        case .put(let path, let bytes): .put(path.appending("t\(thread)"), bytes)
                        case .remove(let path): .remove(path.appending("t\(thread)"))
                        case .removeAll: .removeAll
                        }
                    }
                    do {
                        let info: EpochInfo
                        if round % 2 == 0 {
                            info = try journal.commit(changes, metadata: ["writer": "\(thread)"])
                        } else {
                            let epoch = try journal.beginEpoch()
                            for change in changes {
                                switch change {
                                case .put(let path, let bytes): try epoch.put(path, bytes)
                                case .remove(let path): try epoch.remove(path)
                                case .removeAll: try epoch.removeAll()
                                }
                            }
                            info = try epoch.commit(metadata: ["writer": "\(thread)", "round": "\(round)"])
                        }
                        committed.withLock { $0.append((info.epoch, changes)) }
                    } catch {
                        problems.withLock { $0.append("writer \(thread) round \(round): \(error)") }
                    }
                }
            }.start()
        }

        group.enter()
        Thread {
            defer { group.leave() }
            var reads = 0
            while writersLeft.withLock({ $0 }) > 0 || reads < 5 {
                reads += 1
                do {
                    let reader = try openReader(store, recovery: .strict)
                    let state = try reader.state()
                    if let epoch = state.epoch?.epoch, reads % 3 == 0 {
                        seen.withLock { $0.append((epoch, state.entries)) }
                    }
                    var epochs = 0
                    try reader.forEachEpoch { _, _ in
                        epochs += 1
                        return epochs < 40
                    }
                } catch {
                    problems.withLock { $0.append("disk reader, read \(reads): \(error)") }
                }
            }
        }.start()

        group.enter()
        Thread {
            defer { group.leave() }
            var reads = 0
            while writersLeft.withLock({ $0 }) > 0 || reads < 5 {
                reads += 1
                do {
                    let state = try journal.state()
                    if let epoch = state.epoch?.epoch, reads % 3 == 0 {
                        seen.withLock { $0.append((epoch, state.entries)) }
                    }
                    _ = try journal.history()
                } catch {
                    problems.withLock { $0.append("writer's reader, read \(reads): \(error)") }
                }
            }
        }.start()

        while writersLeft.withLock({ $0 }) > 0 {
            try journal.compact()
            Thread.sleep(forTimeInterval: 0.002)
        }
        group.wait()
        try journal.compact()

        #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0.prefix(5) })")
        var model = JournalModel()
        let all = committed.withLock { $0 }.sorted { $0.epoch < $1.epoch }
        #expect(all.count == Self.writerCount * Self.epochsPerWriter)
        for (epoch, changes) in all { model.commit(epoch, changes) }
        for (epoch, entries) in seen.withLock({ $0 }) {
            #expect(entries == model.states[epoch], "a reader saw epoch \(epoch) with a state no commit made")
        }
        #expect(try journal.state().entries == model.latest)
        for epoch in try journal.history().map(\.epoch) {
            #expect(try journal.state(through: epoch).entries == model.states[epoch], "epoch \(epoch)")
        }
        let checkpoints = try FileManager.default.contentsOfDirectory(atPath: store).filter {
            $0.hasPrefix("checkpoint-")
        }
        #expect(!checkpoints.isEmpty)
        try journal.close()
        let reopened = try openJournal(store, options)
        #expect(reopened.recoveredState.entries == model.latest)
        #expect(reopened.recoveryReport.isClean)
        try reopened.close()
    }
}
