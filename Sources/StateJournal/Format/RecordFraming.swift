/// The kinds of record a segment holds. The numbers are on disk: never renumber or reuse them.
enum RecordType: UInt8, Sendable {
    /// Entries of the epoch being written: puts, removes and clears, compressed together.
    case batch = 1
    /// The end of an epoch: its number, entry count, digest, timestamp and metadata.
    case commit = 2
    /// The last record of a sealed segment.
    case seal = 3
}

/// The 9-byte header in front of every record:
/// `crc32c: u32 | length: u32 | type: u8`, little-endian. The checksum covers the length, the type
/// and the payload, so a corrupt length fails it like a corrupt payload does.
enum RecordFraming {
    static let headerSize = 9

    /// Starts a record at the end of `writer`: reserves its header, which ``finishRecord(_:in:from:)``
    /// fills once the payload follows it. Returns where the record starts.
    static func beginRecord(in writer: inout ByteWriter) -> Int {
        let start = writer.bytes.count
        for _ in 0..<headerSize { writer.bytes.append(0) }
        return start
    }

    /// Fills the header of the record that starts at `start` and runs to the end of `writer`;
    /// returns its checksum.
    @discardableResult
    static func finishRecord(_ type: RecordType, in writer: inout ByteWriter, from start: Int) -> UInt32 {
        writer.bytes.withUnsafeMutableBytes { record in
            let length = UInt32(record.count - start - headerSize)
            for index in 0..<4 { record[start + 4 + index] = UInt8(truncatingIfNeeded: length >> UInt32(8 * index)) }
            record[start + 8] = type.rawValue
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: record[(start + 4)...]))
            for index in 0..<4 { record[start + index] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * index)) }
            return crc
        }
    }

    /// The framed record: header and payload.
    static func frame(_ type: RecordType, payload: [UInt8]) -> [UInt8] {
        var record = [UInt8](repeating: 0, count: headerSize)
        record.reserveCapacity(headerSize + payload.count)
        let length = UInt32(payload.count)
        for index in 0..<4 { record[4 + index] = UInt8(truncatingIfNeeded: length >> UInt32(8 * index)) }
        record[8] = type.rawValue
        record.append(contentsOf: payload)
        let crc = CRC32C.checksum(record, range: 4..<record.count)
        for index in 0..<4 { record[index] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * index)) }
        return record
    }

    /// The checksum stored in a framed record's first four bytes.
    static func storedChecksum(of record: [UInt8]) -> UInt32 {
        record.withUnsafeBytes { ByteReader.littleEndianU32($0, at: 0) }
    }
}

extension ByteReader {
    static func littleEndianU32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }
}
