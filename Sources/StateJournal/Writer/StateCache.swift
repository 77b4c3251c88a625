/// The writer's copy of the latest state, bounded in bytes, kept to compress each new version of a
/// path against its previous one.
///
/// Invariant: when a path is cached, its value is exactly the path's current state in the journal.
/// A path whose new value does not fit is evicted rather than left stale.
struct StateCache {
    private(set) var values: [RestorationPath: [UInt8]] = [:]
    private(set) var bytes = 0
    let limit: Int

    init(limit: Int) { self.limit = limit }

    func value(for path: RestorationPath) -> [UInt8]? { values[path] }

    mutating func set(_ path: RestorationPath, _ value: [UInt8]) {
        remove(path)
        guard bytes + value.count <= limit else { return }
        values[path] = value
        bytes += value.count
    }

    mutating func remove(_ path: RestorationPath) {
        if let old = values.removeValue(forKey: path) { bytes -= old.count }
    }

    mutating func removeAll() {
        values.removeAll()
        bytes = 0
    }
}
