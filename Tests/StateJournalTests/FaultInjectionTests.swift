import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every fault the I/O seam can produce, at every I/O call of a small workload: the error surfaces as
/// a ``JournalError``, nothing is acknowledged that is not there afterwards, everything acknowledged
/// is, and the store reopens consistent.
@Suite struct FaultInjectionTests {
    /// One kind of fault, swept over every call it can hit.
    enum Scenario: String, CaseIterable, Sendable {
        case eioOnce, enospcOnce, eioFromThenOn
        case shortWriteOnce, shortWriteThenENOSPC, shortWritesFromThenOn, diskFullFromThenOn
        case failedSyncOnce, failedSyncsFromThenOn, failedRenameOnce

        var kinds: Set<IOCallKind>? {
            switch self {
            case .eioOnce, .enospcOnce, .eioFromThenOn: nil
            case .shortWriteOnce, .shortWriteThenENOSPC, .shortWritesFromThenOn, .diskFullFromThenOn: [.write]
            case .failedSyncOnce, .failedSyncsFromThenOn: IOCallKind.syncs
            case .failedRenameOnce: [.rename]
            }
        }

        func plan(at call: Int) -> FaultPlan {
            switch self {
            case .eioOnce: FaultPlan(at: call, fault: .eio)
            case .enospcOnce: FaultPlan(at: call, fault: .enospc)
            case .eioFromThenOn: FaultPlan(at: call, fault: .eio, persistent: true)
            case .shortWriteOnce: FaultPlan(at: call, of: kinds, fault: .shortWrite)
            case .shortWriteThenENOSPC: FaultPlan(at: call, of: kinds, fault: .shortWriteThenError(ENOSPC))
            case .shortWritesFromThenOn: FaultPlan(at: call, of: kinds, fault: .shortWrite, persistent: true)
            case .diskFullFromThenOn: FaultPlan(at: call, of: kinds, fault: .enospc, persistent: true)
            case .failedSyncOnce: FaultPlan(at: call, of: kinds, fault: .eio)
            case .failedSyncsFromThenOn: FaultPlan(at: call, of: kinds, fault: .eio, persistent: true)
            case .failedRenameOnce: FaultPlan(at: call, of: kinds, fault: .eio)
            }
        }
    }

    /// What a workload run under a fault did and saw.
    struct Outcome {
        /// The state after each acknowledged epoch.
        var acknowledged: [UInt64: [RestorationPath: [UInt8]]] = [:]
        /// The states failed commits would have made, by the epoch number they were written under:
        /// such an epoch may or may not be on disk.
        var attempted: [UInt64: [[RestorationPath: [UInt8]]]] = [:]
        var problems: [String] = []
        var errors = 0

        func allows(_ epoch: UInt64, _ state: [RestorationPath: [UInt8]]) -> Bool {
            if let acknowledged = acknowledged[epoch] { return acknowledged == state }
            return attempted[epoch]?.contains(state) ?? false
        }
    }

    /// Incompressible states for the epoch that needs more than one batch.
    static let blobs: [[UInt8]] = {
        var random = SplitMix64(seed: 7)
        return (0..<3).map { _ in random.bytes(12_000) }
    }()

    /// Three openings of the store, committing this many epochs each.
    static let sessions = [4, 3, 2]
    static let options = testOptions(durability: .everyCommit, segmentSizeLimit: 500)

