/// A hash table whose growth never rehashes more than one small part of it: a writer's per-path
/// tables use it, so that a commit that adds the table's millionth path takes as long as one that
/// adds its tenth.
///
/// A `Dictionary` grows by doubling: the insert that finds it full moves every entry into a table
/// twice the size, which at a million entries takes tens of milliseconds, and the commit that made
/// that insert waits for it. This table is split into parts (extendible hashing): a directory of
/// 2^`depth` slots, indexed by the low bits of a key's hash, names each key's part, and several
/// slots may name one part. A part that reaches ``partLimit`` entries splits in two by the next bit
/// of the hash, which moves about half of that part's entries and, when the part was named by one
/// slot only, doubles the directory (some 32,000 integers at ten million entries). So the most
/// an insert ever waits for is one part's split and one part's own doubling, whatever the count.
///
/// Lookups cost one directory read beside the part's own lookup: the directory is indexed by the
/// key's ``PartitionedKey/partitionHash``, which a path keeps computed.
struct PartitionedTable<Key: PartitionedKey, Value> {
    /// How many entries a part holds before it splits.
    static var partLimit: Int { 1024 }

    fileprivate struct Part {
        /// How many low bits of the hash all of this part's keys share.
        var depth: Int
        /// Those bits.
        var pattern: Int
        /// How many entries the part holds before it splits: ``partLimit``, doubled each time a split
        /// could not tell its keys apart (keys whose hashes share more bits than usual).
        var limit = PartitionedTable.partLimit
        var entries: [Key: Value]
    }

    /// The part of each value of the hash's low `depth` bits.
    private var directory: [Int] = [0]
    private var depth = 0
    private var parts = [Part(depth: 0, pattern: 0, entries: [:])]
    /// The number of entries.
    private(set) var count = 0

    /// An empty table.
    init() {}

    /// An empty table with room for `capacity` entries, so that inserting that many splits no part.
    init(capacity: Int) {
        var depth = 0
        while capacity > (Self.partLimit * 3 / 4) << depth { depth += 1 }
        self.depth = depth
        directory = Array(0..<(1 << depth))
        let perPart = capacity >> depth
        parts = (0..<(1 << depth)).map {
            Part(depth: depth, pattern: $0, entries: Dictionary(minimumCapacity: perPart))
        }
    }

    var isEmpty: Bool { count == 0 }

    /// The number of parts, and the largest a part is allowed to get before it splits: what bounds
    /// the work of one insert.
    var shape: (parts: Int, directory: Int, largestLimit: Int) {
        (parts.count, directory.count, parts.map(\.limit).max() ?? 0)
    }

    private func partIndex(_ key: Key) -> Int { directory[key.partitionHash & (directory.count - 1)] }

    /// The value of `key`, or `nil`; setting `nil` removes the key.
    subscript(key: Key) -> Value? {
        get { parts[partIndex(key)].entries[key] }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Sets `value` as the value of `key`; returns the value it replaced, if any.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        let index = partIndex(key)
        let old = parts[index].entries.updateValue(value, forKey: key)
        if old == nil {
            count += 1
            if parts[index].entries.count >= parts[index].limit { split(index) }
        }
        return old
    }

    /// The value of `key`; when it has none, inserts `value` first.
    ///
    /// - Returns: The value, and whether it was inserted: one lookup where a read and then a write
    ///   take two.
    mutating func value(forKey key: Key, inserting value: @autoclosure () -> Value) -> (Value, inserted: Bool) {
        let index = partIndex(key)
        let before = parts[index].entries.count
        let found = Self.read(&parts[index].entries[key, default: value()])
        guard parts[index].entries.count != before else { return (found, false) }
        count += 1
        if parts[index].entries.count >= parts[index].limit { split(index) }
        return (found, true)
    }

    private static func read(_ value: inout Value) -> Value { value }

    /// Removes `key`; returns its value, if it had one.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        let old = parts[partIndex(key)].entries.removeValue(forKey: key)
        if old != nil { count -= 1 }
        return old
    }

    /// Removes every entry, and gives back the table's memory.
    mutating func removeAll() {
        self = Self()
    }

    /// Splits part `index` in two by the next bit of the hash: the keys with that bit set move to
    /// a new part. Doubles the directory first when no bit is left to tell them apart. A split that
    /// would leave one side empty is not made: the part's limit doubles instead, so that keys whose
    /// hashes agree on many bits cannot make the directory grow without bound.
    private mutating func split(_ index: Int) {
        let part = parts[index]
        let bit = 1 << part.depth
        var moving: [Key: Value] = Dictionary(minimumCapacity: part.entries.count / 2 + 1)
        var staying: [Key: Value] = Dictionary(minimumCapacity: part.entries.count / 2 + 1)
        for (key, value) in part.entries {
            if key.partitionHash & bit != 0 {
                moving[key] = value
            } else {
                staying[key] = value
            }
        }
        guard !moving.isEmpty && !staying.isEmpty && part.depth < Int.bitWidth - 2 else {
            parts[index].limit *= 2
            return
        }
        if part.depth == depth {
            directory += directory
            depth += 1
        }
        let newIndex = parts.count
        parts[index] = Part(depth: part.depth + 1, pattern: part.pattern, entries: staying)
        parts.append(Part(depth: part.depth + 1, pattern: part.pattern | bit, entries: moving))
        // The directory slots whose low bits are the new part's pattern name it now.
        var slot = part.pattern | bit
        while slot < directory.count {
            directory[slot] = newIndex
            slot += bit << 1
        }
    }
}

/// A key of a ``PartitionedTable``: hashable, with a hash of its own whose low bits pick its part.
/// It must be equal for equal keys, and ought to be as well spread as `hashValue`.
protocol PartitionedKey: Hashable {
    var partitionHash: Int { get }
}

extension RestorationPath: PartitionedKey {
    /// The path's hash, computed once when the path was made.
    var partitionHash: Int { pathHash }
}

extension PartitionedTable: Sendable where Key: Sendable, Value: Sendable {}
extension PartitionedTable.Part: Sendable where Key: Sendable, Value: Sendable {}
