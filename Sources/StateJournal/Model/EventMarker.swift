/// The metadata of an epoch that marks an event in a store's history and changes no entry, such
/// as the start of a replication term on a promoted store.
///
/// StateJournal's own tools commit such epochs; `log`, `show` and `timeline` name the event, and the
/// restoration layer passes over them when it looks for the state to restore. An epoch is a marker
/// only when it carries ``EventMarkerKey/event`` and wrote no entry (``EpochInfo/isEventMarker``).
/// A marker's other metadata is a copy of the epoch before it, so that once compaction has folded
/// that epoch, the marker still tells what wrote the state it holds.
public enum EventMarkerKey: Sendable {
    /// The event the epoch marks: one of ``EventMarkerKind``'s raw values, or a later one.
    public static let event = "statejournal.event"
    /// On a ``EventMarkerKind/replicaTermBegan`` marker: the replication term the store ships in
    /// from this epoch on, in decimal.
    public static let term = "statejournal.term"
    /// On a ``EventMarkerKind/replicaTermBegan`` marker: the term before it, in decimal (`0` when
    /// the replica had none).
    public static let previousTerm = "statejournal.previousTerm"
    /// On a ``EventMarkerKind/replicaTermBegan`` marker: the last epoch the replica held when the
    /// term began, in decimal, or absent when it held none. What the previous primary committed after
    /// it is not in this store: the failover's loss window begins there.
    public static let continuesFrom = "statejournal.continuesFrom"
    /// On a ``EventMarkerKind/replicaTermBegan`` marker: `1` when the lease was taken over from a
    /// holder that had not given it up and whose lease had not expired (the operator's decision),
    /// `0` otherwise.
    public static let takenOver = "statejournal.takenOver"
}

/// The events a marker epoch can name, as ``EventMarkerKey/event`` holds them.
public enum EventMarkerKind: String, Sendable, Hashable, CaseIterable {
    /// The store became the primary of its replica and began a new replication term: the epochs
    /// before the marker are the replica's as the previous primary shipped them, the epochs after it
    /// are this store's.
    case replicaTermBegan
}

extension EpochInfo {
    /// Whether the epoch only marks an event: it carries ``EventMarkerKey/event`` in its metadata
    /// and wrote no entry. An epoch that wrote entries is never a marker, whatever its metadata says.
    public var isEventMarker: Bool {
        entryCount == 0 && metadata[EventMarkerKey.event] != nil
    }

    /// The event the epoch marks, when it is a marker of a known kind.
    public var eventMarkerKind: EventMarkerKind? {
        guard isEventMarker else { return nil }
        return metadata[EventMarkerKey.event].flatMap(EventMarkerKind.init(rawValue:))
    }
}
