import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Options for small, fast test stores: no background sync thread, small segments when asked, and
/// no automatic compaction unless asked (a background compaction would change the files a test
/// reads or damages on purpose).
func testOptions(
    durability: Durability = .none, recovery: RecoveryMode = .stopAtDamage, segmentSizeLimit: Int = 64 << 20,
    compressionCacheLimit: Int = 64 << 20, compaction: CompactionPolicy = .manual
) -> JournalOptions {
    JournalOptions(
        durability: durability, recovery: recovery, segmentSizeLimit: segmentSizeLimit,
        compressionCacheLimit: compressionCacheLimit,
        compaction: compaction)
}

/// Opens a writer. By default through a ``FaultInjectingFileSystem`` without faults whose syncs do
/// not reach the disk: the sweeps open stores thousands of times, and what they check does not
/// depend on the disk's own durability. `realFileSystem` opens through ``PosixFileSystem``.
func openJournal(_ path: String, _ options: JournalOptions = testOptions(), realFileSystem: Bool = false) throws
    -> Journal
{
    try Journal.open(
        path: path, options: options, fileSystem: realFileSystem ? PosixFileSystem() : FaultInjectingFileSystem())
}

func openReader(_ path: String, recovery: RecoveryMode = .stopAtDamage) throws -> JournalReader {
    try JournalReader(path: path, recovery: recovery, fileSystem: PosixFileSystem())
}

/// Runs `body` and returns the ``JournalError`` it threw, recording an issue when it threw nothing
/// or something else.
@discardableResult
func journalError<T>(
    _ expected: JournalError.Code? = nil, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) -> JournalError? {
    do {
        _ = try body()
        Issue.record(
            "expected a JournalError\(expected.map { " \($0)" } ?? ""), but nothing was thrown",
            sourceLocation: sourceLocation)
        return nil
    } catch let error as JournalError {
        if let expected, error.code != expected {
            Issue.record("expected \(expected), got \(error)", sourceLocation: sourceLocation)
        }
        return error
    } catch {
        Issue.record("expected a JournalError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Commits `count` epochs from `workload` into `journal`, recording them in `model`.
///
/// With `settling`, it waits after each commit until a background checkpoint or compaction that the
/// commit started has finished, so that what a test asserts of the files does not depend on how
/// fast the machine runs that thread: the checkpoints are the policy's, written by its background
/// thread, at the same epochs on a loaded machine as on an idle one.
func commitEpochs(
    _ count: Int, _ journal: Journal, _ workload: inout WorkloadGenerator, _ model: inout JournalModel,
    settling: Bool = false
) throws {
    for index in 0..<count {
        let changes = workload.nextEpoch()
        let info = try journal.commit(changes, metadata: ["pass": "\(index)", "idiom": "terminal"])
        model.commit(info.epoch, changes)
        if settling { journal.waitForCompactions() }
    }
}

func fileSize(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
}

/// Describes the differences between two states briefly, for failure messages.
func difference(_ actual: [RestorationPath: [UInt8]], _ expected: [RestorationPath: [UInt8]]) -> String {
    if actual == expected { return "equal" }
    let missing = Set(expected.keys).subtracting(actual.keys).map(\.description).sorted()
    let extra = Set(actual.keys).subtracting(expected.keys).map(\.description).sorted()
    let changed = expected.keys.filter { actual[$0] != nil && actual[$0] != expected[$0] }.map(\.description).sorted()
    return "missing \(missing), extra \(extra), different \(changed)"
}

/// Prints how many cases a sweep ran, when `STATEJOURNAL_TEST_VERBOSE` is set in the environment.
func noteSweep(_ text: @autoclosure () -> String) {
    if ProcessInfo.processInfo.environment["STATEJOURNAL_TEST_VERBOSE"] != nil { print("sweep: " + text()) }
}

/// `bytes` damaged one of four ways, chosen by `round`: a flipped byte, a cut, bytes appended, or 64
/// bytes overwritten with garbage, at an offset `random` picks; and that offset.
func damagedCopy(of bytes: [UInt8], round: Int, random: inout SplitMix64) -> (bytes: [UInt8], offset: Int) {
    var damaged = bytes
    let offset = Int(random.next() % UInt64(bytes.count))
    switch round % 4 {
    case 0: damaged[offset] ^= UInt8(truncatingIfNeeded: random.next() | 1)
    case 1: damaged.removeSubrange(offset...)
    case 2: damaged += (0..<(1 + offset % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    default:
        damaged.replaceSubrange(
            offset..<min(damaged.count, offset + 64), with: Corruption.garbage(64, seed: random.next()))
    }
    return (damaged, offset)
}
