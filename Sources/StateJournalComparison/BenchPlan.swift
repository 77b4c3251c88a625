import Foundation

/// How much `statejournal bench` measures: the full plan the Performance article reports, or a quick one that
/// finishes in under a minute on a 2-core machine.
public struct BenchPlan: Sendable {
    /// How many objects change per pass.
    public enum Changed: String, Sendable, Codable, CaseIterable {
        case one = "1"
        case onePercent = "1%"
        case all = "100%"

        func count(of objects: Int) -> Int {
            switch self {
            case .one: 1
            case .onePercent: max(1, objects / 100)
            case .all: objects
            }
        }
    }

    /// `quick` or `full`.
    public var mode: String
    /// The app sizes measured.
    public var objectCounts: [Int]
    /// How many passes each size and change rate gets.
    public var passes: @Sendable (_ objects: Int, _ changed: Changed) -> Int
    /// How many of those passes the whole-state contenders save and are timed on.
    public var wholeStateSamples: @Sendable (_ objects: Int) -> Int
    /// How many times each contender restores, alternated with the others.
    public var restoreRounds: Int
    /// How long each commit-rate contender commits in one round.
    public var commitRateSeconds: Double
    /// How many rounds of commit-rate runs, alternated.
    public var commitRateRounds: Int
    /// The bytes-on-disk scenarios compared with `lz4 -1`.
    public var compressionScenarios: [CompressionComparison.Scenario]
    /// The store size and the one-entry commits per side of the commit-latency-under-compaction figure.
    public var compactionLatency: (objects: Int, commits: Int) = (100_000, 5_000)
    /// The long run whose bytes on disk are sampled: epochs, objects, objects changed per epoch.
    public var footprint: (epochs: Int, objects: Int, changed: Int) = (5_000, 2_000, 20)

    /// What the Performance article reports: N = 1,000, 10,000 and 100,000; up to 1,000 passes.
    public static let full = BenchPlan(
        mode: "full",
        objectCounts: [1_000, 10_000, 100_000],
        passes: { objects, changed in
            switch changed {
            case .one: 1_000
            case .onePercent: 1_000
            case .all: max(3, min(200, 200_000 / objects))
            }
        },
        wholeStateSamples: { objects in objects >= 100_000 ? 3 : 10 },
        restoreRounds: 3,
        commitRateSeconds: 2,
        commitRateRounds: 3,
        compressionScenarios: CompressionComparison.standardScenarios)

    /// Under a minute on 2 cores: N = 1,000 and 10,000 only, and fewer passes.
    public static let quick = BenchPlan(
        mode: "quick",
        objectCounts: [1_000, 10_000],
        passes: { _, changed in
            switch changed {
            case .one: 60
            case .onePercent: 30
            case .all: 3
            }
        },
        wholeStateSamples: { _ in 3 },
        restoreRounds: 3,
        commitRateSeconds: 0.5,
        commitRateRounds: 3,
        compressionScenarios: [
            .init(name: "10,000 objects, 100 passes, 1 changed", objects: 10_000, passes: 100, changed: 1),
            .init(name: "10,000 objects, 100 passes, 1% changed", objects: 10_000, passes: 100, changed: 100),
            .init(name: "1,000 objects, 100 passes, all changed", objects: 1_000, passes: 100, changed: 1_000),
        ],
        compactionLatency: (20_000, 1_000),
        footprint: (1_000, 1_000, 10))

    /// A short description of the plan, printed above the tables.
    public var summary: String {
        let sizes = objectCounts.map { $0.grouped }.joined(separator: ", ")
        let caveat =
            mode == "quick"
            ? " (quick: smaller N and fewer passes than the full run; figures for 100,000 objects need the full run)"
            : ""
        return "\(mode) run: N = \(sizes); K = 1, 1%, 100%; medians of alternated runs\(caveat)"
    }
}

extension Int {
    /// The number with thousands separators, as the tables print it.
    var grouped: String {
        let digits = String(self)
        var result = ""
        for (offset, character) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return result
    }
}
