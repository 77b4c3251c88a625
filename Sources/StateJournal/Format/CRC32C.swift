import CCRC32C

/// CRC-32C (Castagnoli), the checksum of every record, header and manifest.
///
/// With the processor's CRC-32C instruction where there is one (SSE 4.2 on x86-64, the CRC
/// extension on 64-bit ARM), several times faster than the table; otherwise table-driven, eight
/// bytes at a time ("slicing by 8").
enum CRC32C {
    /// Whether ``checksum(_:continuing:)`` uses the processor's instruction.
    static let usesHardware = sj_crc32c_hardware_available()

    private static let polynomial: UInt32 = 0x82F6_3B78

    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ polynomial : crc >> 1 }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for slice in 1..<8 {
                crc = tables[Int(crc & 0xFF)] ^ (crc >> 8)
                tables[slice * 256 + byte] = crc
            }
        }
        return tables
    }()

    /// The checksum of `bytes`, continuing from `crc` (the checksum of what came before).
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        if usesHardware, let start = bytes.baseAddress {
            return ~sj_crc32c_hardware(~crc, start, bytes.count)
        }
        return tableChecksum(bytes, continuing: crc)
    }

    /// ``checksum(_:continuing:)`` without the processor's instruction.
    static func tableChecksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        tables.withUnsafeBufferPointer { table in
            var crc = ~crc
            var index = 0
            let count = bytes.count
            while count - index >= 8 {
                let low =
                    UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
                    | UInt32(bytes[index + 3]) << 24
                let word = crc ^ low
                crc =
                    table[7 * 256 + Int(word & 0xFF)] ^ table[6 * 256 + Int((word >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((word >> 16) & 0xFF)] ^ table[4 * 256 + Int(word >> 24)]
                    ^ table[3 * 256 + Int(bytes[index + 4])] ^ table[2 * 256 + Int(bytes[index + 5])]
                    ^ table[1 * 256 + Int(bytes[index + 6])] ^ table[Int(bytes[index + 7])]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
            return ~crc
        }
    }

    /// The checksum of `bytes`, continuing from `crc`.
    static func checksum(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: crc) }
    }

    /// The checksum of `bytes[range]`.
    static func checksum(_ bytes: [UInt8], range: Range<Int>, continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[range]), continuing: crc) }
    }
}