    /// Opens the store through `fileSystem` once per session, commits that many epochs and closes.
    static func runWorkload(
        store: String, fileSystem: FaultInjectingFileSystem, options: JournalOptions = options, compacts: Bool = true
    ) -> Outcome {
        var outcome = Outcome()
        var workload = WorkloadGenerator(
            seed: 99, pathCount: 6, stateSizes: 60...250, changesPerEpoch: 1...4, removeAllPercent: 8)

        func record(_ error: any Error, _ doing: String) -> JournalError? {
            outcome.errors += 1
            guard let error = error as? JournalError else {
                outcome.problems.append("\(doing) threw \(type(of: error)), not a JournalError: \(error)")
                return nil
            }
            return error
        }

        for (session, epochs) in sessions.enumerated() {
            let journal: Journal
            do {
                journal = try Journal.open(path: store, options: options, fileSystem: fileSystem)
            } catch {
                _ = record(error, "open")
                continue
            }
            var current = journal.recoveredState.entries
            if let recovered = journal.recoveredState.epoch?.epoch {
                if !outcome.allows(recovered, current) {
                    outcome.problems.append("reopening recovered epoch \(recovered) with a state no commit made")
                }
            } else if !current.isEmpty {
                outcome.problems.append("reopening recovered entries without an epoch")
            }
            if let highest = outcome.acknowledged.keys.max(), (journal.recoveredState.epoch?.epoch ?? 0) < highest {
                outcome.problems.append("reopening lost acknowledged epoch \(highest)")
            }
            sessionLoop: for index in 0..<epochs {
                var changes = workload.nextEpoch()
                if session == 1 && index == 1 {
                    // An epoch too large for one batch: a batch record is written before the commit.
                    changes += blobs.enumerated().map { .put(RestorationPath("Blob", "\($0.offset)"), $0.element) }
                }
                let after = JournalModel.applying(changes, to: current)
                let epoch: EpochWriter
                do {
                    epoch = try journal.beginEpoch()
                } catch {
                    if let error = record(error, "beginEpoch"), error.code == .storePoisoned || error.code == .closed {
                        break sessionLoop
                    }
                    continue
                }
                do {
                    for change in changes {
                        switch change {
                        case .put(let path, let bytes): try epoch.put(path, bytes)
                        case .remove(let path): try epoch.remove(path)
                        case .removeAll: try epoch.removeAll()
                        }
                    }
                } catch {
                    epoch.abort()
                    if let error = record(error, "put"), error.code == .storePoisoned { break sessionLoop }
                    continue
                }
                do {
                    let info = try epoch.commit(metadata: ["session": "\(epochs)"])
                    if info.epoch != epoch.epoch {
                        outcome.problems.append("commit returned \(info.epoch) for epoch \(epoch.epoch)")
                    }
                    outcome.acknowledged[info.epoch] = after
                    current = after
                } catch {
                    outcome.attempted[epoch.epoch, default: []].append(after)
                    epoch.abort()
                    if let error = record(error, "commit"), error.code == .storePoisoned {
                        // A failed sync is never retried as if it had worked: nothing more is accepted.
                        let refused =
                            (try? journal.beginEpoch()) == nil && (try? journal.commit([])) == nil
                            && (try? journal.sync()) == nil
                        if !refused { outcome.problems.append("a poisoned journal accepted more work") }
                        break sessionLoop
                    }
                }
                if compacts && session == 1 && index == 1 {
                    // A compaction between commits: its every step is under the fault too.
                    do {
                        _ = try journal.compact()
                    } catch {
                        if let error = record(error, "compact"), error.code == .storePoisoned { break sessionLoop }
                    }
                }
            }
            do { try journal.close() } catch { _ = record(error, "close") }
        }
        return outcome
    }

    /// Opens the store (by default with the real file system) and checks it against what the workload saw.
    static func verify(store: String, outcome: Outcome, context: String, fileSystem: any FileSystem = PosixFileSystem())
        -> [String]
    {
        var problems = outcome.problems.map { "\(context): \($0)" }
        do {
            let journal = try Journal.open(path: store, options: testOptions(), fileSystem: fileSystem)
            if let damage = journal.recoveryReport.damage {
                problems.append("\(context): a fault left damage: \(damage)")
            }
            // One pass over the journal rebuilds the state at every retained epoch, from the state
            // at the first one (a checkpoint may hold what came before it).
            let history = try journal.history().map(\.epoch)
            var state = try history.first.map { try journal.state(through: $0).entries } ?? [:]
            try journal.forEachEpoch { info, changes in
                if info.epoch != history.first { state = JournalModel.applying(changes, to: state) }
                if !outcome.allows(info.epoch, state) {
                    problems.append(
                        "\(context): epoch \(info.epoch) is on disk but was never committed with that state")
                }
                return true
            }
            if state != journal.recoveredState.entries {
                problems.append("\(context): replay and recovered state differ")
            }
            // Compaction may retire old epochs; every acknowledged epoch from the oldest retained one on is there.
            let oldest = history.first ?? 0
            for epoch in outcome.acknowledged.keys.sorted() where epoch >= oldest && !history.contains(epoch) {
                problems.append("\(context): acknowledged epoch \(epoch) is missing (history \(history))")
            }
            if let latest = outcome.acknowledged.keys.max(), (history.last ?? 0) < latest {
                problems.append("\(context): acknowledged epoch \(latest) is lost (history \(history))")
            }
            // The store is usable: one more epoch, and a strict reopen finds it clean.
            let info = try journal.commit([.put(RestorationPath("Verify"), [1])])
            try journal.close()
            let reopened = try Journal.open(
                path: store, options: testOptions(recovery: .strict), fileSystem: fileSystem)
            if !reopened.recoveryReport.isClean { problems.append("\(context): not clean after a verified commit") }
            if try reopened.history().map(\.epoch) != history + [info.epoch] {
                problems.append("\(context): history changed on reopening")
            }
            try reopened.close()
        } catch {
            problems.append("\(context): the store does not reopen: \(error)")
        }
        return problems
    }

