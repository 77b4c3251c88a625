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

    /// Found by seed 334: shipper A takes term 2 and standby B term 3 by force before the replica
    /// has any generation; A lands generations 1 to 3, then B's first, 4, built on nothing. Its term
    /// start had no basis, read as a start of before version 4, so A's generations were in B's
    /// history, with other epochs at the same numbers.
    @Test func aTermBegunOnAnEmptyReplicaLeavesOutTheGenerationsAnOlderTermLandedBeforeIt() throws {
        func generation(_ number: UInt64, term: UInt64, holder: String, building base: ReplicaGeneration?)
            throws -> ReplicaGeneration
        {
            var document = ReplicaGeneration(
                storeID: String(repeating: "5", count: 32), generation: number, writtenMilliseconds: number,
                storeGeneration: number, nextFileSequence: 1, epochFloor: 0, lastEpoch: number,
                lastEpochMilliseconds: nil, files: [])
            document.version = ReplicaGeneration.currentVersion
            document.term = term
            document.holder = holder
            document.terms = ReplicaHistory.termStarts(term: term, number: number, building: base)
            document.predecessor = try base.map {
                ReplicaGeneration.Link(
                    generation: $0.generation, term: $0.term ?? 0,
                    sha256: ReplicaLayout.sha256Hex(try ReplicaGeneration.encode($0)))
            }
            return document
        }
        let first = try generation(1, term: 2, holder: "A", building: nil)
        let second = try generation(2, term: 2, holder: "A", building: first)
        let third = try generation(3, term: 2, holder: "A", building: second)
        let other = try generation(4, term: 3, holder: "B", building: nil)
        #expect(other.terms?.last?.basis == 0)
        for older in [first, second, third] {
            #expect(!ReplicaHistory.placement(of: older, under: other).isMember)
        }
        #expect(ReplicaHistory.headIndex([other, third, second, first]) == 0)
        guard case .diverged = ReplicaHistory.continuation(from: third, sha256: nil, to: other) else {
            Issue.record("a follower that applied generation 3 takes generation 4 for its continuation")
            return
        }
        let replayed = HistorySimulation(seed: 334, rules: .current).run()
        #expect(replayed.violations.isEmpty, "\(replayed.violations)")
    }
}
