/// The segment the writer appends to, with the per-segment tables a reader rebuilds as it reads.
struct ActiveSegment {
    var descriptor: Int32
    var header: SegmentHeader
    /// Where the next record goes.
    var size: Int64
    /// How far the file is known to hold zeros written ahead of ``size`` (see
    /// ``Journal/preallocate(through:)``): at least ``size``.
    var allocated: Int64
    /// Path numbers defined in this segment, from 1: a table that grows a part at a time, so that
    /// defining the segment's millionth path costs what defining its first does.
    var pathIDs: PartitionedTable<RestorationPath, UInt64>
    /// The paths defined in this segment, in the order of definition.
    var pathOrder: DefinitionOrder
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
        self.pathOrder = DefinitionOrder(paths)
        self.pathIDs = PartitionedTable(capacity: paths.count)
        for (index, path) in paths.enumerated() { pathIDs[path] = UInt64(index + 1) }
        self.lastMetadata = lastMetadata
    }

    /// The path's number, defining it when new. Returns 0 for "defined in this batch's body".
    mutating func reference(for path: RestorationPath) -> (reference: UInt64, isNew: Bool) {
        let (id, inserted) = pathIDs.value(forKey: path, inserting: UInt64(pathOrder.count + 1))
        guard inserted else { return (id, false) }
        pathOrder.append(path)
        return (0, true)
    }

    /// Forgets paths defined after the first `count`, when an epoch is abandoned.
    mutating func rollBackPaths(to count: Int) {
        while pathOrder.count > count { pathIDs.removeValue(forKey: pathOrder.removeLast()) }
    }
}

/// Paths in the order a segment defined them, in chunks of a fixed size: appending the millionth
/// copies no path, where an array's growth copies every one.
struct DefinitionOrder {
    private static let chunkSize = 4096
    private var chunks: [[RestorationPath]] = []
    /// The number of paths.
    private(set) var count = 0

    init(_ paths: [RestorationPath]) {
        for path in paths { append(path) }
    }

    mutating func append(_ path: RestorationPath) {
        if count % Self.chunkSize == 0 {
            var chunk: [RestorationPath] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(path)
        count += 1
    }

    /// The paths, first defined first.
    var paths: FlattenSequence<[[RestorationPath]]> { chunks.joined() }

    /// Removes the last path and returns it; the order must not be empty.
    mutating func removeLast() -> RestorationPath {
        let path = chunks[chunks.count - 1].removeLast()
        if chunks[chunks.count - 1].isEmpty { chunks.removeLast() }
        count -= 1
        return path
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