    /// The calls a clean run makes, in total and of the scenario's kinds.
    static func cleanRun(_ options: JournalOptions = options) throws -> (
        fileSystem: FaultInjectingFileSystem, outcome: Outcome
    ) {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        let outcome = runWorkload(store: directory.appending("store"), fileSystem: fileSystem, options: options)
        return (fileSystem, outcome)
    }

    @Test func theCleanWorkloadRollsSegmentsAndCommitsEveryEpoch() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem()
        let outcome = Self.runWorkload(store: store, fileSystem: fileSystem)
        #expect(outcome.errors == 0)
        #expect(outcome.problems.isEmpty)
        #expect(outcome.acknowledged.keys.sorted() == Array(1...UInt64(Self.sessions.reduce(0, +))))
        #expect(try Corruption.segmentNames(in: store).count >= 2, "the workload should roll a segment")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: store).contains { $0.hasPrefix("checkpoint-") },
            "the workload should compact")
        for kind in [
            IOCallKind.open, .write, .read, .size, .truncate, .dataSync, .fullSync, .rename, .contentsOfDirectory,
            .tryLock,
        ] {
            #expect(fileSystem.callCount(of: kind) > 0, "the workload never calls \(kind)")
        }
        #expect(Self.verify(store: store, outcome: outcome, context: "clean").isEmpty)
    }

    @Test(arguments: Scenario.allCases)
    func everyFaultAtEveryIOCallSurfacesAndLeavesAConsistentStore(scenario: Scenario) throws {
        let (clean, _) = try Self.cleanRun()
        let calls = scenario.kinds.map { clean.callCount(of: $0) } ?? clean.callCount
        #expect(calls > 0)
        var problems: [String] = []
        var fired = 0
        var erroredRuns = 0
        for call in 1...calls {
            let directory = TemporaryDirectory()
            let store = directory.appending("store")
            let plan = scenario.plan(at: call)
            let fileSystem = FaultInjectingFileSystem(plan: plan)
            let outcome = Self.runWorkload(store: store, fileSystem: fileSystem)
            if fileSystem.faultsFired > 0 { fired += 1 }
            if fileSystem.unmatchedCloses > 0 {
                problems.append("\(plan): \(fileSystem.unmatchedCloses) descriptors closed twice")
            }
            if outcome.errors > 0 { erroredRuns += 1 }
            if scenario == .shortWriteOnce && outcome.errors > 0 {
                problems.append(
                    "\(plan): a short write that returns its count is not an error, yet: \(outcome.problems)")
            }
            // Under `.everyCommit` a power cut right now must keep every acknowledged epoch too.
            let image = directory.appending("power-cut")
            try fileSystem.writePowerLossImage(of: store, to: image)
            problems += Self.verify(
                store: image, outcome: outcome, context: "\(plan), after a power cut",
                fileSystem: FaultInjectingFileSystem())
            problems += Self.verify(store: store, outcome: outcome, context: "\(plan)")
        }
        noteSweep("\(scenario): \(calls) workloads, \(erroredRuns) saw an error")
        #expect(fired == calls, "every planned fault should fire")
        if scenario != .shortWriteOnce { #expect(erroredRuns > 0) }
        #expect(problems.isEmpty, "\(problems.count) problems, first: \(problems.prefix(8).joined(separator: "\n"))")
    }

    @Test func aFailedDataSyncPoisonsTheJournalUntilItIsReopened() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem()
        let journal = try Journal.open(
            path: store, options: testOptions(durability: .everyCommit), fileSystem: fileSystem)
        try journal.commit([.put(RestorationPath("Main"), [1])])
        fileSystem.arm(FaultPlan(at: 1, of: [.dataSync], fault: .eio))
        let error = journalError(.storePoisoned) { try journal.commit([.put(RestorationPath("Main"), [2])]) }
        #expect((error?.cause as? SystemError)?.errno == EIO)
        #expect(error?.message.isEmpty == false)
        let syncsAfterFailure = fileSystem.callCount(of: .dataSync)
        // The fault is gone, but the journal does not retry the sync as if it had worked.
        fileSystem.arm(nil)
        journalError(.storePoisoned) { try journal.beginEpoch() }
        journalError(.storePoisoned) { try journal.commit([.put(RestorationPath("Main"), [3])]) }
        journalError(.storePoisoned) { try journal.sync() }
        #expect(fileSystem.callCount(of: .dataSync) == syncsAfterFailure)
        try? journal.close()

        // Reopening continues from what reached the file; the failed epoch may be there, never half of it.
        let reopened = try openJournal(store, testOptions(durability: .everyCommit), realFileSystem: true)
        let recovered = reopened.recoveredState
        #expect(recovered.epoch?.epoch == 1 || recovered.epoch?.epoch == 2)
        #expect(recovered.entries[RestorationPath("Main")] == (recovered.epoch?.epoch == 1 ? [1] : [2]))
        let info = try reopened.commit([.put(RestorationPath("Main"), [4])])
        #expect(info.epoch == recovered.epoch!.epoch + 1)
        try reopened.close()
    }

    @Test func aFailedWriteAbortsTheEpochAndTheJournalStaysUsable() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem()
        let journal = try Journal.open(path: store, options: testOptions(), fileSystem: fileSystem)
        try journal.commit([.put(RestorationPath("Main"), [1])])
        fileSystem.arm(FaultPlan(at: 1, of: [.write], fault: .shortWriteThenError(ENOSPC)))
        let error = journalError(.ioFailure) { try journal.commit([.put(RestorationPath("Main"), [2])]) }
        #expect((error?.cause as? SystemError)?.errno == ENOSPC)
        #expect(error?.file?.hasSuffix(".sjl") == true)
        let info = try journal.commit([.put(RestorationPath("Main"), [3])])
        #expect(info.epoch == 2)
        try journal.close()
        let state = try openReader(store, recovery: .strict).state()
        #expect(state.entries == [RestorationPath("Main"): [3]])
        #expect(try openReader(store).history().map(\.epoch) == [1, 2])
    }

    @Test(arguments: [IOCallKind.open, .read, .size, .contentsOfDirectory])
    func everyFaultWhileReadingSurfacesAsAJournalError(kind: IOCallKind) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var workload = WorkloadGenerator(seed: 5)
        var model = JournalModel()
        let journal = try openJournal(store, testOptions(segmentSizeLimit: 1024))
        try commitEpochs(12, journal, &workload, &model)
        try journal.close()

        let counter = FaultInjectingFileSystem()
        let reader = try JournalReader(path: store, recovery: .strict, fileSystem: counter)
        _ = try reader.state()
        _ = try reader.history()
        let calls = counter.callCount(of: kind)
        #expect(calls > 0)
        var problems: [String] = []
        for call in 1...calls {
            let fileSystem = FaultInjectingFileSystem(plan: FaultPlan(at: call, of: [kind], fault: .eio))
            do {
                let reader = try JournalReader(path: store, recovery: .strict, fileSystem: fileSystem)
                let state = try reader.state()
                if state.entries != model.latest { problems.append("\(kind) #\(call): wrong state without an error") }
                let history = try reader.history()
                if history.map(\.epoch) != model.epochs {
                    problems.append("\(kind) #\(call): wrong history without an error")
                }
            } catch let error as JournalError {
                if error.code != .ioFailure {
                    problems.append("\(kind) #\(call): \(error.code), expected ioFailure: \(error)")
                }
            } catch {
                problems.append("\(kind) #\(call): \(type(of: error)) is not a JournalError: \(error)")
            }
        }
        noteSweep("reader under EIO at \(kind): \(calls) cases")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}

