import Foundation

/// Everything `statejournal bench` measured in one run, with stable field names for `--json`.
public struct BenchReport: Sendable, Codable {
    /// The machine the figures came from.
    public struct Machine: Sendable, Codable {
        /// The processors active for the run.
        public var processors: Int
        /// The operating system's version, as `ProcessInfo` describes it.
        public var system: String
    }

    /// One performance target of the project, checked against the ratio measured in this run.
    public struct Target: Sendable, Codable {
        /// What the target compares, in words: the figure and the ratio taken.
        public var target: String
        /// `atLeast` or `atMost`.
        public var comparison: String
        /// The ratio the measured one must be at least, or at most.
        public var threshold: Double
        /// The ratio measured in this run, or `nil` when this run did not measure its figures.
        public var measured: Double?
        /// Whether `measured` meets `threshold`, or `nil` when nothing was measured.
        public var met: Bool?
    }

    /// The plan's mode: `full` or `quick`.
    public var mode: String
    /// The plan in a sentence: the object counts, changes and how the figures were taken.
    public var plan: String
    /// The machine the figures came from.
    public var machine: Machine
    /// One table per object count and share of objects changed, every contender side by side.
    public var preservation: [PreservationFigure]
    /// The commit rates of the journal and of SQLite, and the physical limits they are measured against.
    public var commitRates: [CommitRateFigure]
    /// The journal's replay speed, measured on the largest table with 1% changed; `nil` when there was
    /// no such table.
    public var replay: ReplayFigure?
    /// The journal's bytes on disk against `lz4 -1`, one result per scenario.
    public var compression: [CompressionComparison.Result]
    /// Commit latency with and without a compaction running.
    public var compactionLatency: CompactionBenchmark.LatencyResult?
    /// Bytes on disk over a long run with automatic compaction.
    public var footprint: CompactionBenchmark.FootprintResult?
    /// The project's performance targets, each checked against this run's figures.
    public var targets: [Target]
}

/// The whole bench: preservation tables, commit rates, replay speed and bytes against `lz4 -1`.
public enum Bench {
    /// Runs `plan`. `probeCommand`, when given, is the command line that makes this tool a restore
    /// probe child (see ``RestoreProbe``); without it, restore memory is not measured.
    public static func run(plan: BenchPlan, probeCommand: [String]?, progress: (String) -> Void) throws -> BenchReport {
        var preservation: [PreservationFigure] = []
        var replay: ReplayFigure?
        let largest = plan.objectCounts.max() ?? 0
        for objects in plan.objectCounts {
            for changed in BenchPlan.Changed.allCases {
                let countReplay = objects == largest && changed == .onePercent
                let (figure, measuredReplay) = try PreservationBenchmark.run(
                    objects: objects, changed: changed, plan: plan, probeCommand: probeCommand,
                    countReplay: countReplay,
                    progress: progress)
                preservation.append(figure)
                if countReplay { replay = measuredReplay }
            }
        }
        let rates = try CommitRateBenchmark.run(plan: plan, progress: progress)
        var compression: [CompressionComparison.Result] = []
        for scenario in plan.compressionScenarios {
            progress("bytes against lz4 -1: \(scenario.name)")
            compression.append(try CompressionComparison.measure(scenario))
        }
        progress("commit latency with and without a compaction running")
        let latency = try CompactionBenchmark.latency(
            objects: plan.compactionLatency.objects, commits: plan.compactionLatency.commits)
        progress("bytes on disk over a long run with automatic compaction")
        let footprint = try CompactionBenchmark.footprint(
            epochs: plan.footprint.epochs, objects: plan.footprint.objects, changed: plan.footprint.changed)
        var report = BenchReport(
            mode: plan.mode, plan: plan.summary,
            machine: .init(
                processors: ProcessInfo.processInfo.activeProcessorCount,
                system: ProcessInfo.processInfo.operatingSystemVersionString),
            preservation: preservation, commitRates: rates, replay: replay, compression: compression,
            compactionLatency: latency, footprint: footprint, targets: [])
        report.targets = report.evaluateTargets()
        return report
    }
}

extension BenchReport {
    func contender(_ name: String, objects: Int, changed: BenchPlan.Changed) -> ContenderFigure? {
        preservation.first { $0.objects == objects && $0.changed == changed.rawValue }?.contenders.first {
            $0.name == name
        }
    }

