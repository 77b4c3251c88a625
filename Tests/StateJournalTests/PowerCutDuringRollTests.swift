import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// A power cut in the middle of a segment roll, while commits go on in the new segment before the
/// sealed one is synced: the seal, the new segment's header and its records are all unsynced, and
/// any part of them may reach the disk. Recovery keeps every durable epoch, removes what the roll
/// started without calling it damage, and the writer goes on in the same store.
@Suite struct PowerCutDuringRollTests {
    static let imagesPerPolicy = 40

    /// A roll by compaction (which syncs the segment first, so only the seal is unsynced in it) or
    /// by the segment size limit (the end of the sealed segment is unsynced too).
    @Test(arguments: UnsyncedTailTests.policies, [true, false])
    func aPowerCutBeforeARollIsSyncedLeavesAnUnsyncedTailNotDamage(durability: Durability, byCompaction: Bool) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let base = FaultInjectingFileSystem()
        let gated = SegmentSyncGate(base)
        let limit = 24 << 10
        let options = testOptions(durability: durability, segmentSizeLimit: byCompaction ? 64 << 20 : limit)
        let journal = try Journal.open(path: store, options: options, fileSystem: gated)
        var workload = WorkloadGenerator(seed: 5, stateSizes: 300...1500)
        var model = JournalModel()
        try commitEpochs(6, journal, &workload, &model)
        try journal.sync()
        repeat { try commitEpochs(1, journal, &workload, &model) } while writtenEnd(of: journal) < limit

        // The roll seals the segment and starts the next one, then waits in the sync of the sealed
        // segment while commits go on in the new one.
        gated.arm()
        let roller = Thread {
            if byCompaction {
                _ = try? journal.compact()
            } else {
                _ = try? journal.commit([.put(RestorationPath("Roller"), [1])])
            }
        }
        roller.start()
        #expect(gated.waitUntilHeld(), "the roll reached its sync")
        let durable = journal.lastDurable?.epoch ?? 0
        try commitEpochs(15, journal, &workload, &model)
        #expect(try Corruption.segmentNames(in: store).count == 2)
        #expect(journal.lastDurable?.epoch == durable)

        var random = SplitMix64(seed: 11)
        var unsynced = 0
        for variant in 0..<Self.imagesPerPolicy {
            let image = directory.appending("image-\(variant)")
            try base.writePowerLossImage(
                of: store, to: image, unsyncedPage: UnsyncedTailTests.pageFate(seed: random.next()))
            let outcome = try UnsyncedTailTests().checkRecovery(
                of: image, options: options, durable: durable, model: model,
                label: "\(durability) roll image \(variant)")
            #expect(outcome.recovered >= durable)
            if outcome.unsynced { unsynced += 1 }
            try? FileManager.default.removeItem(atPath: image)
        }
        gated.release()
        while !roller.isFinished { Thread.sleep(forTimeInterval: 0.001) }
        try journal.close()
        #expect(unsynced > 0, "some images keep records of the new segment beyond a gap")
        noteSweep(
            "\(durability), roll by \(byCompaction ? "compaction" : "size"): \(Self.imagesPerPolicy) images of a "
                + "power cut during a roll, "
                + "\(unsynced) with an unsynced tail, \(durable) durable of \(model.epochs.last ?? 0)")
    }
}

/// A file system that holds the first `fsync` of a segment file after ``arm()``, until
/// ``release()``: a roll stopped between sealing a segment and syncing it.
final class SegmentSyncGate: FileSystem, @unchecked Sendable {
    // @unchecked Sendable: the mutable state is behind `condition`.
    private let base: FaultInjectingFileSystem
    private let condition = NSCondition()
    private var paths: [Int32: String] = [:]
    private var armed = false
    private var held = false
    private var released = false

    init(_ base: FaultInjectingFileSystem) { self.base = base }

    func arm() {
        condition.lock()
        armed = true
        condition.unlock()
    }

    func waitUntilHeld() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: 600)
        while !held && condition.wait(until: deadline) {}
        return held
    }

    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }

    func open(_ path: String, _ mode: FileOpenMode) throws -> Int32 {
        let descriptor = try base.open(path, mode)
        condition.lock()
        paths[descriptor] = path
        condition.unlock()
        return descriptor
    }

    func close(_ descriptor: Int32) { base.close(descriptor) }
    func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        try base.write(descriptor, bytes, at: offset)
    }
    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try base.read(descriptor, into: buffer, at: offset)
    }
    func size(_ descriptor: Int32) throws -> Int64 { try base.size(descriptor) }
    func truncate(_ descriptor: Int32, to size: Int64) throws { try base.truncate(descriptor, to: size) }
    func dataSync(_ descriptor: Int32) throws { try base.dataSync(descriptor) }

    func fullSync(_ descriptor: Int32) throws {
        condition.lock()
        if armed && !held && paths[descriptor]?.hasSuffix(".sjl") == true {
            held = true
            condition.broadcast()
            while !released { condition.wait() }
        }
        condition.unlock()
        try base.fullSync(descriptor)
    }

    func rename(_ source: String, to destination: String) throws { try base.rename(source, to: destination) }
    func remove(_ path: String) throws { try base.remove(path) }
    func makeDirectory(_ path: String) throws { try base.makeDirectory(path) }
    func contentsOfDirectory(_ path: String) throws -> [String] { try base.contentsOfDirectory(path) }
    func tryLock(_ descriptor: Int32) throws -> Bool { try base.tryLock(descriptor) }
}
