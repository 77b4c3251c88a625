/// The 44 bytes at the start of every segment file.
///
/// `magic "SJSG" | version: u16 (1 or 2) | flags: u16 | store id: 16 bytes | sequence: u64 | base epoch: u64 |
/// crc32c of the preceding 40 bytes: u32`, little-endian.
struct SegmentHeader: Equatable, Sendable {
    static let size = 44
    static let magic: [UInt8] = Array("SJSG".utf8)

    var storeID: StoreID
    /// The segment's number in the store's file sequence; never reused.
    var sequence: UInt64
    /// The last epoch committed before this segment, or 0.
    var baseEpoch: UInt64
    /// The format version the segment's records are written in.
    var version: UInt16 = FormatVersion.current

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.raw(Self.magic)
        writer.u16(version)
        writer.u16(0)
        writer.raw(storeID.bytes)
        writer.u64(sequence)
        writer.u64(baseEpoch)
        writer.u32(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws(FormatViolation) -> SegmentHeader {
        guard bytes.count >= size else { throw FormatViolation("segment header is shorter than \(size) bytes") }
        guard Array(bytes[0..<4]) == magic else { throw FormatViolation("not a segment: bad magic") }
        let header = UnsafeRawBufferPointer(rebasing: bytes[0..<size])
        guard
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: header[0..<40]))
                == ByteReader.littleEndianU32(header, at: 40)
        else { throw FormatViolation("segment header checksum mismatch") }
        var reader = ByteReader(header, position: 4)
        let version = try reader.u16()
        guard FormatVersion.isReadable(version) else {
            throw .unsupported("segment", version: version)
        }
        _ = try reader.u16()
        let id = StoreID(bytes: Array(try reader.bytes(16)))
        let sequence = try reader.u64()
        let baseEpoch = try reader.u64()
        guard baseEpoch < JournalLimits.maximumCounter else {
            throw FormatViolation("segment base epoch is beyond what a store can reach")
        }
        return SegmentHeader(storeID: id, sequence: sequence, baseEpoch: baseEpoch, version: version)
    }
}
