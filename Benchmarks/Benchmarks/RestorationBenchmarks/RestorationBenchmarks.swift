import Benchmark
import Foundation
import StateJournal
import StateRestoration

/// The restoration layer over the engine: an incremental pass with 1 of 10,000 objects changed, a
/// full pass with 1% changed, and a relaunch that restores 10,000 objects. Each reports wall-clock
/// time, throughput and allocations against the committed thresholds in `Thresholds/`.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        timeUnits: .microseconds,
        warmupIterations: 2,
        maxDuration: .seconds(2),
        maxIterations: 2_000,
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
