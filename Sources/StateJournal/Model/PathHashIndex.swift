/// An open-addressing hash index from paths to their numbers in a table the caller keeps (a state's
/// slots, a segment's defined paths), at most half full. Numbers are given out in order: 0, 1, 2…
///
/// Each bucket holds the high 32 bits of the path's hash and its number plus one (0 when empty), so
/// that most probes that miss compare no path; the full hashes are kept by number for growing. The
/// hash must be `RestorationPath`'s `pathHash` or ``EncodedPath/pathHashValue``, which agree.
struct PathHashIndex: Sendable {
    private var buckets: [UInt64]
    private var hashes: [Int] = []

    /// The number of paths in the index.
    var count: Int { hashes.count }

    /// The hash the path numbered `number` was added under.
    func hash(of number: Int) -> Int { hashes[number] }

    /// An empty index with room for `capacity` paths.
    init(capacity: Int = 0) {
        var size = 16
        while size < 2 * capacity { size *= 2 }
        buckets = [UInt64](repeating: 0, count: size)
        hashes.reserveCapacity(capacity)
    }

    /// An index of `count` distinct paths, numbered 0 to `count` - 1, whose hashes `hash` gives.
    init(count: Int, hash: (Int) -> Int) {
        self.init(capacity: count)
        for number in 0..<count {
            let value = hash(number)
            hashes.append(value)
            place(number, hash: value)
        }
    }

    /// The number of the path with `hash` that `isMatch` accepts, or `nil`.
    func find(hash: Int, where isMatch: (Int) -> Bool) -> Int? {
        probe(hash: hash, isMatch).found
    }

    /// The number in the bucket where a probe for `hash` starts when its tag matches, or -1: a
    /// likely answer of ``find(hash:where:)``, read with one memory load, so that callers can touch
    /// what a batch of lookups will read before making them.
    func likelyNumber(hash: Int) -> Int {
        let entry = buckets[hash & (buckets.count - 1)]
        return entry & 0xFFFF_FFFF_0000_0000 == Self.tag(hash) ? Int(entry & 0xFFFF_FFFF) - 1 : -1
    }

    /// Adds the next number, ``count``, under `hash`, unless a path that `isMatch` accepts is there
    /// already: returns that path's number then, or `nil` when it added the new one.
    mutating func insert(hash: Int, unlessFound isMatch: (Int) -> Bool) -> Int? {
        if 2 * (count + 1) > buckets.count {
            buckets = [UInt64](repeating: 0, count: buckets.count * 2)
            for (number, value) in hashes.enumerated() { place(number, hash: value) }
        }
        let (found, free) = probe(hash: hash, isMatch)
        if let found { return found }
        buckets[free] = Self.tag(hash) | UInt64(count + 1)
        hashes.append(hash)
        return nil
    }

    /// Walks the buckets from where `hash` starts: the number of the first path `isMatch` accepts,
    /// or else the first free bucket.
    private func probe(hash: Int, _ isMatch: (Int) -> Bool) -> (found: Int?, free: Int) {
        let mask = buckets.count - 1
        let tag = Self.tag(hash)
        var bucket = hash & mask
        while buckets[bucket] != 0 {
            let entry = buckets[bucket]
            if entry & 0xFFFF_FFFF_0000_0000 == tag, isMatch(Int(entry & 0xFFFF_FFFF) - 1) {
                return (Int(entry & 0xFFFF_FFFF) - 1, bucket)
            }
            bucket = (bucket + 1) & mask
        }
        return (nil, bucket)
    }

    /// Puts `number` in the first free bucket from where `hash` starts.
    private mutating func place(_ number: Int, hash: Int) {
        buckets[probe(hash: hash) { _ in false }.free] = Self.tag(hash) | UInt64(number + 1)
    }

    private static func tag(_ hash: Int) -> UInt64 { UInt64(truncatingIfNeeded: hash) & 0xFFFF_FFFF_0000_0000 }
}
