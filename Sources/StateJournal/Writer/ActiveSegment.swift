/// The segment the writer appends to, with the per-segment tables a reader rebuilds as it reads.
struct ActiveSegment {
    var descriptor: Int32
    var header: SegmentHeader
    /// Where the next record goes.
    var size: Int64
    /// How far the file is known to hold zeros written ahead of ``size`` (see
    /// ``Journal/preallocate(through:)``): at least ``size``.
    var allocated: Int64
    /// Path numbers defined in this segment, from 1.
    var pathIDs: [RestorationPath: UInt64]
    var pathOrder: [RestorationPath]
    /// The metadata of the segment's last commit, which the next commit may refer to.
    var lastMetadata: [String: String]?
    /// The timestamp of the segment's last commit, which the next commit is stored relative to.
    var lastTimestamp: UInt64?
    /// What the segment's last commit said, which a compact commit is written relative to.
    var previousCommit: CompactCommit.Previous?
    /// Whether the segment ends with its seal record.
    var isSealed = false

    init(
        descriptor: Int32, header: SegmentHeader, size: Int64, paths: [RestorationPath], lastMetadata: [String: String]?
    ) {
        self.descriptor = descriptor
        self.header = header
        self.size = size
        self.allocated = size
        self.pathOrder = paths
        self.pathIDs = Dictionary(uniqueKeysWithValues: paths.enumerated().map { ($1, UInt64($0 + 1)) })
        self.lastMetadata = lastMetadata
    }

    /// The path's number, defining it when new. Returns 0 for "defined in this batch's body".
    mutating func reference(for path: RestorationPath) -> (reference: UInt64, isNew: Bool) {
        if let id = pathIDs[path] { return (id, false) }
        pathOrder.append(path)
        pathIDs[path] = UInt64(pathOrder.count)
        return (0, true)
    }

    /// Makes room for `count` paths, so that defining them never grows the tables on a commit: with
    /// many paths a table's growth rehashes every path in it, which takes milliseconds.
    mutating func reserveCapacity(forPaths count: Int) {
        pathIDs.reserveCapacity(count)
        pathOrder.reserveCapacity(count)
    }

    /// Forgets paths defined after the first `count`, when an epoch is abandoned.
    mutating func rollBackPaths(to count: Int) {
        while pathOrder.count > count { pathIDs.removeValue(forKey: pathOrder.removeLast()) }
    }
}

/// A position in the journal: a segment and an offset in it.
struct JournalPosition: Comparable, Sendable {
    var segment: UInt64
    var offset: Int64

    static func < (lhs: JournalPosition, rhs: JournalPosition) -> Bool {
        (lhs.segment, lhs.offset) < (rhs.segment, rhs.offset)
    }
}
