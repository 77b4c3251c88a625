/// The kinds of record a segment holds. The numbers are on disk: never renumber or reuse them.
enum RecordType: UInt8, Sendable {
    /// Entries of the epoch being written: puts, removes and clears, compressed together.
    case batch = 1
    /// The end of an epoch: its number, entry count, digest, timestamp and metadata.
    case commit = 2
    /// The last record of a sealed segment.
    case seal = 3
    /// A whole epoch of one entry whose metadata is the previous commit's, from format version 3 on:
    /// see ``CompactCommit``.
    case compactCommit = 4

    /// The raw values of every case, for scans that reject most bytes before parsing a header.
    static let rawValues: ClosedRange<UInt8> = batch.rawValue...compactCommit.rawValue
}

/// The header in front of every record. In segments of format versions 1 and 2 it is 9 bytes,
/// `crc32c: u32 | length: u32 | type: u8`; from version 3 on it is 6 to 9 bytes,
/// `crc32c: u32 | length: varint (1 to 4 bytes) | type: u8`. Little-endian. The checksum covers the
/// length, the type and the payload, so a corrupt length fails it like a corrupt payload does.
package enum RecordFraming {
    /// The header size in segments of format versions 1 and 2.
    static let fixedHeaderSize = 9
    /// The largest header of any version: a length varint holds at most 4 bytes (2^28 − 1 is above
    /// the record length limit).
    static let maximumHeaderSize = 9
    /// The smallest header of any version.
    static let minimumHeaderSize = 6
    static let maximumLengthBytes = 4

    /// A record header as read from a segment.
    package struct Header {
        /// The payload's length.
        package var length: Int
        /// The record type's byte, as stored.
        package var typeByte: UInt8
        /// The header's size in bytes.
        package var size: Int
    }

    static func usesVarintLength(_ version: UInt16) -> Bool { version >= FormatVersion.compactRecords }

    /// The smallest header a segment of `version` can hold.
    static func minimumHeaderSize(_ version: UInt16) -> Int {
        usesVarintLength(version) ? minimumHeaderSize : fixedHeaderSize
    }

    /// Reads the header at the start of `bytes` (which may run to the end of the file, or hold just
    /// the first ``maximumHeaderSize`` bytes of the record); `nil` when `bytes` ends inside it or its
    /// length field is longer than 4 bytes.
    package static func header(_ bytes: UnsafeRawBufferPointer, version: UInt16) -> Header? {
        guard usesVarintLength(version) else {
            guard bytes.count >= fixedHeaderSize else { return nil }
            return Header(
                length: Int(ByteReader.littleEndianU32(bytes, at: 4)), typeByte: bytes[8], size: fixedHeaderSize)
        }
        var length = 0
        var index = 4
        while true {
            guard index < bytes.count, index < 4 + maximumLengthBytes else { return nil }
            let byte = bytes[index]
            length |= Int(byte & 0x7F) << (7 * (index - 4))
            index += 1
            if byte & 0x80 == 0 { break }
        }
        guard index < bytes.count else { return nil }
        return Header(length: length, typeByte: bytes[index], size: index + 1)
    }

    /// Starts a record at the end of `writer`, in a segment of format `version`: reserves its header,
    /// which ``finishRecord(_:in:from:version:)`` fills once the payload follows it. Returns where the
    /// record starts.
    static func beginRecord(in writer: inout ByteWriter, version: UInt16) -> Int {
        let start = writer.bytes.count
        for _ in 0..<minimumHeaderSize(version) { writer.bytes.append(0) }
        return start
    }

    /// Fills the header of the record that starts at `start` and runs to the end of `writer`;
    /// returns its checksum. A varint length longer than the one byte reserved moves the payload.
    @discardableResult
    static func finishRecord(
        _ type: RecordType, in writer: inout ByteWriter, from start: Int, version: UInt16
    ) -> UInt32 {
        var lengthBytes = 4
        if usesVarintLength(version) {
            let length = writer.bytes.count - start - minimumHeaderSize
            lengthBytes = varintSize(length)
            if lengthBytes > 1 {
                writer.bytes.insert(
                    contentsOf: repeatElement(0, count: lengthBytes - 1), at: start + minimumHeaderSize)
            }
        }
        return writer.bytes.withUnsafeMutableBytes { record in
            let length = record.count - start - 5 - lengthBytes
            if usesVarintLength(version) {
                var value = length
                for index in 0..<lengthBytes {
                    record[start + 4 + index] = UInt8(value & 0x7F) | (index < lengthBytes - 1 ? 0x80 : 0)
                    value >>= 7
                }
            } else {
                for index in 0..<4 { record[start + 4 + index] = UInt8(truncatingIfNeeded: length >> (8 * index)) }
            }
            record[start + 4 + lengthBytes] = type.rawValue
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: record[(start + 4)...]))
            for index in 0..<4 { record[start + index] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * index)) }
            return crc
        }
    }

    /// The framed record, header and payload, for a segment of format `version`.
    static func frame(_ type: RecordType, payload: [UInt8], version: UInt16) -> [UInt8] {
        var writer = ByteWriter(capacity: maximumHeaderSize + payload.count)
        let start = beginRecord(in: &writer, version: version)
        writer.raw(payload)
        finishRecord(type, in: &writer, from: start, version: version)
        return writer.bytes
    }

    /// The number of bytes of `value` as a varint.
    static func varintSize(_ value: Int) -> Int {
        var size = 1
        var rest = value >> 7
        while rest > 0 {
            size += 1
            rest >>= 7
        }
        return size
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
