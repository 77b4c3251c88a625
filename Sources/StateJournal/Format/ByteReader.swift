/// Why a structure read from disk was rejected.
struct FormatViolation: Error, Sendable, CustomStringConvertible {
    var reason: String
    /// The format version of a structure whose checksum holds but whose version this library does
    /// not read: written by another release, which is not damage.
    var unsupportedVersion: UInt16?
    init(_ reason: String) { self.reason = reason }
    var description: String { reason }

    /// An intact `structure` (a manifest, a segment, a checkpoint) written in format `version`.
    static func unsupported(_ structure: String, version: UInt16) -> FormatViolation {
        var violation = FormatViolation(
            "\(structure) format version \(version) is not supported (this library reads \(FormatVersion.readableDescription))"
        )
        violation.unsupportedVersion = version
        return violation
    }
}

/// Reads what ``ByteWriter`` wrote from a window of bytes, checking every length against what is
/// left, so that no corrupt length can read past the window or cause a large allocation.
struct ByteReader {
    let base: UnsafeRawBufferPointer
    private(set) var position: Int

    init(_ base: UnsafeRawBufferPointer, position: Int = 0) {
        self.base = base
        self.position = position
    }

    var remaining: Int { base.count - position }
    var isAtEnd: Bool { position == base.count }

    @inline(__always)
    mutating func u8() throws(FormatViolation) -> UInt8 {
        guard remaining >= 1 else { throw FormatViolation("unexpected end of record") }
        defer { position += 1 }
        return base[position]
    }

    mutating func u16() throws(FormatViolation) -> UInt16 {
        UInt16(try u8()) | UInt16(try u8()) << 8
    }

    mutating func u32() throws(FormatViolation) -> UInt32 {
        guard remaining >= 4 else { throw FormatViolation("unexpected end of record") }
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(base[position + index]) << UInt32(8 * index) }
        position += 4
        return value
    }

    mutating func u64() throws(FormatViolation) -> UInt64 {
        guard remaining >= 8 else { throw FormatViolation("unexpected end of record") }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(base[position + index]) << UInt64(8 * index) }
        position += 8
        return value
    }

    mutating func varint() throws(FormatViolation) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try u8()
            if shift == 63 && byte > 1 { throw FormatViolation("varint overflows 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            if shift > 63 { throw FormatViolation("varint longer than 10 bytes") }
        }
    }

    /// A varint that must not exceed `limit`, as an `Int`. `what` names the field in the error; it is
    /// only evaluated then, since this runs for every length of every entry read.
    @inline(__always)
    mutating func count(atMost limit: Int, _ what: @autoclosure () -> String) throws(FormatViolation) -> Int {
        // One-byte varints are the common case: lengths of path components and of small states.
        if position < base.count, base[position] < 0x80 {
            let value = Int(base[position])
            guard value <= limit else { throw FormatViolation("\(what()) \(value) exceeds the limit \(limit)") }
            position += 1
            return value
        }
        let value = try varint()
        guard value <= UInt64(limit) else { throw FormatViolation("\(what()) \(value) exceeds the limit \(limit)") }
        return Int(value)
    }

    @inline(__always)
    mutating func bytes(_ count: Int) throws(FormatViolation) -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw FormatViolation("length \(count) runs past the record") }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: base[position..<position + count])
    }

    mutating func string(atMost limit: Int, _ what: @autoclosure () -> String) throws(FormatViolation) -> String {
        let length = try count(atMost: limit, "\(what()) length")
        let raw = try bytes(length)
        guard let string = Self.validatedString(raw) else {
            throw FormatViolation("\(what()) is not valid UTF-8")
        }
        return string
    }

    /// The string `bytes` encode, or `nil` when they are not valid UTF-8: the same answer as
    /// `String(validating:as:)`, sooner for ASCII, which every byte below 0x80 is and which
    /// restoration paths almost always are.
    static func validatedString(_ bytes: UnsafeRawBufferPointer) -> String? {
        if EncodedPath.isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }
}
