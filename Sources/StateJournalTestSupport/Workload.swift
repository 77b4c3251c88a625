import StateJournal
import StateJournalComparison

/// The seeded generator every workload uses, shared with `statejournal bench` and `soak`, so that every
/// workload is the same on every run.
public typealias SplitMix64 = StateJournalComparison.SplitMix64

extension SplitMix64 {
    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = next()
            for _ in 0..<min(8, count - index) {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }
}

/// Produces epochs of changes over a fixed set of restoration paths, the way an app's preservation
/// passes would: mostly small edits to a few objects' states (so successive versions are similar
/// and LZ4 has something to work with), objects appearing and going away, and now and then a
/// discard of everything.
public struct WorkloadGenerator: Sendable {
    /// The generator every choice is drawn from.
    public var random: SplitMix64
    /// The paths the changes are made to: a few roots and items under them.
    public let paths: [RestorationPath]
    /// The sizes of states, in bytes.
    public let stateSizes: ClosedRange<Int>
    /// How many changes an epoch makes, unless it is a discard.
    public let changesPerEpoch: ClosedRange<Int>
    /// The chance, in percent, that a change to a path that has a state is a remove.
    public let removePercent: Int
    /// The chance, in percent, that an epoch is a discard of everything.
    public let removeAllPercent: Int
    /// The generator's view of the current state, to derive the next versions from.
    public private(set) var current: [RestorationPath: [UInt8]] = [:]

    /// Creates a generator of `pathCount` paths, starting from an empty state; the same `seed`
    /// makes the same epochs.
    public init(
        seed: UInt64, pathCount: Int = 12, stateSizes: ClosedRange<Int> = 50...400,
        changesPerEpoch: ClosedRange<Int> = 1...6,
        removePercent: Int = 12, removeAllPercent: Int = 4
    ) {
        random = SplitMix64(seed: seed)
        self.stateSizes = stateSizes
        self.changesPerEpoch = changesPerEpoch
        self.removePercent = removePercent
        self.removeAllPercent = removeAllPercent
        let roots = ["Main", "Settings", "Inbox", "Compose"]
        paths = (0..<pathCount).map { index in
            let root = roots[index % roots.count]
            return index < roots.count ? RestorationPath(root) : RestorationPath(root, "Item-\(index)")
        }
    }

    /// The changes of the next epoch. The caller commits them; ``current`` already reflects them.
    public mutating func nextEpoch() -> [JournalChange] {
        if !current.isEmpty && Int.random(in: 0..<100, using: &random) < removeAllPercent {
            var changes: [JournalChange] = [.removeAll]
            current.removeAll()
            // A discard is often followed, in the same pass, by the objects that survive it.
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                changes.append(put(paths.randomElement(using: &random)!))
            }
            return changes
        }
        var changes: [JournalChange] = []
        for _ in 0..<Int.random(in: changesPerEpoch, using: &random) {
            let path = paths.randomElement(using: &random)!
            if current[path] != nil && Int.random(in: 0..<100, using: &random) < removePercent {
                current[path] = nil
                changes.append(.remove(path))
            } else {
                changes.append(put(path))
            }
        }
        return changes
    }

    /// A put of the path's next version: an edit of the previous one, or a fresh state.
    private mutating func put(_ path: RestorationPath) -> JournalChange {
        let state: [UInt8]
        if let previous = current[path] {
            state = Self.edit(previous, sizes: stateSizes, random: &random)
        } else {
            state = Self.freshState(for: path, size: Int.random(in: stateSizes, using: &random), random: &random)
        }
        current[path] = state
        return .put(path, state)
    }

    /// A state that looks like an encoded object: key-value text with some numbers in it.
    public static func freshState(for path: RestorationPath, size: Int, random: inout SplitMix64) -> [UInt8] {
        var text = "{\"path\":\"\(path)\",\"kind\":\"controller\""
        var field = 0
        while text.utf8.count < size {
            text += ",\"field\(field)\":\(UInt32.random(in: 0...99_999, using: &random))"
            field += 1
        }
        return Array(text.utf8.prefix(size))
    }

    /// The previous version with a few bytes changed, sometimes grown or shrunk a little.
    public static func edit(_ previous: [UInt8], sizes: ClosedRange<Int>, random: inout SplitMix64) -> [UInt8] {
        var state = previous
        for _ in 0..<Int.random(in: 1...4, using: &random) where !state.isEmpty {
            state[Int.random(in: 0..<state.count, using: &random)] =
                UInt8(ascii: "0") + UInt8.random(in: 0...9, using: &random)
        }
        switch Int.random(in: 0..<4, using: &random) {
        case 0 where state.count + 16 <= sizes.upperBound:
            state.append(contentsOf: Array(",\"n\":\(UInt16.random(in: 0...9999, using: &random))".utf8))
        case 1 where state.count - 16 >= sizes.lowerBound:
            state.removeLast(Int.random(in: 1...16, using: &random))
        default: break
        }
        return state
    }
}

/// The expected state of a journal after each epoch: a plain dictionary per epoch, built by applying
/// changes the obvious way.
public struct JournalModel: Sendable {
    /// The state after each committed epoch, by epoch number.
    public private(set) var states: [UInt64: [RestorationPath: [UInt8]]] = [:]
    /// The changes of each committed epoch, by epoch number.
    public private(set) var changes: [UInt64: [JournalChange]] = [:]
    /// The epochs, in commit order.
    public private(set) var epochs: [UInt64] = []
    /// The state after the last committed epoch.
    public private(set) var latest: [RestorationPath: [UInt8]] = [:]

    /// Creates a model with no epochs and an empty state.
    public init() {}

    /// Starts from a state recovered from disk (after damage cut some epochs off).
    public init(base: [RestorationPath: [UInt8]], epoch: UInt64?) {
        latest = base
        if let epoch {
            states[epoch] = base
            epochs = [epoch]
        }
    }

    /// `state` with `changes` applied in order.
    public static func applying(
        _ changes: [JournalChange], to state: [RestorationPath: [UInt8]]
    ) -> [RestorationPath: [UInt8]] {
        var state = state
        for change in changes {
            switch change {
            case .put(let path, let bytes): state[path] = bytes
            case .remove(let path): state[path] = nil
            case .removeAll: state.removeAll()
            }
        }
        return state
    }

    /// Records that `epoch` committed `changes` on top of the latest state.
    public mutating func commit(_ epoch: UInt64, _ changes: [JournalChange]) {
        precondition(epochs.last.map { epoch > $0 } ?? true, "epoch numbers must grow")
        latest = Self.applying(changes, to: latest)
        states[epoch] = latest
        self.changes[epoch] = changes
        epochs.append(epoch)
    }

    /// Forgets every epoch after `epoch` (replay stopped there), keeping its state as the latest.
    public mutating func rewind(to epoch: UInt64?) {
        let keep: (UInt64) -> Bool = { number in epoch.map { number <= $0 } ?? false }
        epochs = epochs.filter(keep)
        states = states.filter { keep($0.key) }
        changes = changes.filter { keep($0.key) }
        latest = epoch.flatMap { states[$0] } ?? [:]
    }
}
