import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One writer per store; readers beside it see committed epochs only.
@Suite struct WriterLockTests {
    @Test func aSecondWriterIsRefusedAndTheErrorNamesTheHolder() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let first = try openJournal(store)
        try first.commit([.put(RestorationPath("Main"), [1])])

        let error = journalError(.storeLocked) { try openJournal(store) }
        #expect(error?.message.contains("\(getpid())") == true, "\(String(describing: error))")
        // The public entry point refuses too, and refusing changes nothing.
        journalError(.storeLocked) { try Journal.open(at: URL(fileURLWithPath: store)) }
        try first.commit([.put(RestorationPath("Main"), [2])])
        try first.close()

        let second = try openJournal(store)
        #expect(second.recoveryReport.isClean)
        #expect(second.recoveredState.entries == [RestorationPath("Main"): [2]])
        try second.close()
    }

    @Test func aReaderBesideALiveWriterSeesCommittedEpochsOnly() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store)
        let committed: [JournalChange] = [.put(RestorationPath("Main"), Array("committed".utf8))]
        try journal.commit(committed)
        let sizeAfterCommit = writtenEnd(of: journal)

        let epoch = try journal.beginEpoch()
        var random = SplitMix64(seed: 5)
        for index in 0..<40 {
            try epoch.put(RestorationPath("Main", "Pending-\(index)"), random.bytes(2000))
        }
        try epoch.remove(RestorationPath("Main"))
        #expect(writtenEnd(of: journal) > sizeAfterCommit, "the open epoch should have written a batch already")

        for recovery in [RecoveryMode.stopAtDamage, .strict] {
            let reader = try openReader(store, recovery: recovery)
            let state = try reader.state()
            #expect(state.epoch?.epoch == 1)
            #expect(state.entries == JournalModel.applying(committed, to: [:]))
            #expect(state.damage == nil)
            #expect(state.uncommittedTailBytes > 0)
            #expect(try reader.history().map(\.epoch) == [1])
        }
        // The writer's own reads see the committed epochs only, too.
        #expect(try journal.state().entries == JournalModel.applying(committed, to: [:]))

        try epoch.put(RestorationPath("Main", "Pending-0"), Array("final".utf8))
        let info = try epoch.commit(metadata: ["pass": "2"])
        #expect(info.epoch == 2)
        let state = try openReader(store, recovery: .strict).state()
        #expect(state.epoch?.epoch == 2)
        #expect(state.entries.count == 40)
        #expect(state.entries[RestorationPath("Main")] == nil)
        #expect(state.entries[RestorationPath("Main", "Pending-0")] == Array("final".utf8))
        #expect(state.uncommittedTailBytes == 0)

        // An aborted epoch is never seen, not even while it is being written.
        let aborted = try journal.beginEpoch()
        for index in 0..<20 { try aborted.put(RestorationPath("Aborted", "\(index)"), random.bytes(3000)) }
        #expect(try openReader(store).state().epoch?.epoch == 2)
        aborted.abort()
        #expect(try openReader(store, recovery: .strict).state().entries == state.entries)
        try journal.close()
    }

    @Test func aReaderOpensAStoreWhileTheWriterRollsSegments() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store, testOptions(segmentSizeLimit: 512))
        var workload = WorkloadGenerator(seed: 8)
        var model = JournalModel()
        for _ in 0..<20 {
            try commitEpochs(1, journal, &workload, &model)
            let state = try openReader(store, recovery: .strict).state()
            #expect(state.epoch?.epoch == model.epochs.last)
            #expect(state.entries == model.latest)
        }
        #expect(try Corruption.segmentNames(in: store).count > 3)
        try journal.close()
    }

    @Test func aDirectoryHoldingOtherFilesIsNotTakenOver() throws {
        let directory = TemporaryDirectory()
        try Corruption.writeFile(directory.appending("notes.txt"), Array("mine".utf8))
        journalError(.notAStore) { try openJournal(directory.path) }
        #expect(try Corruption.readFile(directory.appending("notes.txt")) == Array("mine".utf8))
        journalError(.notAStore) { try openReader(directory.appending("missing")) }
    }
}

@Suite struct ReaderBesideCompactionTests {
    @Test(.timeLimit(.minutes(10)))
    func aReaderNeverSeesDamageOrAPartialEpochWhileTheWriterRollsAndCompacts() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var options = testOptions(segmentSizeLimit: 600)
        options.retention = RetentionPolicy(checkpoints: 1)
        let journal = try openJournal(store, options)
        var workload = WorkloadGenerator(seed: 23, pathCount: 8)
        var model = JournalModel()
        try commitEpochs(3, journal, &workload, &model)
        let states = StatesBox(model.states)

        let done = ManagedAtomicFlag()
        let readerProblems = StatesBox.Problems()
        let group = DispatchGroup()
        group.enter()
        Thread {
            defer { group.leave() }
            var reads = 0
            while !done.isSet || reads < 20 {
                reads += 1
                do {
                    let reader = try openReader(store, recovery: .strict)
                    let state = try reader.state()
                    if let epoch = state.epoch?.epoch {
                        // The writer records an epoch's state just after its commit returns: wait for it.
                        var expected = states.state(epoch)
                        for _ in 0..<10_000 where expected == nil {
                            usleep(200)
                            expected = states.state(epoch)
                        }
                        if expected != state.entries {
                            readerProblems.add("epoch \(epoch) read with a state no commit made")
                        }
                    }
                } catch {
                    readerProblems.add("read \(reads): \(error)")
                }
            }
        }.start()

        for round in 0..<40 {
            let changes = workload.nextEpoch()
            let info = try journal.commit(changes)
            model.commit(info.epoch, changes)
            states.set(info.epoch, model.latest)
            if round % 5 == 4 { try journal.compact() }
        }
        done.set()
        group.wait()
        try journal.close()
        #expect(readerProblems.all.isEmpty, "\(readerProblems.all.prefix(5))")
        #expect(try openReader(store, recovery: .strict).state().entries == model.latest)
    }
}

/// The model's states, shared with a reader thread.
private final class StatesBox: @unchecked Sendable {
    // @unchecked Sendable: every property is read and written with `lock` held.
    private let lock = NSLock()
    private var states: [UInt64: [RestorationPath: [UInt8]]]
    init(_ states: [UInt64: [RestorationPath: [UInt8]]]) { self.states = states }
    func set(_ epoch: UInt64, _ state: [RestorationPath: [UInt8]]) { lock.withLock { states[epoch] = state } }
    func state(_ epoch: UInt64) -> [RestorationPath: [UInt8]]? { lock.withLock { states[epoch] } }

    final class Problems: @unchecked Sendable {
        // @unchecked Sendable: every property is read and written with `lock` held.
        private let lock = NSLock()
        private var problems: [String] = []
        func add(_ problem: String) { lock.withLock { problems.append(problem) } }
        var all: [String] { lock.withLock { problems } }
    }
}

/// A flag one thread sets and another polls.
private final class ManagedAtomicFlag: @unchecked Sendable {
    // @unchecked Sendable: the value is read and written with `lock` held.
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
