import StateJournal

/// The values a coder holds, by key, with a dictionary's semantics: keys compare as `String`s do
/// (canonically equivalent spellings are one key, which keeps its first spelling), and storing a
/// key again replaces its value.
///
/// The coder of an object being encoded holds a handful of keys, each stored once: a list in the
/// order they were stored, searched from the start, costs less than hashing every key into a
/// dictionary, and the entry encoding sorts it once when it writes it. Past ``listLimit`` keys, and
/// when it is made from a decoded entry (whose keys are looked up, not written), it is a dictionary.
struct CoderValues {
    struct Pair {
        let key: String
        var value: RestorableValue
        /// What orders and tells keys apart without reading them again (``KeyShape``).
        let shape: KeyShape
    }

    /// A key's first eight UTF-8 bytes as a big-endian number (zero-padded), its UTF-8 length, and
    /// whether it is ASCII: enough to order most keys and to tell most keys apart with integer
    /// comparisons.
    struct KeyShape {
        let prefix: UInt64
        let length: Int
        let isASCII: Bool

        init(_ key: String) {
            var key = key
            (prefix, length, isASCII) = key.withUTF8 { bytes in
                var prefix: UInt64 = 0
                var isASCII = true
                for index in 0..<8 { prefix = prefix << 8 | (index < bytes.count ? UInt64(bytes[index]) : 0) }
                for byte in bytes where byte >= 0x80 {
                    isASCII = false
                    break
                }
                return (prefix, bytes.count, isASCII)
            }
        }

        /// Whether keys of these shapes may be equal as `String`s: ASCII keys only when their bytes
        /// are; other keys may be canonically equivalent whatever their bytes.
        func mayEqual(_ other: KeyShape) -> Bool {
            guard isASCII && other.isASCII else { return true }
            return prefix == other.prefix && length == other.length
        }
    }

    /// The keys a list holds before it becomes a dictionary.
    static let listLimit = 16

    /// The values while they are a list, in the order their keys were first stored.
    private var pairs: [Pair] = []
    /// The values once they are a dictionary; `pairs` is then empty.
    private var dictionary: [String: RestorableValue]?

    init() {}

    /// Values looked up by key: a dictionary, unless there are none.
    init(_ values: [String: RestorableValue]) {
        if !values.isEmpty { dictionary = values }
    }

    var count: Int { dictionary?.count ?? pairs.count }

    /// The keys, in no particular order.
    var keys: [String] { dictionary.map { Array($0.keys) } ?? pairs.map(\.key) }

    /// The values as a dictionary.
    var asDictionary: [String: RestorableValue] {
        if let dictionary { return dictionary }
        var result: [String: RestorableValue] = [:]
        result.reserveCapacity(pairs.count)
        for pair in pairs { result[pair.key] = pair.value }
        return result
    }

    mutating func reserveCapacity(_ capacity: Int) {
        if dictionary == nil { pairs.reserveCapacity(Swift.min(capacity, Self.listLimit)) }
    }

    /// The index of the pair whose key is `key`, of shape `shape`.
    private func index(of key: String, shape: KeyShape) -> Int? {
        pairs.withUnsafeBufferPointer { pairs in
            for index in pairs.indices where pairs[index].shape.mayEqual(shape) {
                // Two ASCII keys of at most eight bytes with equal shapes have equal bytes.
                let known = shape.isASCII && pairs[index].shape.isASCII && shape.length <= 8
                if known || pairs[index].key == key { return index }
            }
            return nil
        }
    }

    subscript(key: String) -> RestorableValue? {
        get {
            if let dictionary { return dictionary[key] }
            return index(of: key, shape: KeyShape(key)).map { pairs[$0].value }
        }
        set {
            if dictionary != nil {
                dictionary![key] = newValue
                return
            }
            let shape = KeyShape(key)
            if let index = index(of: key, shape: shape) {
                if let newValue { pairs[index].value = newValue } else { pairs.remove(at: index) }
                return
            }
            guard let newValue else { return }
            if pairs.count < Self.listLimit {
                pairs.append(Pair(key: key, value: newValue, shape: shape))
            } else {
                var values = asDictionary
                values[key] = newValue
                dictionary = values
                pairs = []
            }
        }
    }

    /// Calls `body` with each key and its value, keys in ascending UTF-8 byte order: the order the
    /// entry encoding writes them in.
    func forEachInKeyOrder(_ body: (String, RestorableValue) -> Void) {
        if let dictionary {
            for key in dictionary.keys.sorted(by: Self.precedes) { body(key, dictionary[key]!) }
            return
        }
        pairs.withUnsafeBufferPointer { pairs in
            withUnsafeTemporaryAllocation(of: (shape: KeyShape, index: Int).self, capacity: pairs.count) { order in
                // An insertion sort of the shapes, which are plain numbers: a list holds at most
                // `listLimit` keys.
                for index in 0..<pairs.count {
                    let next = (shape: pairs[index].shape, index: index)
                    var slot = index
                    while slot > 0 && Self.precedes(next, order[slot - 1], in: pairs) {
                        order[slot] = order[slot - 1]
                        slot -= 1
                    }
                    order[slot] = next
                }
                for item in order { body(pairs[item.index].key, pairs[item.index].value) }
            }
        }
    }

    /// Whether the key of `first` comes before the key of `second` in UTF-8 byte order.
    private static func precedes(
        _ first: (shape: KeyShape, index: Int), _ second: (shape: KeyShape, index: Int),
        in pairs: UnsafeBufferPointer<Pair>
    ) -> Bool {
        if first.shape.prefix != second.shape.prefix { return first.shape.prefix < second.shape.prefix }
        // Equal first eight bytes, zero-padded: a key of at most eight bytes is a prefix of the other.
        if first.shape.length <= 8 || second.shape.length <= 8 { return first.shape.length < second.shape.length }
        return precedes(pairs[first.index].key, pairs[second.index].key)
    }

    /// Whether `first` comes before `second` in UTF-8 byte order.
    static func precedes(_ first: String, _ second: String) -> Bool {
        var first = first
        var second = second
        return first.withUTF8 { left in
            second.withUTF8 { right in
                let common = Swift.min(left.count, right.count)
                var index = 0
                while index < common {
                    if left[index] != right[index] { return left[index] < right[index] }
                    index += 1
                }
                return left.count < right.count
            }
        }
    }
}
