import StateJournal

/// Where a preservation pass puts the entries it writes and the tombstones: an open epoch (the
/// synchronous pass streams into the journal), or a ``ChangeSnapshot`` that the journal's
/// background committer writes after the pass returns.
protocol EntrySink: AnyObject {
    /// Sets the state of `path`; throws ``JournalError/Code/limitExceeded`` for an entry over the
    /// journal's limits, which the pass reports as a problem.
    func put(_ path: RestorationPath, _ state: [UInt8]) throws
    /// Removes `path` (a tombstone).
    func remove(_ path: RestorationPath) throws
}

extension EpochWriter: EntrySink {}

/// The changes of a pass gathered in memory, checked against the journal's limits as they come, so
/// that an entry over them is reported by the pass and never fails the epoch later.
final class ChangeSnapshot: EntrySink {
    private(set) var changes: [JournalChange] = []

    func put(_ path: RestorationPath, _ state: [UInt8]) throws {
        let change = JournalChange.put(path, state)
        try change.validate()
        changes.append(change)
    }

    func remove(_ path: RestorationPath) throws {
        let change = JournalChange.remove(path)
        try change.validate()
        changes.append(change)
    }

    /// Clears the store before the pass's entries: the first change of a catch-up pass.
    func removeAll() {
        changes.append(.removeAll)
    }
}
