import Foundation
import StateJournal

/// The questions commands ask a store, answered in the tool's terms: an epoch or a time the store
/// does not hold is a usage error that names the range it does hold.
struct StoreQueries {
    let inspector: StoreInspector
    let epochs: [EpochInfo]

    init(_ directory: URL) throws {
        inspector = try StoreInspector(at: directory)
        epochs = try inspector.log()
    }

    /// "it holds epochs 3 through 41", "it holds only epoch 3", "it holds no epoch yet".
    var range: String {
        guard let first = epochs.first, let last = epochs.last else { return "it holds no epoch yet" }
        return first.epoch == last.epoch
            ? "it holds only epoch \(first.epoch)" : "it holds epochs \(first.epoch) through \(last.epoch)"
    }

    /// The retained epoch `number`.
    func epoch(_ number: UInt64) throws -> EpochInfo {
        guard let info = epochs.first(where: { $0.epoch == number }) else {
            throw CommandFailure(.usage, "epoch \(number) is not in this store; \(range).")
        }
        return info
    }

    /// The latest retained epoch committed at or before `time` (compared in whole milliseconds,
    /// so that a time `log` printed finds its epoch).
    func epoch(at time: Date, given text: String) throws -> EpochInfo {
        func milliseconds(_ date: Date) -> Double { (date.timeIntervalSince1970 * 1000).rounded() }
        guard let info = epochs.last(where: { milliseconds($0.timestamp) <= milliseconds(time) }) else {
            let given = text == time.iso8601 ? text : "\(text) (\(time.iso8601))"
            guard let first = epochs.first, let last = epochs.last else {
                throw CommandFailure(
                    .usage, "no epoch was committed at or before \(given); this store holds no epoch yet.")
            }
            throw CommandFailure(
                .usage,
                """
                no epoch of this store was committed at or before \(given); its epochs run from \
                \(first.timestamp.iso8601) (epoch \(first.epoch)) to \(last.timestamp.iso8601) (epoch \(last.epoch)).
                """
            )
        }
        return info
    }

    /// An epoch given as a number or as a time (anything `--at` takes).
    func epoch(numberOrTime text: String) throws -> EpochInfo {
        if let number = UInt64(text) { return try epoch(number) }
        return try epoch(at: try parseTime(text, option: "an epoch"), given: text)
    }

    /// Every path any retained epoch wrote.
    func allPaths() throws -> Set<RestorationPath> {
        var paths = Set<RestorationPath>()
        try inspector.reader.forEachEpoch { _, changes in
            for case .put(let path, _) in changes { paths.insert(path) }
            return true
        }
        return paths
    }
}

/// Paths near one that names nothing: the same path with a few typing mistakes, paths under it,
/// paths that share its last component or its leading components.
enum PathSuggestions {
    static func near(_ wanted: String, in candidates: some Sequence<RestorationPath>, limit: Int = 5) -> [String] {
        let target = wanted.lowercased()
        let wantedComponents = target.split(separator: "/")
        var scored: [(score: Int, path: String)] = []
        for candidate in candidates {
            let text = candidate.description
            let lowered = text.lowercased()
            let components = lowered.split(separator: "/")
            let distance = editDistance(target, lowered)
            var score = Int.max
            if distance <= max(2, target.count / 3) { score = distance }
            if lowered.hasPrefix(target + "/") || target.hasPrefix(lowered + "/") {
                score = min(score, 3 + abs(components.count - wantedComponents.count))
            }
            if let last = wantedComponents.last, components.last == last { score = min(score, 4) }
            if score != Int.max { scored.append((score, text)) }
        }
        return scored.sorted { ($0.score, $0.path) < ($1.score, $1.path) }.prefix(limit).map(\.path)
    }

    /// Levenshtein distance, in characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// A failure saying that `path` names nothing, with the near paths.
    static func failure(_ sentence: String, path: String, candidates: some Sequence<RestorationPath>, store: String)
        -> CommandFailure
    {
        let near = near(path, in: candidates)
        if near.isEmpty {
            return CommandFailure(.usage, sentence + " List the paths with: statejournal show \(store)")
        }
        return CommandFailure(
            .usage,
            sentence + "\nDid you mean " + (near.count == 1 ? "this?" : "one of these?") + "\n"
                + near.map { "    " + $0 }.joined(separator: "\n"))
    }
}
