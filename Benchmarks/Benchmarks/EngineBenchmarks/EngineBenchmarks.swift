import Benchmark
import Foundation
import StateJournal

/// The engine's hot paths: committing under each durability policy, replaying a store, and
/// compacting it. Each reports wall-clock time, throughput and allocations; the committed
/// thresholds in `Thresholds/` make a regression fail `swift package benchmark thresholds check`.
/// Names have no spaces: the plugin writes a threshold file under a name with spaces replaced but
/// looks it up under the name as given.
let benchmarks: @Sendable () -> Void = {
    // With STATEJOURNAL_BENCH_STABLE set (as `.ci/run` does), only allocations are measured, briefly:
    // what a shared machine cannot disturb, checked against Thresholds/Stable on every CI run.
    let stableOnly = ProcessInfo.processInfo.environment["STATEJOURNAL_BENCH_STABLE"] != nil
    Benchmark.defaultConfiguration = .init(
        metrics: stableOnly ? [.mallocCountTotal] : [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        timeUnits: .microseconds,
        warmupIterations: 2,
        maxDuration: stableOnly ? .milliseconds(300) : .seconds(2),
        maxIterations: stableOnly ? 20 : 1_000,
        thresholds: [
            .wallClock: .init(relative: [.p50: 35, .p90: 60]),
            .throughput: .init(relative: [.p50: 35, .p90: 60]),
            .mallocCountTotal: .init(relative: [.p50: 10, .p90: 15]),
            .peakMemoryResident: .init(relative: [.p90: 15]),
        ]
    )

    for (label, durability) in [
        ("none", Durability.none), ("interval", Durability.interval(seconds: 1)),
        ("everyCommit", Durability.everyCommit),
    ] {
        let fixture = StoreFixture(objects: 10_000, passes: 0, durability: durability)
        // A commit under everyCommit waits for the disk, whose sync latency on a shared machine
        // swings several-fold from run to run: only its allocation count is held tightly.
        var configuration = Benchmark.Configuration(scalingFactor: durability == .everyCommit ? .one : .kilo)
        if durability == .everyCommit {
            configuration.thresholds = [
                .wallClock: .init(relative: [.p50: 400, .p90: 400]),
                .throughput: .init(relative: [.p50: 80, .p90: 80]),
                .mallocCountTotal: .init(relative: [.p50: 10, .p90: 15]),
                .peakMemoryResident: .init(relative: [.p90: 15]),
            ]
        }
        Benchmark(
            "commit-one-entry-epoch-\(label)",
            configuration: configuration,
            closure: { benchmark in
                for _ in benchmark.scaledIterations { fixture.commitOneEntry() }
            },
            setup: { try fixture.create() },
            teardown: { fixture.remove() }
        )
    }

    let passFixture = StoreFixture(objects: 10_000, passes: 0, durability: .interval(seconds: 1))
    Benchmark(
        "commit-pass-100-of-10000-interval",
        configuration: .init(scalingFactor: .one),
        closure: { _ in passFixture.commitPass(changing: 100) },
        setup: { try passFixture.create() },
        teardown: { passFixture.remove() }
    )

    let replayFixture = StoreFixture(objects: 10_000, passes: 100, durability: .none)
    Benchmark(
        "replay-10000-objects-after-100-passes",
        configuration: .init(maxIterations: 50),
        closure: { _ in blackHole(replayFixture.replay()) },
        setup: {
            try replayFixture.create()
            try replayFixture.closeWriter()
        },
        teardown: { replayFixture.remove() }
    )

    let compactionFixture = StoreFixture(objects: 10_000, passes: 20, durability: .none)
    // Each iteration commits a pass of 100 changes first, so that there is something to fold; the
    // pass is under 1% of the iteration's time.
    Benchmark(
        "commit-pass-and-compact-10000-objects",
        configuration: .init(maxIterations: 30),
        closure: { _ in
            compactionFixture.commitPass(changing: 100)
            blackHole(compactionFixture.compact())
        },
        setup: { try compactionFixture.create() },
        teardown: { compactionFixture.remove() }
    )
}
