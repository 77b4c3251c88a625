import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// `history()` lists epochs from the segments: a checkpoint the journal already checked, loaded or
/// wrote is not read again, so listing costs what the segments after it hold, not the state.
@Suite(.timeLimit(.minutes(10))) struct HistoryCostTests {
    /// The checkpoint files read since the `start`-th call, by name, each once. (A read opens
    /// every file its manifest names, to pin them, and reads only those it needs.)
    private static func checkpointsRead(_ fileSystem: FaultInjectingFileSystem, after start: Int) -> [String] {
        filesRead(fileSystem, after: start, named: "checkpoint-")
    }

    /// The files whose names contain `part` in the order they were read, each read of several in a
    /// row counted once.
    private static func filesRead(_ fileSystem: FaultInjectingFileSystem, after start: Int, named part: String)
        -> [String]
    {
        var names: [String] = []
        for call in fileSystem.log[start...] where call.hasPrefix("read ") && call.contains(part) {
            let path = call.dropFirst("read ".count).split(separator: " ")[0]
            let name = (String(path) as NSString).lastPathComponent
            if names.last != name { names.append(name) }
        }
        return names
    }

    /// Commits `count` epochs of the workload and records them in `model`.
    private static func commit(
        _ count: Int, to journal: Journal, _ generator: inout WorkloadGenerator, _ model: inout JournalModel
    ) throws {
        for _ in 0..<count {
            let changes = generator.nextEpoch()
            model.commit(try journal.commit(changes).epoch, changes)
        }
    }

    /// A closed store of 150 epochs and three retained checkpoints, with the options that made it.
    private static func storeWithThreeCheckpoints(seed: UInt64) throws -> (
        TemporaryDirectory, JournalOptions, JournalModel
    ) {
        let directory = TemporaryDirectory()
        var options = testOptions(segmentSizeLimit: 16 << 10)
        options.retention = RetentionPolicy(checkpoints: 3)
        var generator = WorkloadGenerator(seed: seed, pathCount: 200)
        var model = JournalModel()
        let journal = try Journal.open(path: directory.path, options: options, fileSystem: PosixFileSystem())
        for _ in 0..<3 {
            try commit(50, to: journal, &generator, &model)
            try journal.compact()
        }
        try journal.close()
        return (directory, options, model)
    }

    @Test func historyDoesNotReadTheCheckpointsTheJournalWroteAgain() throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem(keepsLog: true)
        var options = testOptions(segmentSizeLimit: 16 << 10)
        options.retention = RetentionPolicy(checkpoints: 2)
        let journal = try Journal.open(path: directory.path, options: options, fileSystem: fileSystem)
        var generator = WorkloadGenerator(seed: 11, pathCount: 200)
        var model = JournalModel()
        for _ in 0..<3 {
            try Self.commit(60, to: journal, &generator, &model)
            try journal.compact()
        }
        try Self.commit(25, to: journal, &generator, &model)
        let start = fileSystem.log.count
        let history = try journal.history()
        #expect(Self.checkpointsRead(fileSystem, after: start) == [])
        // The same epochs as a reader that checks the oldest checkpoint lists.
        let checked = try JournalReader(path: directory.path, recovery: .stopAtDamage, fileSystem: PosixFileSystem())
            .history()
        #expect(history == checked)
        #expect(history.first!.epoch > model.epochs.first!)
        #expect(history.last?.epoch == model.epochs.last)
        try journal.close()
    }

    @Test func aReopenedJournalChecksItsOldestCheckpointOnceForHistory() throws {
        let (directory, options, model) = try Self.storeWithThreeCheckpoints(seed: 12)
        let fileSystem = FaultInjectingFileSystem(keepsLog: true)
        let journal = try Journal.open(path: directory.path, options: options, fileSystem: fileSystem)
        let manifest = try StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path).readManifest()
        #expect(manifest.checkpoints.count == 3)
        let oldest = FileNames.checkpoint(manifest.checkpoints[0].sequence)
        // Opening loaded the newest checkpoint; the first history checks the oldest, the next none.
        let first = fileSystem.log.count
        let history = try journal.history()
        #expect(Self.checkpointsRead(fileSystem, after: first) == [oldest])
        let second = fileSystem.log.count
        #expect(try journal.history() == history)
        #expect(Self.checkpointsRead(fileSystem, after: second) == [])
        // State reads of any retained epoch stay as before.
        #expect(try journal.state(through: history.first!.epoch).entries == model.states[history.first!.epoch])
        #expect(try journal.state().entries == model.latest)
        try journal.close()
    }

    @Test func aCheckpointDamagedBeforeTheJournalCheckedItIsStillPassedOverByHistory() throws {
        let (directory, options, model) = try Self.storeWithThreeCheckpoints(seed: 13)
        let manifest = try StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path).readManifest()
        let oldest = manifest.checkpoints[0]
        try Corruption.flipByte(directory.appending(FileNames.checkpoint(oldest.sequence)), at: 40)
        let journal = try Journal.open(path: directory.path, options: options, fileSystem: PosixFileSystem())
        let history = try journal.history()
        #expect(history.first?.epoch == manifest.checkpoints[1].epoch)
        #expect(try journal.history() == history)
        try journal.close()
    }

    @Test func verifyingAStoreDownToItsFramingReadsEachCheckpointOnce() throws {
        let (directory, _, _) = try Self.storeWithThreeCheckpoints(seed: 8)
        let manifest = try StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path).readManifest()
        let names = manifest.checkpoints.map { FileNames.checkpoint($0.sequence) }
        #expect(names.count == 3)
        let fileSystem = FaultInjectingFileSystem(keepsLog: true)
        let verification = StoreInspector.verifyOnce(path: directory.path, fileSystem: fileSystem, decoding: false)
        #expect(verification.status == .clean)
        // Each is checked once; the scans from the oldest and from the newest start after them.
        #expect(Self.checkpointsRead(fileSystem, after: 0) == names)
        let decoded = StoreInspector.verify(URL(fileURLWithPath: directory.path))
        #expect(verification.consistentEpoch == decoded.consistentEpoch)

        // A damaged one is read again by each scan that would start from it, and reported as before.
        try Corruption.flipByte(directory.appending(names[2]), at: 40)
        let damaged = StoreInspector.verifyOnce(path: directory.path, fileSystem: PosixFileSystem(), decoding: false)
        #expect(damaged.damagedCheckpoints.map(\.file) == [names[2]])
        #expect(damaged.consistentEpoch == StoreInspector.verify(URL(fileURLWithPath: directory.path)).consistentEpoch)
    }

    @Test func verifyingAnUndamagedStoreDownToItsFramingReadsEachSegmentOnce() throws {
        let (directory, options, _) = try Self.storeWithThreeCheckpoints(seed: 9)
        // Segments after the newest checkpoint, which a scan from the newest would read again.
        var generator = WorkloadGenerator(seed: 10, pathCount: 200)
        var model = JournalModel()
        let journal = try Journal.open(path: directory.path, options: options, fileSystem: PosixFileSystem())
        try Self.commit(200, to: journal, &generator, &model)
        try journal.close()
        let manifest = try StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path).readManifest()
        let newest = try #require(manifest.checkpoints.last)
        #expect(manifest.segments.filter { $0 > newest.sequence }.count > 2)

        let fileSystem = FaultInjectingFileSystem(keepsLog: true)
        let verification = StoreInspector.verifyOnce(path: directory.path, fileSystem: fileSystem, decoding: false)
        #expect(verification.status == .clean)
        // A look at the last segment's end first (how far it was written), then each segment once.
        let read = Self.filesRead(fileSystem, after: 0, named: "segment-")
        #expect(read.first == manifest.segments.last.map(FileNames.segment))
        #expect(Array(read.dropFirst()) == manifest.segments.map(FileNames.segment))
        #expect(
            verification.consistentEpoch == StoreInspector.verify(URL(fileURLWithPath: directory.path)).consistentEpoch)

        // Damaged, the store is scanned from the newest checkpoint too, and the two agree as before.
        let last = directory.appending(FileNames.segment(manifest.segments[manifest.segments.count - 2]))
        try Corruption.flipByte(last, at: 200)
        let damaged = StoreInspector.verifyOnce(path: directory.path, fileSystem: PosixFileSystem(), decoding: false)
        #expect(damaged.status != .clean)
        #expect(damaged.consistentEpoch == StoreInspector.verify(URL(fileURLWithPath: directory.path)).consistentEpoch)
    }
}