/// Repairs under faults: a writer opening a damaged store sets the damage aside in several steps;
/// a failure at any of them leaves a store that the next open repairs to the same state, with
/// epoch numbers still growing past every epoch ever committed.
@Suite struct RepairFaultTests {
    struct DamagedStore {
        let directory = TemporaryDirectory()
        var store: String { directory.appending("store") }
        let snapshot: DirectorySnapshot
        let model: JournalModel
        let lastConsistent: UInt64
        let highest: UInt64

        init() throws {
            var workload = WorkloadGenerator(seed: 77, pathCount: 6, removeAllPercent: 0)
            var model = JournalModel()
            let store = directory.appending("store")
            let journal = try openJournal(store, testOptions(segmentSizeLimit: 900))
            try commitEpochs(20, journal, &workload, &model)
            try journal.close()
            let segments = try Corruption.segmentNames(in: store)
            precondition(segments.count >= 3)
            // Damage the second epoch of the first segment.
            let first = store + "/" + segments[0]
            let records = Corruption.records(ofSegment: try Corruption.readFile(first))
            let firstCommit = records.firstIndex { $0.type == Corruption.RecordSpan.commit }!
            try Corruption.flipByte(first, at: records[firstCommit + 1].offset + 12)
            snapshot = try DirectorySnapshot(of: store)
            self.model = model
            lastConsistent = 1
            highest = model.epochs.last!
        }
    }

