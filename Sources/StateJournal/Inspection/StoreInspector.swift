import Foundation

/// Read-only inspection of a store: its epochs, its state at any retained epoch or time, what changed
/// between epochs, one path's history, and a check of every checksum.
///
/// The inspector opens the store like ``JournalReader``: it takes no lock, writes nothing, and works
/// beside a live writer. It is what the `statejournal` tool prints.
public struct StoreInspector: Sendable {
    /// The reader the inspector reads through.
    public let reader: JournalReader

    /// Opens the store in `directory` for inspection.
    ///
    /// - Throws: ``JournalError/Code/notAStore`` when the directory holds no store.
    public init(at directory: URL, recovery: RecoveryMode = .stopAtDamage) throws {
        reader = try JournalReader(at: directory, recovery: recovery)
    }

    package init(reader: JournalReader) { self.reader = reader }

    /// Every retained epoch, oldest first.
    public func log() throws -> [EpochInfo] { try reader.history() }

    /// The latest retained epoch committed at or before `time`.
    ///
    /// Commit times are kept to the millisecond, so times are compared in whole milliseconds: an
    /// epoch's own ``EpochInfo/timestamp``, printed and parsed back, finds that epoch.
    ///
    /// - Throws: ``JournalError/Code/noSuchEpoch`` when every retained epoch is younger.
    public func epoch(at time: Date) throws -> UInt64 {
        func milliseconds(_ date: Date) -> Double { (date.timeIntervalSince1970 * 1000).rounded() }
        let limit = milliseconds(time)
        guard let epoch = try log().last(where: { milliseconds($0.timestamp) <= limit })?.epoch else {
            throw JournalError(
                .noSuchEpoch,
                """
                No retained epoch was committed at or before \
                \(time.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))); see the log for the \
                retained range.
                """
            )
        }
        return epoch
    }

    /// The state as of `epoch` (the latest when `nil`), keeping only paths under `prefix`.
    public func state(through epoch: UInt64? = nil, under prefix: RestorationPath? = nil) throws -> JournalState {
        var state = try reader.state(through: epoch)
        if let prefix { state.entries = state.entries.filter { $0.key.hasPrefix(prefix) } }
        return state
    }

    /// What changed between the states as of two epochs.
    public func difference(from old: UInt64, to new: UInt64) throws -> StateDifference {
        StateDifference(from: try reader.state(through: old).entries, to: try reader.state(through: new).entries)
    }

    /// Every retained epoch that wrote `path`, with what it wrote (`nil` for a removal). The oldest
    /// retained epoch, when it is a checkpoint, appears with the state the path had then.
    public func history(of path: RestorationPath) throws -> [(epoch: EpochInfo, state: [UInt8]?)] {
        var rows: [(epoch: EpochInfo, state: [UInt8]?)] = []
        var present = false
        try reader.forEachEpoch { info, changes in
            var written: [UInt8]??
            for change in changes {
                switch change {
                case .put(let changed, let bytes) where changed == path: written = .some(bytes)
                case .remove(let changed) where changed == path: written = .some(nil)
                case .removeAll where present: written = .some(nil)
                default: break
                }
            }
            if let state = written {
                if state != nil || present { rows.append((info, state)) }
                present = state != nil
            }
            return true
        }
        return rows
    }
}

/// The paths added, removed and changed between two states.
public struct StateDifference: Sendable, Hashable {
    /// Paths only the newer state has, with their states.
    public var added: [RestorationPath: [UInt8]]
    /// Paths only the older state has, with their states.
    public var removed: [RestorationPath: [UInt8]]
    /// Paths both have with different states: the old and the new.
    public var changed: [RestorationPath: (old: [UInt8], new: [UInt8])]

    /// Compares two states.
    public init(from old: [RestorationPath: [UInt8]], to new: [RestorationPath: [UInt8]]) {
        added = new.filter { old[$0.key] == nil }
        removed = old.filter { new[$0.key] == nil }
        changed = [:]
        for (path, state) in new {
            if let previous = old[path], previous != state { changed[path] = (previous, state) }
        }
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }

    /// Whether two differences name the same paths with the same values.
    public static func == (lhs: StateDifference, rhs: StateDifference) -> Bool {
        lhs.added == rhs.added && lhs.removed == rhs.removed
            && lhs.changed.keys == rhs.changed.keys
            && lhs.changed.allSatisfy {
                rhs.changed[$0.key]!.old == $0.value.old && rhs.changed[$0.key]!.new == $0.value.new
            }
    }

    /// Hashes the difference consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(added)
        hasher.combine(removed)
        hasher.combine(Set(changed.keys))
    }
}
