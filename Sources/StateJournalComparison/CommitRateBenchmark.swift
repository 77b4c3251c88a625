import Foundation
import StateJournal

/// One commit-rate figure: one-entry epochs (or one-row transactions) per second.
public struct CommitRateFigure: Sendable, Codable {
    /// The contender: `journal-` and its durability, `sqlite-wal-` and its synchronous mode, or a
    /// physical limit (`write`, `write-fdatasync`).
    public var name: String
    /// Threads committing at once.
    public var writers: Int
    /// The median rate of the alternated rounds, in commits per second.
    public var epochsPerSecond: Double
    /// The figure this one is compared with, as its name `×` its writers.
    public var comparedWith: String?
    /// `epochsPerSecond` over the rate of ``comparedWith``.
    public var ratio: Double?
    /// The physical limit the figure is measured against (the same bytes written with `write`, or
    /// with `write` and `fdatasync` on a preallocated file), as its name `×` its writers.
    public var limit: String?
    /// `epochsPerSecond` over the rate of ``limit``.
    public var ratioToLimit: Double?
}

/// Measures how many one-entry epochs per second each contender commits, alternating the
/// contenders in rounds of a fixed duration and taking the median rate.
enum CommitRateBenchmark {
    /// A contender: set up once, then asked to commit for a while from `writers` threads.
    private struct Contender {
        var name: String
        var writers: Int
        var commit: @Sendable (_ writer: Int, _ sequence: Int) throws -> Void
        var close: () -> Void
    }

    static func run(plan: BenchPlan, progress: (String) -> Void) throws -> [CommitRateFigure] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "statejournal-rates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let workload = AppStateWorkload(objectCount: 1_000)
        let paths = (0..<workload.objectCount).map(workload.path)
        let keys = paths.map(\.description)
        let states = (0..<workload.objectCount).map(workload.state)
        let count = workload.objectCount

        func journal(_ name: String, _ durability: Durability, writers: Int) throws -> Contender {
            let options = JournalOptions(durability: durability, compaction: .manual)
            let journal = try Journal.open(at: directory.appendingPathComponent("\(name)-\(writers)"), options: options)
            return Contender(
                name: name, writers: writers,
                commit: { writer, sequence in
                    let index = (writer * 131 + sequence) % count
                    try journal.commit([.put(paths[index], revised(states[index], sequence))])
                },
                close: { try? journal.close() })
        }
        func sqlite(_ synchronous: SQLiteStore.Synchronous) throws -> Contender {
            let store = try SQLiteStore(
                path: directory.appendingPathComponent("\(synchronous.rawValue).sqlite").path, synchronous: synchronous)
            let shared = UncheckedBox(store)
            return Contender(
                name: "sqlite-wal-\(synchronous.rawValue.lowercased())", writers: 1,
                commit: { _, sequence in
                    try shared.value.put(keys[sequence % count], revised(states[sequence % count], sequence))
                },
                close: { store.close() })
        }

        // The limits: one `pwrite` per epoch of the entry's bytes (path, NUL, state), with and
        // without an `fdatasync` after it, into a file preallocated by writing zeros and syncing,
        // so that a sync commits no change of the file's size or extents (what SQLite's reused
        // WAL file gets). With several writers, the textbook group commit: each writes under one
        // lock, and the first to find no sync running syncs everything written so far while the
        // others wait on a condition that the end of the sync broadcasts.
        func raw(_ name: String, syncing: Bool, writers: Int = 1) throws -> Contender {
            let file = directory.appendingPathComponent("\(name).raw").path
            let descriptor = open(file, O_RDWR | O_CREAT | O_TRUNC, 0o600)
            guard descriptor >= 0 else { throw JournalError(.ioFailure, "Could not create \(file).") }
            let size = 64 << 20
            let zeros = [UInt8](repeating: 0, count: 1 << 20)
            for offset in stride(from: 0, to: size, by: zeros.count) {
                _ = pwrite(descriptor, zeros, zeros.count, off_t(offset))
            }
            fsync(descriptor)
            let group = UncheckedBox(GroupSync())
            let condition = NSCondition()
            return Contender(
                name: name, writers: writers,
                commit: { writer, sequence in
                    let index = (writer * 131 + sequence) % count
                    var bytes = Array(keys[index].utf8)
                    bytes.append(0)
                    bytes.append(contentsOf: revised(states[index], sequence))
                    condition.lock()
                    defer { condition.unlock() }
                    if group.value.position + bytes.count > size { group.value.position = 0 }
                    guard pwrite(descriptor, bytes, bytes.count, off_t(group.value.position)) == bytes.count else {
                        throw JournalError(.ioFailure, "write failed")
                    }
                    group.value.position += bytes.count
                    group.value.written += 1
                    guard syncing else { return }
                    let mine = group.value.written
                    while group.value.synced < mine {
                        if group.value.syncing {
                            condition.wait()
                            continue
                        }
                        group.value.syncing = true
                        let target = group.value.written
                        condition.unlock()
                        let result = fdatasync(descriptor)
                        condition.lock()
                        group.value.syncing = false
                        guard result == 0 else { throw JournalError(.ioFailure, "fdatasync failed") }
                        group.value.synced = target
                        condition.broadcast()
                    }
                },
                close: { close(descriptor) })
        }

