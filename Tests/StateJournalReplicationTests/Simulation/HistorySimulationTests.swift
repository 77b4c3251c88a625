import Foundation
import Testing

@testable import StateJournalReplication

/// Deterministic simulations of the replica's history rules: many seeded worlds of shippers,
/// standbys and followers over a faulty network and object store, checked after every change.
///
/// `STATEJOURNAL_SIMULATION_SEEDS` sets how many seeds the current rules run (2,000 by default),
/// `STATEJOURNAL_SIMULATION_SEED` replays one, printing its trace.
@Suite struct HistorySimulationTests {
    static func environmentNumber(_ name: String) -> UInt64? {
        ProcessInfo.processInfo.environment[name].flatMap { UInt64($0.replacingOccurrences(of: "_", with: "")) }
    }

    static func run(_ seeds: some Sequence<UInt64>, rules: SimulatedRules) -> (SimulationFigures, Duration) {
        var figures = SimulationFigures()
        let clock = ContinuousClock()
        let took = clock.measure {
            for seed in seeds { figures.add(HistorySimulation(seed: seed, rules: rules).run()) }
        }
        return (figures, took)
    }

    @Test func theSimulationFindsTheForkUnderThePreviousRules() {
        let (figures, took) = Self.run(1...500, rules: .legacy)
        let first = figures.violations.first
        print(
            "HistorySimulation (previous rules): \(figures.violatingSeeds) of \(figures.seeds) seeds violated, the first seed \(first.map { String($0.seed) } ?? "none") (\(first?.rule ?? "-")); \(figures.summary); \(took)"
        )
        if let first { print(first) }
        #expect(first != nil, "the previous rules fork the history in some seed")
    }

    @Test func noSeedForksTheHistoryOrLosesAcknowledgedEpochs() {
        let seeds: [UInt64]
        if let one = Self.environmentNumber("STATEJOURNAL_SIMULATION_SEED") {
            seeds = [one]
        } else {
            seeds = Array(1...max(1, Self.environmentNumber("STATEJOURNAL_SIMULATION_SEEDS") ?? 2_000))
        }
        let (figures, took) = Self.run(seeds, rules: .current)
        print("HistorySimulation (current rules): \(figures.summary); \(took)")
        for violation in figures.violations.prefix(5) { print(violation) }
        #expect(figures.violations.isEmpty, "\(figures.violatingSeeds) seeds violated the rules")
    }
}
