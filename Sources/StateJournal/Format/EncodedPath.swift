#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A restoration path in the form checkpoints and batches store it (a component count, then each
/// component as a length and UTF-8 bytes), in memory a ``StateArena`` owns.
///
/// The bytes must have been checked already (``PathReader`` does, as does encoding a
/// ``RestorationPath``): the varints are read without bounds checks.
///
/// Equality and hashing follow `RestorationPath`'s: components are `String`s, equal when
/// canonically equivalent. Byte-identical components are equal without building a `String`, and a
/// path whose components are ASCII hashes from its bytes.
struct EncodedPath {
    let start: UnsafeRawPointer
    let count: Int

    init(start: UnsafeRawPointer, count: Int) {
        self.start = start
        self.count = count
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: count) }

    @inline(__always)
    private static func varint(_ base: UnsafeRawPointer, _ offset: inout Int) -> Int {
        var value = 0
        var shift = 0
        while true {
            let byte = base.load(fromByteOffset: offset, as: UInt8.self)
            offset += 1
            value |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    /// The number of components.
    var depth: Int {
        var offset = 0
        return Self.varint(start, &offset)
    }

    /// Calls `body` with the bytes of each component, outermost first.
    @inline(__always)
    func forEachComponent(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var offset = 0
        let depth = Self.varint(start, &offset)
        for _ in 0..<depth {
            let length = Self.varint(start, &offset)
            try body(UnsafeRawBufferPointer(start: start + offset, count: length))
            offset += length
        }
    }

    /// Appends `path` in stored form to `builder`.
    static func append(_ path: RestorationPath, to builder: StateArenaBuilder) {
        builder.appendVarint(path.components.count)
        for component in path.components {
            var component = component
            component.withUTF8 { utf8 in
                builder.appendVarint(utf8.count)
                builder.append(UnsafeRawBufferPointer(utf8))
            }
        }
    }

    /// Calls `body` with `path` encoded as ``append(_:to:)`` encodes it, in memory of the stack (or
    /// the heap, for a path too large for it) that lives as long as the call.
    static func withEncoded<R>(_ path: RestorationPath, _ body: (EncodedPath) throws -> R) rethrows -> R {
        func varintSize(_ value: Int) -> Int { value < 0x80 ? 1 : (Int.bitWidth - value.leadingZeroBitCount + 6) / 7 }
        var size = varintSize(path.components.count)
        for component in path.components { size += varintSize(component.utf8.count) + component.utf8.count }
        return try withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { buffer in
            var offset = 0
            func write(_ value: Int) {
                var rest = value
                while rest >= 0x80 {
                    buffer[offset] = UInt8(truncatingIfNeeded: rest) | 0x80
                    offset += 1
                    rest >>= 7
                }
                buffer[offset] = UInt8(rest)
                offset += 1
            }
            write(path.components.count)
            for component in path.components {
                write(component.utf8.count)
                for byte in component.utf8 {
                    buffer[offset] = byte
                    offset += 1
                }
            }
            return try body(EncodedPath(start: UnsafeRawPointer(buffer.baseAddress!), count: size))
        }
    }

    /// Whether `path` precedes `other` in path order, `RestorationPath`'s `<`: the order of
    /// checkpoints and of ``StateTable``.
    static func precedes(_ path: EncodedPath, _ other: EncodedPath) -> Bool {
        compare(path, other) < 0
    }

    /// -1, 0 or 1 as `path` sorts before, is the same path as, or sorts after `other`.
    ///
    /// Component by component, a path before the paths it is a prefix of. Components compare as
    /// `String`s do: ASCII ones by their bytes, others through `String`, so that canonically
    /// equivalent spellings are the same component and descendants follow their parent whatever the
    /// spelling.
    static func compare(_ path: EncodedPath, _ other: EncodedPath) -> Int {
        if let order = orderAtFirstDifference(path, other) { return order }
        var left = 0
        var right = 0
        let leftDepth = varint(path.start, &left)
        let rightDepth = varint(other.start, &right)
        for _ in 0..<min(leftDepth, rightDepth) {
            let leftLength = varint(path.start, &left)
            let rightLength = varint(other.start, &right)
            let leftBytes = UnsafeRawBufferPointer(start: path.start + left, count: leftLength)
            let rightBytes = UnsafeRawBufferPointer(start: other.start + right, count: rightLength)
            left += leftLength
            right += rightLength
            if let offset = firstDifference(
                leftBytes.baseAddress!, rightBytes.baseAddress!, min(leftLength, rightLength))
            {
                if isASCII(leftBytes) && isASCII(rightBytes) { return leftBytes[offset] < rightBytes[offset] ? -1 : 1 }
                if let order = compareAsStrings(leftBytes, rightBytes) { return order }
                continue
            }
            if leftLength == rightLength { continue }
            guard isASCII(leftBytes) && isASCII(rightBytes) else {
                if let order = compareAsStrings(leftBytes, rightBytes) { return order }
                continue
            }
            return leftLength < rightLength ? -1 : 1
        }
        return leftDepth == rightDepth ? 0 : (leftDepth < rightDepth ? -1 : 1)
    }

    /// The order of two paths decided at the first byte in which their encodings differ, when it
    /// falls inside a component that both spell in ASCII with the same length; `nil` otherwise.
    ///
    /// Everything before that byte is the same in both: the depth, the components before it, and
    /// this component's length and first bytes. So the component decides, and ASCII components
    /// compare by their bytes. Neighbours in a checkpoint mostly differ that way (`Card-120418`
    /// and `Card-120419`), and one scan of the two encodings decides their order.
    @inline(__always)
    private static func orderAtFirstDifference(_ path: EncodedPath, _ other: EncodedPath) -> Int? {
        guard let difference = firstDifference(path.start, other.start, min(path.count, other.count)) else {
            return nil
        }
        var offset = 0
        let depth = varint(path.start, &offset)
        guard difference >= offset else { return nil }
        for _ in 0..<depth {
            let length = varint(path.start, &offset)
            // In the length: the components' lengths differ.
            guard difference >= offset else { return nil }
            guard difference < offset + length else {
                offset += length
                continue
            }
            let left = UnsafeRawBufferPointer(start: path.start + offset, count: length)
            let right = UnsafeRawBufferPointer(start: other.start + offset, count: length)
            guard isASCII(left) && isASCII(right) else { return nil }
            return left[difference - offset] < right[difference - offset] ? -1 : 1
        }
        return nil
    }

    /// Whether the two are the same path (`compare` would return 0), deciding from the bytes alone
    /// when they are identical, or differ and are all ASCII.
    static func same(_ path: EncodedPath, _ other: EncodedPath) -> Bool {
        if equal(path.bytes, other.bytes) { return true }
        if isASCII(path.bytes) && isASCII(other.bytes) { return false }
        return compare(path, other) == 0
    }

    /// -1 or 1 as one component sorts before or after the other as `String`s, or `nil` when they are
    /// canonically equivalent.
    private static func compareAsStrings(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Int? {
        let leftString = String(decoding: left, as: UTF8.self)
        let rightString = String(decoding: right, as: UTF8.self)
        if leftString == rightString { return nil }
        return leftString < rightString ? -1 : 1
    }

    /// Whether this is the same path as `path`, as `RestorationPath`'s `==` decides.
    func matches(_ path: RestorationPath) -> Bool {
        var offset = 0
        guard Self.varint(start, &offset) == path.components.count else { return false }
        for component in path.components {
            let length = Self.varint(start, &offset)
            let stored = UnsafeRawBufferPointer(start: start + offset, count: length)
            offset += length
            let identical = component.utf8.withContiguousStorageIfAvailable { utf8 in
                EncodedPath.equal(UnsafeRawBufferPointer(utf8), stored)
            }
            if identical == true { continue }
            if Self.isASCII(stored) && component.utf8.allSatisfy({ $0 < 0x80 }) { return false }
            guard String(decoding: stored, as: UTF8.self) == component else { return false }
        }
        return true
    }

    /// The same hash value as the equal `RestorationPath`'s `pathHash`: the component count, then
    /// each component as `String` hashes itself (ASCII bytes and a 0xFF terminator, gathered and
    /// fed together).
    var pathHashValue: Int {
        var hasher = Hasher()
        var offset = 0
        let depth = Self.varint(start, &offset)
        hasher.combine(depth)
        withUnsafeTemporaryAllocation(byteCount: 256, alignment: 1) { buffer in
            var used = 0
            for _ in 0..<depth {
                let length = Self.varint(start, &offset)
                let component = UnsafeRawBufferPointer(start: start + offset, count: length)
                offset += length
                if length < buffer.count - used, Self.isASCII(component) {
                    if length > 0 {
                        (buffer.baseAddress! + used).copyMemory(from: component.baseAddress!, byteCount: length)
                    }
                    buffer[used + length] = 0xFF
                    used += length + 1
                    continue
                }
                if used > 0 {
                    hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: buffer[..<used]))
                    used = 0
                }
                hasher.combine(String(decoding: component, as: UTF8.self))
            }
            if used > 0 { hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: buffer[..<used])) }
        }
        return hasher.finalize()
    }

    /// Whether every byte is below 0x80, eight at a time.
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        var high: UInt64 = 0
        let count = bytes.count
        while count - index >= 8 {
            high |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            high |= UInt64(bytes[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
}

/// Builds `RestorationPath`s from stored paths, reusing the string of a component that repeats the
/// one before it at the same depth (`Main`, `Window-1`, …), as ``PathReader`` does.
///
/// It remembers where the last components' bytes are: a decoder must not outlive the arenas of the
/// paths it decoded.
struct EncodedPathDecoder {
    private var last: [(bytes: UnsafeRawBufferPointer, string: String)] = []

    /// The path `path` encodes; `pathHash`, when given, must be its ``EncodedPath/pathHashValue``,
    /// which saves hashing the components.
    mutating func decode(_ path: EncodedPath, pathHash: Int? = nil) -> RestorationPath {
        var components: [String] = []
        components.reserveCapacity(path.depth)
        path.forEachComponent { bytes in
            let level = components.count
            if level < last.count, EncodedPath.equal(last[level].bytes, bytes) {
                components.append(last[level].string)
                return
            }
            let string = String(decoding: bytes, as: UTF8.self)
            if level < last.count {
                last[level] = (bytes, string)
            } else {
                last.append((bytes, string))
            }
            components.append(string)
        }
        guard let pathHash else { return RestorationPath(components) }
        return RestorationPath(components, pathHash: pathHash)
    }
}

extension EncodedPath {
    /// Whether two byte ranges hold the same bytes, compared eight at a time: components are short,
    /// and calling `memcmp` costs more than comparing them.
    @inline(__always)
    static func equal(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
        guard left.count == right.count else { return false }
        guard let leftStart = left.baseAddress, let rightStart = right.baseAddress else { return true }
        return firstDifference(leftStart, rightStart, left.count) == nil
    }

    /// The offset of the first byte that differs in the `count` bytes at `left` and `right`.
    @inline(__always)
    static func firstDifference(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer, _ count: Int) -> Int? {
        var offset = 0
        while count - offset >= 8 {
            let a = left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let b = right.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if a != b { return offset + (a ^ b).littleEndian.trailingZeroBitCount / 8 }
            offset += 8
        }
        while offset < count {
            if left.load(fromByteOffset: offset, as: UInt8.self) != right.load(fromByteOffset: offset, as: UInt8.self) {
                return offset
            }
            offset += 1
        }
        return nil
    }
}
