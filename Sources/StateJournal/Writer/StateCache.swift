/// The writer's copy of the latest state, bounded in bytes, kept to compress each new version of a
/// path against its previous one.
///
/// Invariant: when a path is cached, its value is exactly the path's current state in the journal.
/// A path whose new value does not fit is evicted rather than left stale.
///
/// The bound counts what an entry costs in memory, not only its value's bytes: the value's
/// allocation, the path's, and the table's slot. Counting the values alone let a 64 MiB cache of
/// small states hold about 3.7 times that.
struct StateCache {
    /// The cached states: a table that grows a part at a time, so that caching the millionth path
    /// costs a commit what caching the first does.
    private(set) var values = PartitionedTable<RestorationPath, [UInt8]>()
    private(set) var bytes = 0
    let limit: Int

    init(limit: Int) { self.limit = limit }

    func value(for path: RestorationPath) -> [UInt8]? { values[path] }

    /// Caches `value` as the path's state, or only evicts the path's old one when it does not fit.
    ///
    /// - Returns: Whether `value` is cached.
    @discardableResult
    mutating func set(_ path: RestorationPath, _ value: [UInt8]) -> Bool {
        let cost = Self.cost(path, value)
        // One lookup in the common case: replace, then take the entry out again if it does not fit.
        if let old = values.updateValue(value, forKey: path) { bytes -= Self.cost(path, old) }
        guard bytes + cost <= limit else {
            values.removeValue(forKey: path)
            return false
        }
        bytes += cost
        return true
    }

    mutating func remove(_ path: RestorationPath) {
        if let old = values.removeValue(forKey: path) { bytes -= Self.cost(path, old) }
    }

    mutating func removeAll() {
        values.removeAll()
        bytes = 0
    }

    /// What an entry costs in memory, about: the value's array (a 32-byte header and its bytes, in
    /// a heap block of 16-byte steps with its 16-byte header), the path's array of components and
    /// any component too long to be stored inline, and the table's slot at its usual load.
    static func cost(_ path: RestorationPath, _ value: [UInt8]) -> Int {
        var cost = block(32 + value.count) + slot
        cost += block(32 + 16 * path.components.count)
        for component in path.components where component.utf8.count > 15 {
            cost += block(32 + component.utf8.count)
        }
        return cost
    }

    /// A slot of the table: the path (its components and its hash) and the value's reference, at a
    /// load between three eighths and three quarters.
    private static let slot = 48

    /// The heap block holding `bytes`: rounded up to 16, with a 16-byte header.
    private static func block(_ bytes: Int) -> Int { (bytes + 15) / 16 * 16 + 16 }
}