    /// The performance targets, each as a ratio measured in this run. A target whose figure this run
    /// did not measure (a quick run has no 100,000 objects) has no `measured` value.
    func evaluateTargets() -> [Target] {
        let journal = PreservationBenchmark.reference
        let largest = preservation.map(\.objects).max() ?? 0
        func ratio(_ numerator: Double?, _ denominator: Double?) -> Double? {
            guard let numerator, let denominator, denominator > 0 else { return nil }
            return numerator / denominator
        }
        func target(_ text: String, atLeast threshold: Double, _ measured: Double?) -> Target {
            Target(
                target: text, comparison: "atLeast", threshold: threshold, measured: measured,
                met: measured.map { $0 >= threshold })
        }
        func target(_ text: String, atMost threshold: Double, _ measured: Double?) -> Target {
            Target(
                target: text, comparison: "atMost", threshold: threshold, measured: measured,
                met: measured.map { $0 <= threshold })
        }
        let big = largest >= 100_000 ? 100_000 : nil
        return [
            target(
                "incremental pass, 1 of 10,000 changed, interval: JSON snapshot save time / journal pass time",
                atLeast: 1_000,
                ratio(
                    contender("json-snapshot", objects: 10_000, changed: .one)?.passSeconds,
                    contender(journal, objects: 10_000, changed: .one)?.passSeconds)),
            target(
                "incremental pass flat in N: journal pass time at 100,000 / at 1,000 objects, 1 changed", atMost: 2,
                ratio(
                    big.flatMap { contender(journal, objects: $0, changed: .one)?.passSeconds },
                    contender(journal, objects: 1_000, changed: .one)?.passSeconds)),
            target(
                "full pass, 1% of 10,000 changed: JSON snapshot save time / journal pass time", atLeast: 5,
                ratio(
                    contender("json-snapshot", objects: 10_000, changed: .onePercent)?.passSeconds,
                    contender(journal, objects: 10_000, changed: .onePercent)?.passSeconds)),
            target(
                "one-entry epochs, interval: journal rate / SQLite synchronous=NORMAL rate", atLeast: 10,
                commitRates.first { $0.name == "journal-interval" }?.ratio),
            target(
                "one-entry epochs, interval: journal rate / rate of write(2) of the same entries (within 3x)",
                atLeast: 1.0 / 3,
                commitRates.first { $0.name == "journal-interval" }?.ratioToLimit),
            target(
                "one-entry epochs, everyCommit: journal rate / SQLite synchronous=FULL rate, one writer", atLeast: 1.5,
                commitRates.first { $0.name == "journal-everyCommit" && $0.writers == 1 }?.ratio),
            target(
                """
                one-entry epochs, everyCommit: journal rate / rate of write+fdatasync on a preallocated file (within \
                1.2x)
                """,
                atLeast: 1 / 1.2,
                commitRates.first { $0.name == "journal-everyCommit" && $0.writers == 1 }?.ratioToLimit),
            target(
                "group commit: 8 committers' rate / one writer's rate, everyCommit", atLeast: 6,
                commitRates.first { $0.name == "journal-everyCommit" && $0.writers == 8 }?.ratio),
            target(
                """
                group commit, the limit: 8 threads' write + shared fdatasync rate / one thread's write + fdatasync \
                rate (what the 6x above can reach on this machine)
                """,
                atLeast: 6,
                commitRates.first { $0.name == "write-fdatasync" && $0.writers == 8 }?.ratio),
            target(
                """
                group commit: 8 committers' rate / 8 threads' write + shared fdatasync rate (within 1.2x of the \
                limit)
                """,
                atLeast: 1 / 1.2,
                commitRates.first { $0.name == "journal-everyCommit" && $0.writers == 8 }?.ratioToLimit),
            target(
                """
                restore of 100,000 objects, 1,000 epochs of history, automatic compaction off (every epoch kept, \
                checkpoints written by themselves): JSON snapshot load time / journal restore time
                """,
                atLeast: 5,
                ratio(
                    big.flatMap { contender("json-snapshot", objects: $0, changed: .onePercent)?.restoreSeconds },
                    big.flatMap { contender(journal, objects: $0, changed: .onePercent)?.restoreSeconds })),
            target(
                """
                restore of 100,000 objects, 1,000 epochs, default automatic compaction: JSON snapshot load time / \
                journal restore time
                """,
                atLeast: 5,
                ratio(
                    big.flatMap { contender("json-snapshot", objects: $0, changed: .onePercent)?.restoreSeconds },
                    big.flatMap { contender("journal-autocompact", objects: $0, changed: .onePercent)?.restoreSeconds })
            ),
            target(
                "restore of 100,000 objects after compaction: JSON snapshot load time / journal restore time",
                atLeast: 5,
                ratio(
                    big.flatMap { contender("json-snapshot", objects: $0, changed: .onePercent)?.restoreSeconds },
                    big.flatMap { contender(journal, objects: $0, changed: .onePercent)?.restoreAfterCompactionSeconds }
                )),
            target(
                "replay speed of \(largest.grouped) objects, MB/s of decompressed entry bytes", atLeast: 500,
                replay?.megabytesPerSecond),
            target(
                "bytes on disk: journal / lz4 -1 of the same raw entries concatenated, worst scenario", atMost: 1.5,
                compression.map(\.ratioToLZ4Entries).max()),
            target(
                "first full save of \(largest.grouped) objects: JSON snapshot save time / journal pass time",
                atLeast: 2,
                ratio(
                    contender("json-snapshot", objects: largest, changed: .all)?.passSeconds,
                    contender(journal, objects: largest, changed: .all)?.passSeconds)),
            target(
                "commit latency during compaction: p99 during / p99 without", atMost: 2, compactionLatency?.p99Ratio),
            target(
                "commit latency during compaction: longest commit during compaction, ms", atMost: 5,
                compactionLatency.map { $0.maxDuringMicroseconds / 1000 }),
            target(
                "peak memory of restoring 100,000 objects: journal / JSON snapshot load", atMost: 1,
                ratio(
                    big.flatMap {
                        contender(journal, objects: $0, changed: .onePercent)?.restorePeakMemoryBytes.map(Double.init)
                    },
                    big.flatMap {
                        contender("json-snapshot", objects: $0, changed: .onePercent)?.restorePeakMemoryBytes.map(
                            Double.init)
                    })),
        ]
    }
}