    @Test(arguments: [
        FaultPlan(at: 1, fault: .eio), FaultPlan(at: 1, fault: .eio, persistent: true),
        FaultPlan(at: 1, of: IOCallKind.syncs, fault: .eio),
        FaultPlan(at: 1, of: [.write], fault: .shortWriteThenError(ENOSPC)),
        FaultPlan(at: 1, of: [.rename], fault: .eio),
    ])
    func aFaultAtAnyStepOfSettingDamageAsideLeavesAStoreThatOpensToTheSameState(template: FaultPlan) throws {
        let damaged = try DamagedStore()
        let counter = FaultInjectingFileSystem()
        let first = try Journal.open(path: damaged.store, options: testOptions(), fileSystem: counter)
        #expect(first.recoveryReport.damage != nil)
        try first.close()
        let calls = template.kinds.map { counter.callCount(of: $0) } ?? counter.callCount
        #expect(calls > 0)

        var problems: [String] = []
        for call in 1...calls {
            var plan = template
            plan.callNumber = call
            try damaged.snapshot.restore(to: damaged.store)
            var committed: (UInt64, [RestorationPath: [UInt8]])?
            let fileSystem = FaultInjectingFileSystem(plan: plan)
            defer {
                if fileSystem.unmatchedCloses > 0 {
                    problems.append("\(plan): \(fileSystem.unmatchedCloses) descriptors closed twice")
                }
            }
            do {
                let journal = try Journal.open(path: damaged.store, options: testOptions(), fileSystem: fileSystem)
                let changes: [JournalChange] = [.put(RestorationPath("Repaired"), Array("\(call)".utf8))]
                if let info = try? journal.commit(changes) {
                    committed = (
                        info.epoch, JournalModel.applying(changes, to: damaged.model.states[damaged.lastConsistent]!)
                    )
                }
                try? journal.close()
            } catch let error as JournalError {
                _ = error
            } catch {
                problems.append("\(plan): open threw \(type(of: error)), not a JournalError: \(error)")
            }

            do {
                let journal = try openJournal(damaged.store, realFileSystem: true)
                let history = try journal.history().map(\.epoch)
                let expectedHistory = Array(1...damaged.lastConsistent) + (committed.map { [$0.0] } ?? [])
                if history != expectedHistory {
                    problems.append("\(plan): history \(history), expected \(expectedHistory)")
                }
                let expectedState = committed?.1 ?? damaged.model.states[damaged.lastConsistent]!
                if journal.recoveredState.entries != expectedState {
                    problems.append("\(plan): recovered state differs")
                }
                if let committed, committed.0 <= damaged.highest {
                    problems.append(
                        """
                        \(plan): the repaired store committed epoch \(committed.0), reusing a number up to \
                        \(damaged.highest)
                        """
                    )
                }
                let next = try journal.commit([.put(RestorationPath("Next"), [1])])
                if next.epoch <= damaged.highest {
                    problems.append(
                        """
                        \(plan): epoch \(next.epoch) reuses a number of the epochs lost to damage (up to \
                        \(damaged.highest))
                        """
                    )
                }
                try journal.close()
                let quarantined = try Corruption.quarantineNames(in: damaged.store)
                if quarantined.count < 3 { problems.append("\(plan): damaged bytes not all kept: \(quarantined)") }
            } catch {
                problems.append("\(plan): the store does not reopen: \(error)")
            }
        }
        noteSweep("repair under \(template): \(calls) cases")
        #expect(problems.isEmpty, "\(problems.count) of \(calls) cases: \(problems.prefix(6).joined(separator: "\n"))")
    }
}

