import Foundation
import StateJournal

/// One table of the bench: N objects, K changed per pass, every contender side by side.
public struct PreservationFigure: Sendable, Codable {
    /// N: objects in the app's state.
    public var objects: Int
    /// K, as the plan names it: `1`, `1%` or `100%`.
    public var changed: String
    /// Objects changed by each pass.
    public var changedPerPass: Int
    /// Preservation passes run.
    public var passes: Int
    /// Every contender's figures.
    public var contenders: [ContenderFigure]
}

/// One contender's figures in a ``PreservationFigure``. Ratios are against `journal-interval`:
/// above 1 means slower (or larger) than the journal.
public struct ContenderFigure: Sendable, Codable {
    /// The contender, such as `journal-interval`, `json-snapshot` or `sqlite-wal-normal`.
    public var name: String
    /// Median time of one preservation pass, in seconds.
    public var passSeconds: Double
    /// Passes timed (a contender that rewrites the whole state is timed on some passes only).
    public var passSamples: Int
    /// `passSeconds` over the journal's.
    public var passRatioToJournal: Double?
    /// Median time to read the whole state back, in seconds, when the contender restores.
    public var restoreSeconds: Double?
    /// `restoreSeconds` over the journal's.
    public var restoreRatioToJournal: Double?
    /// The contender's files after the passes, in bytes.
    public var bytesOnDisk: Int?
    /// The contender's files after compaction, in bytes, where the contender has it.
    public var bytesAfterCompaction: Int?
    /// Median time to read the whole state back after compaction, in seconds, where the contender has it.
    public var restoreAfterCompactionSeconds: Double?
    /// `restoreAfterCompactionSeconds` over the journal's.
    public var restoreAfterCompactionRatioToJournal: Double?
    /// Growth of the peak resident set size of a child process restoring the state.
    public var restorePeakMemoryBytes: Int?
}

/// The bytes the journal replays per second, counted as raw entries (path, NUL, state).
public struct ReplayFigure: Sendable, Codable {
    /// Objects in the restored state.
    public var objects: Int
    /// Epochs replayed: the first, which puts every object, and one per pass.
    public var epochs: Int
    /// The raw entries of every epoch (path, NUL, state), in bytes, before compression.
    public var entryBytes: Int
    /// The journal's median restore time, in seconds.
    public var seconds: Double
    /// `entryBytes` per second, in millions of bytes.
    public var megabytesPerSecond: Double
}

/// Runs the preservation passes of every contender alternated, on the same workload.
enum PreservationBenchmark {
    static let reference = "journal-interval"
    /// The contender whose restores replay every pass: the replay speed's.
    static let replaying = "journal-nocheckpoint"

    static func makeContenders() -> [any PreservationContender] {
        [
            JournalContender(durability: .interval(seconds: 1)),
            JournalContender(durability: .interval(seconds: 1), compactsAutomatically: true),
            JournalContender(durability: .interval(seconds: 1), checkpoints: false),
            JournalContender(durability: .everyCommit),
            JournalContender(durability: .none),
            SnapshotContender(format: .json),
            SnapshotContender(format: .propertyList),
            SQLiteContender(synchronous: .normal),
            SQLiteContender(synchronous: .full),
            RawWriteContender(syncing: false),
            RawWriteContender(syncing: true),
            LZ4Contender(),
        ]
    }

    /// Measures one table. `countReplay` also counts the raw entry bytes the journal will replay.
    static func run(
        objects: Int, changed: BenchPlan.Changed, plan: BenchPlan, probeCommand: [String]?, countReplay: Bool,
        progress: (String) -> Void
    ) throws -> (PreservationFigure, ReplayFigure?) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "statejournal-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var workload = AppStateWorkload(objectCount: objects)
        let contenders = makeContenders()
        defer { contenders.forEach { $0.finish() } }
        for contender in contenders {
            try contender.start(in: directory, with: workload)
            contender.settle()
        }

        let passes = plan.passes(objects, changed)
        let perPass = changed.count(of: objects)
        let stride = max(1, passes / plan.wholeStateSamples(objects))
        let restoreEvery = max(1, passes / plan.restoreRounds)
        var passTimes = [String: [Double]]()
        var restoreTimes = [String: [Double]]()
        var restoreRoundsDone = 0
        var replayBytes = countReplay ? entryBytes(0..<objects, of: workload) : 0

