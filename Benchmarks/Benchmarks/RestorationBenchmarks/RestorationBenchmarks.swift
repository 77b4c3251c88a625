import Benchmark
import Foundation
import StateJournal
import StateRestoration

/// The restoration layer over the engine: an incremental pass with 1 of 10,000 objects changed, the
/// main-actor time of that pass under everyCommit, split and synchronous, the default pass with 1
/// of 10,000 changed and nothing invalidated, a full pass with 1% changed, and a relaunch that
/// restores 10,000 objects. Each reports wall-clock
/// time, throughput and allocations against the committed thresholds in `Thresholds/`.
let benchmarks: @Sendable () -> Void = {
    // With STATEJOURNAL_BENCH_STABLE set (as `.ci/run` does), only allocations are measured, briefly:
    // what a shared machine cannot disturb, checked against Thresholds/Stable on every CI run.
    let stableOnly = ProcessInfo.processInfo.environment["STATEJOURNAL_BENCH_STABLE"] != nil
    Benchmark.defaultConfiguration = .init(
        metrics: stableOnly ? [.mallocCountTotal] : [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        timeUnits: .microseconds,
        warmupIterations: 2,
        maxDuration: stableOnly ? .milliseconds(300) : .seconds(2),
        maxIterations: stableOnly ? 20 : 2_000,
        thresholds: [
            .wallClock: .init(relative: [.p50: 35, .p90: 60]),
            .throughput: .init(relative: [.p50: 35, .p90: 60]),
            .mallocCountTotal: .init(relative: [.p50: 10, .p90: 15]),
            .peakMemoryResident: .init(relative: [.p90: 15]),
        ]
    )

    let incremental = AppFixture(leaves: 10_000)
    Benchmark(
        "incremental-pass-1-of-10000-changed",
        closure: { _ in blackHole(incremental.pass(changing: 1, mode: .incremental)) },
        setup: { try incremental.create() },
        teardown: { incremental.remove() }
    )

    // What a pass costs the main actor under everyCommit. The synchronous pass encodes,
    // compresses, writes and waits for fdatasync on the caller's thread; the split pass measures
    // only its encode step (`submitPreservation`), after which the journal's committer compresses,
    // writes and syncs while the caller is free. Each iteration waits for the epoch to be durable,
    // outside the measurement, so that passes never pile up. The synchronous pass waits for the
    // disk, whose latency swings several-fold on a shared machine: its time is held loosely.
    let mainActorThresholds: [BenchmarkMetric: BenchmarkThresholds] = [
        .wallClock: .init(relative: [.p50: 60, .p90: 100]),
        .throughput: .init(relative: [.p50: 60, .p90: 100]),
        .mallocCountTotal: .init(relative: [.p50: 10, .p90: 15]),
        .peakMemoryResident: .init(relative: [.p90: 15]),
    ]
    for (label, durability) in [("everyCommit", Durability.everyCommit), ("interval", .interval(seconds: 1))] {
        let split = AppFixture(leaves: 10_000, durability: durability)
        Benchmark(
            "main-actor-time-of-incremental-pass-1-of-10000-changed-\(label)",
            configuration: .init(maxIterations: 1_000, thresholds: mainActorThresholds),
            closure: { benchmark in
                split.change(1)
                benchmark.startMeasurement()
                let pending = split.submitIncrementalPass()
                benchmark.stopMeasurement()
                blackHole(try? await pending.report())
            },
            setup: { try split.create() },
            teardown: { split.remove() }
        )
    }

    let synchronous = AppFixture(leaves: 10_000, durability: .everyCommit)
    Benchmark(
        "synchronous-incremental-pass-1-of-10000-changed-everyCommit",
        configuration: .init(
            maxIterations: 1_000,
            thresholds: mainActorThresholds.merging([.wallClock: .init(relative: [.p50: 400, .p90: 400])]) { $1 }),
        closure: { _ in blackHole(synchronous.pass(changing: 1, mode: .incremental)) },
        setup: { try synchronous.create() },
        teardown: { synchronous.remove() }
    )

    // The pass an app gets by default, which saves a change nobody invalidated: every object is
    // encoded, only the changed entry written. Compare with incremental-pass-1-of-10000-changed.
    let safeDefault = AppFixture(leaves: 10_000)
    Benchmark(
        "default-pass-1-of-10000-changed",
        closure: { _ in blackHole(safeDefault.defaultPass(changing: 1)) },
        setup: { try safeDefault.create() },
        teardown: { safeDefault.remove() }
    )

    let full = AppFixture(leaves: 10_000)
    Benchmark(
        "full-pass-1-percent-of-10000-changed",
        configuration: .init(maxIterations: 100),
        closure: { _ in blackHole(full.pass(changing: 100, mode: .full)) },
        setup: { try full.create() },
        teardown: { full.remove() }
    )

    let relaunch = AppFixture(leaves: 10_000)
    Benchmark(
        "relaunch-and-restore-10000-objects",
        configuration: .init(maxIterations: 50),
        closure: { _ in blackHole(relaunch.relaunchAndRestore()) },
        setup: {
            try relaunch.create()
            relaunch.closeJournal()
        },
        teardown: { relaunch.remove() }
    )
}
