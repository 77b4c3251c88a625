/// Appends little-endian integers, LEB128 varints and length-prefixed strings to a byte array.
struct ByteWriter {
    var bytes: [UInt8]

    init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func u32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func varint(_ value: Int) { varint(UInt64(value)) }

    mutating func lengthPrefixed(_ string: String) {
        varint(string.utf8.count)
        bytes.append(contentsOf: string.utf8)
    }

    mutating func raw(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    mutating func raw(_ other: UnsafeRawBufferPointer) { bytes.append(contentsOf: other) }
}

/// ZigZag encoding of signed values for varints, as protocol buffers' `sint64`: small magnitudes,
/// negative or not, take few bytes. Commit records store their timestamps as such deltas.
enum ZigZag {
    /// `value` as an unsigned number: 0, -1, 1, -2… become 0, 1, 2, 3…
    static func encode(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    /// The signed value `encoded` stands for.
    static func decode(_ encoded: UInt64) -> Int64 { Int64(bitPattern: encoded >> 1) ^ -Int64(bitPattern: encoded & 1) }
}