        for pass in 0..<passes {
            let indices = workload.change(perPass)
            if countReplay { replayBytes += entryBytes(indices, of: workload) }
            for contender in rotated(contenders, by: pass) {
                if contender.rewritesWholeState && pass % stride != stride - 1 {
                    contender.skip(indices, of: workload)
                    continue
                }
                passTimes[contender.name, default: []].append(try time { try contender.save(indices, of: workload) })
                contender.settle()
            }
            if (pass + 1) % restoreEvery == 0 && restoreRoundsDone < plan.restoreRounds {
                restoreRoundsDone += 1
                progress("N=\(objects.grouped) K=\(changed.rawValue): pass \(pass + 1) of \(passes), restoring")
                for contender in rotated(contenders, by: pass) where contender.restores {
                    try contender.prepareRestore(with: workload)
                    var restored = 0
                    restoreTimes[contender.name, default: []].append(try time { restored = try contender.restore() })
                    guard restored == objects || contender is LZ4Contender else {
                        throw JournalError(.damaged, "\(contender.name) restored \(restored) objects, not \(objects).")
                    }
                }
            }
        }

        var memory = [String: Int]()
        if let probeCommand {
            progress("N=\(objects.grouped) K=\(changed.rawValue): measuring restore memory")
            for contender in contenders {
                guard let target = contender.probe else { continue }
                memory[contender.name] = try RestoreProbe.measure(target, command: probeCommand).peakGrowthBytes
            }
        }

        var figures: [ContenderFigure] = []
        for contender in contenders {
            figures.append(
                ContenderFigure(
                    name: contender.name, passSeconds: median(passTimes[contender.name] ?? []),
                    passSamples: passTimes[contender.name]?.count ?? 0,
                    restoreSeconds: restoreTimes[contender.name].map(median), bytesOnDisk: contender.bytesOnDisk,
                    restorePeakMemoryBytes: memory[contender.name]))
        }
        progress("N=\(objects.grouped) K=\(changed.rawValue): compacting")
        var compacted: [Int] = []
        for (index, contender) in contenders.enumerated() where try contender.compact() {
            figures[index].bytesAfterCompaction = contender.bytesOnDisk
            compacted.append(index)
        }
        var compactedRestoreTimes = [Int: [Double]]()
        for round in 0..<plan.restoreRounds {
            for index in rotated(compacted, by: round) {
                compactedRestoreTimes[index, default: []].append(try time { _ = try contenders[index].restore() })
            }
        }
        for (index, times) in compactedRestoreTimes { figures[index].restoreAfterCompactionSeconds = median(times) }
        if let journal = figures.first(where: { $0.name == reference }) {
            for index in figures.indices {
                figures[index].passRatioToJournal = figures[index].passSeconds / journal.passSeconds
                if let restore = figures[index].restoreSeconds, let reference = journal.restoreSeconds {
                    figures[index].restoreRatioToJournal = restore / reference
                }
                if let restore = figures[index].restoreAfterCompactionSeconds,
                    let reference = journal.restoreAfterCompactionSeconds
                {
                    figures[index].restoreAfterCompactionRatioToJournal = restore / reference
                }
            }
        }
        let figure = PreservationFigure(
            objects: objects, changed: changed.rawValue, changedPerPass: perPass, passes: passes, contenders: figures)
        var replay: ReplayFigure?
        if countReplay, let seconds = figures.first(where: { $0.name == replaying })?.restoreSeconds {
            replay = ReplayFigure(
                objects: objects, epochs: passes + 1, entryBytes: replayBytes, seconds: seconds,
                megabytesPerSecond: Double(replayBytes) / seconds / 1_000_000)
        }
        return (figure, replay)
    }

    /// The contenders in an order that moves by one each pass, so that none always goes first.
    static func rotated<T>(_ items: [T], by offset: Int) -> [T] {
        let shift = offset % items.count
        return Array(items[shift...] + items[..<shift])
    }

    static func entryBytes(_ indices: some Sequence<Int>, of workload: AppStateWorkload) -> Int {
        indices.reduce(0) { $0 + workload.path($1).description.utf8.count + 1 + workload.state($1).count }
    }
}

/// Seconds taken by `body`, on the monotonic clock.
func time(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// The median of `values`, or 0 when empty.
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