/// A transient read error is an I/O failure, never damage: it must not make a writer set a
/// checkpoint or a segment aside, nor a reader report damage.
@Suite struct TransientReadErrorTests {
    @Test(arguments: [IOCallKind.open, .read, .size])
    func aTransientReadErrorWhileOpeningNeverSetsDataAside(kind: IOCallKind) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var options = testOptions(segmentSizeLimit: 800)
        options.compaction = .manual
        var workload = WorkloadGenerator(seed: 12)
        var model = JournalModel()
        do {
            let journal = try openJournal(store, options)
            try commitEpochs(6, journal, &workload, &model)
            try journal.compact()
            try commitEpochs(6, journal, &workload, &model)
            try journal.compact()
            try commitEpochs(4, journal, &workload, &model)
            try journal.close()
        }
        let snapshot = try DirectorySnapshot(of: store)
        let history = try openReader(store).history().map(\.epoch)

        let counter = FaultInjectingFileSystem()
        try Journal.open(path: store, options: options, fileSystem: counter).close()
        let calls = counter.callCount(of: kind)
        var problems: [String] = []
        for call in 1...calls {
            try snapshot.restore(to: store)
            let plan = FaultPlan(at: call, of: [kind], fault: .eio)
            do {
                let journal = try Journal.open(
                    path: store, options: options, fileSystem: FaultInjectingFileSystem(plan: plan))
                if !journal.recoveryReport.isClean { problems.append("\(plan): \(journal.recoveryReport)") }
                if journal.recoveredState.entries != model.latest { problems.append("\(plan): wrong state") }
                try journal.close()
            } catch let error as JournalError where error.code == .ioFailure {
            } catch {
                problems.append("\(plan): \(error)")
            }
            // Reading through a failing call is an error or the right answer, never damage.
            do {
                let state = try JournalReader(
                    path: store, recovery: .stopAtDamage, fileSystem: FaultInjectingFileSystem(plan: plan)
                ).state()
                if state.damage != nil || state.entries != model.latest {
                    problems.append("\(plan): reader saw \(String(describing: state.damage))")
                }
            } catch let error as JournalError where error.code == .ioFailure {
            } catch {
                problems.append("\(plan): reader threw \(error)")
            }
            let reopened = try openJournal(store, options)
            if !reopened.recoveryReport.isClean {
                problems.append("\(plan): reopening found \(reopened.recoveryReport)")
            }
            if reopened.recoveredState.entries != model.latest { problems.append("\(plan): state lost") }
            if try reopened.history().map(\.epoch) != history { problems.append("\(plan): history changed") }
            try reopened.close()
            if let names = try? Corruption.quarantineNames(in: store), !names.isEmpty {
                problems.append("\(plan): set aside \(names)")
            }
        }
        noteSweep("transient EIO at \(kind) while opening: \(calls) cases")
        #expect(problems.isEmpty, "\(problems.count) of \(calls): \(problems.prefix(5).joined(separator: "\n"))")
    }
}