        let contenders = [
            try journal("journal-interval", .interval(seconds: 1), writers: 1),
            try sqlite(.normal),
            try journal("journal-everyCommit", .everyCommit, writers: 1),
            try sqlite(.full),
            try journal("journal-everyCommit", .everyCommit, writers: 8),
            try raw("write", syncing: false),
            try raw("write-fdatasync", syncing: true),
            try raw("write-fdatasync", syncing: true, writers: 8),
        ]
        defer { contenders.forEach { $0.close() } }

        var rates = [[Double]](repeating: [], count: contenders.count)
        for round in 0..<plan.commitRateRounds {
            for offset in 0..<contenders.count {
                let index = (offset + round) % contenders.count
                progress(
                    """
                    commit rates: round \(round + 1) of \(plan.commitRateRounds), \(contenders[index].name) × \
                    \(contenders[index].writers)
                    """
                )
                rates[index].append(try measure(contenders[index], seconds: plan.commitRateSeconds))
            }
        }
        var figures = zip(contenders, rates).map { contender, samples in
            CommitRateFigure(name: contender.name, writers: contender.writers, epochsPerSecond: median(samples))
        }
        func compare(_ index: Int, with other: Int) {
            figures[index].comparedWith = "\(figures[other].name) × \(figures[other].writers)"
            figures[index].ratio = figures[index].epochsPerSecond / figures[other].epochsPerSecond
        }
        func limit(_ index: Int, _ other: Int) {
            figures[index].limit = "\(figures[other].name) × \(figures[other].writers)"
            figures[index].ratioToLimit = figures[index].epochsPerSecond / figures[other].epochsPerSecond
        }
        compare(0, with: 1)
        compare(2, with: 3)
        compare(4, with: 2)
        limit(0, 5)
        limit(2, 6)
        limit(3, 6)
        // Group commit: the journal's 8 committers against 8 threads doing the least a shared
        // sync needs, and what that least achieves over one thread.
        limit(4, 7)
        compare(7, with: 6)
        return figures
    }

    /// The state with a revision number in it, so that every commit really changes its row (SQLite
    /// skips writing a row whose new value equals the old one).
    @Sendable private static func revised(_ state: [UInt8], _ sequence: Int) -> [UInt8] {
        var bytes = state
        bytes.append(contentsOf: " r".utf8)
        bytes.append(contentsOf: String(sequence).utf8)
        return bytes
    }

    /// Commits from the contender's writer threads until `seconds` have passed; returns commits per second.
    private static func measure(_ contender: Contender, seconds: Double) throws -> Double {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        let counts = UncheckedBox([Int](repeating: 0, count: contender.writers))
        let failure = UncheckedBox<(any Error)?>(nil)
        let lock = NSLock()
        let commit = contender.commit
        let done = DispatchSemaphore(value: 0)
        let start = DispatchTime.now().uptimeNanoseconds
        // One thread per writer (not a pool that caps concurrency at the core count): every
        // committer must be able to wait in its own commit at the same time.
        for writer in 0..<contender.writers {
            Thread {
                var sequence = 0
                do {
                    while DispatchTime.now().uptimeNanoseconds < deadline {
                        try commit(writer, sequence)
                        sequence += 1
                    }
                } catch {
                    lock.withLock { failure.value = error }
                }
                lock.withLock { counts.value[writer] = sequence }
                done.signal()
            }.start()
        }
        for _ in 0..<contender.writers { done.wait() }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if let error = failure.value { throw error }
        return Double(counts.value.reduce(0, +)) / elapsed
    }
}

/// The shared position and counters of the group-commit limit, guarded by its condition's lock.
private struct GroupSync {
    var position = 0
    var written = 0
    var synced = 0
    var syncing = false
}

/// A reference shared with writer threads. @unchecked Sendable: the threads use it under a lock,
/// or (for the SQLite connection) from one writer thread only.
final class UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
