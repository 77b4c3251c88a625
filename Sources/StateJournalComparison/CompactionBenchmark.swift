import Foundation
import StateJournal
import Synchronization

/// Measures what compaction costs the writers (commit latency with and without a compaction
/// running, side by side in one run) and what a long run costs on disk with automatic compaction.
public enum CompactionBenchmark {
    /// Commit latencies with and without a compaction running.
    public struct LatencyResult: Sendable, Codable {
        /// Objects in the store; each compaction folds all of them.
        public var objects: Int
        /// Compactions that ran while commits were measured.
        public var compactions: Int
        /// One-entry commits measured with no compaction running.
        public var commitsWithout: Int
        /// One-entry commits measured while a compaction was running.
        public var commitsDuring: Int
        /// The median commit latency without a compaction, in microseconds.
        public var p50WithoutMicroseconds: Double
        /// The 99th percentile of commit latency without a compaction, in microseconds.
        public var p99WithoutMicroseconds: Double
        /// The longest commit without a compaction, in microseconds.
        public var maxWithoutMicroseconds: Double
        /// The median commit latency while a compaction was running, in microseconds.
        public var p50DuringMicroseconds: Double
        /// The 99th percentile of commit latency while a compaction was running, in microseconds.
        public var p99DuringMicroseconds: Double
        /// The longest commit while a compaction was running, in microseconds.
        public var maxDuringMicroseconds: Double
        /// p99 during compaction over p99 without: at most 2 is the target.
        public var p99Ratio: Double { p99DuringMicroseconds / max(p99WithoutMicroseconds, 0.001) }
    }

    /// Bytes on disk over a long run with automatic compaction.
    public struct FootprintResult: Sendable, Codable {
        /// Epochs committed after the first, which puts every object.
        public var epochs: Int
        /// Objects in the store.
        public var objects: Int
        /// Objects changed by each epoch.
        public var changedPerEpoch: Int
        /// Checkpoints that automatic compaction wrote during the run.
        public var compactions: Int
        /// The largest the store's files were, in bytes, sampled after every epoch.
        public var maximumStoreBytes: Int64
        /// The size of the store's files at the end of the run, in bytes.
        public var finalStoreBytes: Int64
        /// The current checkpoint's size at the end: the live state, compressed.
        public var checkpointBytes: Int64
        /// `maximumStoreBytes / checkpointBytes`.
        public var maximumOverCheckpoint: Double { Double(maximumStoreBytes) / Double(max(checkpointBytes, 1)) }
    }

    private static func temporaryStore() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "statejournal-compaction-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }

    /// Commits one-entry epochs (interval durability) and times each, alternating rounds with a
    /// compaction running in another thread and rounds as long without one, until each side has at
    /// least `commits` samples and three compactions ran.
    public static func latency(objects: Int, commits: Int) throws -> LatencyResult {
        let directory = try temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        var options = JournalOptions(durability: .interval(seconds: 1))
        options.compaction = .manual
        let journal = try Journal.open(at: directory, options: options)
        var workload = AppStateWorkload(objectCount: objects)
        let first = try journal.beginEpoch()
        for index in 0..<objects { try first.put(workload.path(index), workload.state(index)) }
        _ = try first.commit(metadata: ["bundleVersion": "1"])

        let clock = ContinuousClock()
        func timedCommit() throws -> Double {
            let index = workload.change(1)[0]
            let change = JournalChange.put(workload.path(index), workload.state(index))
            let start = clock.now
            try journal.commit([change], metadata: ["bundleVersion": "1"])
            let elapsed = clock.now - start
            return Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6
        }

        var without: [Double] = []
        var during: [Double] = []
        var compactions = 0
        let running = Atomic<Bool>(false)
        // Rounds alternate: one compaction with commits timed while it runs, then as long again with
        // no compaction, so that both sides are exposed for as long to the rest of the machine (the
        // interval's background sync, other processes) and their longest commits compare.
        while without.count < commits || during.count < commits || compactions < 3 {
            running.store(true, ordering: .sequentiallyConsistent)
            let failure = Mutex<String?>(nil)
            let started = clock.now
            let thread = Thread {
                do { try journal.compact() } catch { failure.withLock { $0 = "\(error)" } }
                running.store(false, ordering: .sequentiallyConsistent)
            }
            thread.start()
            while running.load(ordering: .sequentiallyConsistent) {
                let latency = try timedCommit()
                if running.load(ordering: .sequentiallyConsistent) { during.append(latency) }
            }
            if let message = failure.withLock({ $0 }) {
                throw JournalError(.ioFailure, "A compaction failed during the benchmark: \(message)")
            }
            compactions += 1
            let roundLength = clock.now - started
            let quietStart = clock.now
            while clock.now - quietStart < roundLength || without.count < min(commits, 500) {
                without.append(try timedCommit())
            }
        }
        try journal.close()
        without.sort()
        during.sort()
        return LatencyResult(
            objects: objects, compactions: compactions, commitsWithout: without.count, commitsDuring: during.count,
            p50WithoutMicroseconds: percentile(without, 0.5), p99WithoutMicroseconds: percentile(without, 0.99),
            maxWithoutMicroseconds: without.last ?? 0, p50DuringMicroseconds: percentile(during, 0.5),
            p99DuringMicroseconds: percentile(during, 0.99), maxDuringMicroseconds: during.last ?? 0)
    }

    /// Runs `epochs` epochs changing `changed` objects each, with automatic compaction and the default
    /// retention, and samples the store's size after every epoch.
    public static func footprint(epochs: Int, objects: Int, changed: Int) throws -> FootprintResult {
        let directory = try temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        var options = JournalOptions(durability: .none)
        options.compaction = CompactionPolicy(isAutomatic: true, growthRatio: 1, minimumJournalBytes: 64 << 10)
        let journal = try Journal.open(at: directory, options: options)
        var workload = AppStateWorkload(objectCount: objects)
        try journal.commit((0..<objects).map { .put(workload.path($0), workload.state($0)) })
        func size(_ name: String) -> Int64 {
            Int64(
                (try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[.size]
                    as? Int) ?? 0)
        }
        var maximum: Int64 = 0
        var checkpointsSeen = Set<String>()
        for _ in 0..<epochs {
            try journal.commit(workload.change(changed).map { .put(workload.path($0), workload.state($0)) })
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            maximum = max(maximum, names.reduce(0) { $0 + size($1) })
            checkpointsSeen.formUnion(names.filter { $0.hasPrefix("checkpoint-") })
        }
        try journal.close()
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let checkpoint = names.filter { $0.hasPrefix("checkpoint-") }.sorted().last
        return FootprintResult(
            epochs: epochs, objects: objects, changedPerEpoch: changed, compactions: checkpointsSeen.count,
            maximumStoreBytes: maximum, finalStoreBytes: names.reduce(0) { $0 + size($1) },
            checkpointBytes: checkpoint.map(size) ?? 0)
    }
}
