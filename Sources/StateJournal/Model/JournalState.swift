/// The state of a store as of one epoch: every live path with its latest state.
///
/// A state is a sequence of its paths and their state bytes, in path order (`RestorationPath`'s
/// `<`: component by component, so that a parent comes immediately before its descendants). It
/// keeps paths and states in their stored form, in a few large blocks, and builds a
/// `RestorationPath` or a state's array only when one is asked for. Look a path up with
/// ``subscript(_:)``, walk every entry with ``forEachEntry(_:)`` or `for (path, state) in state`,
/// or take a dictionary with ``entries``.
public struct JournalState: Sendable, Sequence {
    /// The epoch the state is as of, or `nil` when no epoch was ever committed.
    public var epoch: EpochInfo?
    /// Damage met on the way, or `nil` when everything read was intact.
    public var damage: DamageReport?
    /// Bytes after the last commit of the journal that belong to no committed epoch: an epoch being
    /// written, or one a crash cut short. They are not damage; a writer cuts them off when it opens.
    public var uncommittedTailBytes: Int64
    /// The end of the journal that a power cut left only partly on the disk, beyond a gap where
    /// unsynced bytes did not reach it, or `nil`. Not damage and not replayed; a writer cuts it off
    /// when it opens (``RecoveryReport/unsyncedTail``).
    public var unsyncedTail: UnsyncedTail?
    var table: StateTable

    /// Creates a state.
    ///
    /// - Precondition: Each state is smaller than 2 GiB (a journal stores at most
    ///   ``JournalLimits/maximumStateSize`` bytes per path).
    public init(
        epoch: EpochInfo?, entries: [RestorationPath: [UInt8]], damage: DamageReport? = nil,
        uncommittedTailBytes: Int64 = 0
    ) {
        self.init(epoch: epoch, table: StateTable(entries), damage: damage, uncommittedTailBytes: uncommittedTailBytes)
    }

    init(
        epoch: EpochInfo?, table: StateTable, damage: DamageReport?, uncommittedTailBytes: Int64,
        unsyncedTail: UnsyncedTail? = nil
    ) {
        self.epoch = epoch
        self.table = table
        self.damage = damage
        self.uncommittedTailBytes = uncommittedTailBytes
        self.unsyncedTail = unsyncedTail
    }

    /// The number of live paths.
    public var count: Int { table.count }

    /// Whether no path is live.
    public var isEmpty: Bool { table.count == 0 }

    /// The number of live paths: the sequence's exact length.
    public var underestimatedCount: Int { table.count }

    /// The state bytes of `path`, or `nil` when the path is not live.
    ///
    /// - Complexity: O(log *n*) for the first lookups in a state (a binary search); once they
    ///   outnumber a sixteenth of its paths, one of them builds a hash index, O(*n*), and the rest are
    ///   O(1) on average.
    public subscript(path: RestorationPath) -> [UInt8]? {
        table.withState(of: path) { Array($0) }
    }

    /// Whether `path` is live.
    public func contains(_ path: RestorationPath) -> Bool {
        table.slotNumber(of: path) != nil
    }

    /// Calls `body` with the state bytes of `path`, without copying them, or returns `nil` when
    /// the path is not live. The bytes are valid only during the call.
    public func withState<Result>(
        of path: RestorationPath, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result? {
        try table.withState(of: path, body)
    }

    /// Every live path, in path order.
    public var paths: [RestorationPath] {
        var decoder = EncodedPathDecoder()
        return table.withSlots { slots in slots.map { decoder.decode($0.encodedPath) } }
    }

    /// Calls `body` with each live path and its state bytes, in path order, without copying the
    /// states: the bytes are valid only during the call.
    public func forEachEntry(_ body: (RestorationPath, UnsafeRawBufferPointer) throws -> Void) rethrows {
        var decoder = EncodedPathDecoder()
        // Replay looked the paths up by hash: their hashes are known, and need not be computed again.
        let hashes = table.builtIndex
        try table.withSlots { slots in
            for number in slots.indices {
                let slot = slots[number]
                try body(decoder.decode(slot.encodedPath, pathHash: hashes?.hash(of: number)), slot.state)
            }
        }
    }

    /// Every live path and its state bytes, as a dictionary.
    ///
    /// Getting it builds the dictionary, O(*n*): prefer ``subscript(_:)`` and iteration for large
    /// states. Setting it replaces the state's entries.
    public var entries: [RestorationPath: [UInt8]] {
        get {
            var dictionary: [RestorationPath: [UInt8]] = [:]
            dictionary.reserveCapacity(count)
            forEachEntry { dictionary[$0] = Array($1) }
            return dictionary
        }
        set { table = StateTable(newValue) }
    }

    /// Walks a state's entries in path order.
    public struct Iterator: IteratorProtocol {
        private let owner: AnyObject
        private let slots: [StateTable.Slot]
        private var position = 0
        private var decoder = EncodedPathDecoder()

        fileprivate init(_ table: StateTable) {
            owner = table.owner
            slots = table.slots
        }

        /// The next path and its state bytes, or `nil` after the last.
        public mutating func next() -> (path: RestorationPath, state: [UInt8])? {
            guard position < slots.count else { return nil }
            defer { position += 1 }
            let slot = slots[position]
            return withExtendedLifetime(owner) { (decoder.decode(slot.encodedPath), Array(slot.state)) }
        }
    }

    /// An iterator over the entries, in path order.
    public func makeIterator() -> Iterator { Iterator(table) }
}

extension StateTable {
    /// A table holding the entries of `dictionary`.
    init(_ dictionary: [RestorationPath: [UInt8]]) {
        let (arena, slots) = Self.encode(dictionary.lazy.map { ($0.key, $0.value) })
        // A dictionary's keys are distinct paths, so the table cannot find a repeat.
        self = (try? StateTable(arenas: [arena], slots: slots)) ?? StateTable()
    }

    /// Encodes `entries` into one arena, in their order, and returns it with a slot for each.
    static func encode(_ entries: some Sequence<(RestorationPath, [UInt8])>) -> (StateArena, [Slot]) {
        let builder = StateArenaBuilder()
        var offsets: [(path: Int, pathCount: Int, value: Int, valueCount: Int)] = []
        for (path, state) in entries {
            precondition(
                state.count <= Int32.max,
                "A state of \(state.count) bytes at \(path) is larger than a JournalState holds (2 GiB).")
            let pathOffset = builder.count
            EncodedPath.append(path, to: builder)
            let pathCount = builder.count - pathOffset
            offsets.append((pathOffset, pathCount, state.withUnsafeBytes { builder.append($0) }, state.count))
        }
        let arena = builder.finish()
        let slots = offsets.map {
            Slot(
                path: UnsafeRawPointer(arena.base + $0.path), value: UnsafeRawPointer(arena.base + $0.value),
                pathCount: Int32($0.pathCount), valueCount: Int32($0.valueCount))
        }
        return (arena, slots)
    }
}
