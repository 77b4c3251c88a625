/// The content of a checkpoint file, once its LZ4 frame is decompressed: the state as of one epoch.
///
/// ```
/// magic "SJCP" | version: u16 | flags: u16 | store id: 16 bytes | sequence: u64 |
/// epoch: u64 | timestamp ms: u64 | epoch entry count: varint | epoch bytes: varint |
/// metadata: count varint, then length-prefixed key and value pairs sorted by key |
/// live path count: varint |
/// per path, in path order: component count varint, (length varint, UTF-8)*, state length varint, state |
/// crc32c of all the preceding content: u32
/// ```
struct CheckpointContent: Sendable {
    static let magic: [UInt8] = Array("SJCP".utf8)

    /// Why the encoded `path` may not follow `previous`, or `nil` when it comes after it: every
    /// release writes a checkpoint's paths in order, each once, and loading and the streaming check
    /// (`CheckpointFile.check`) refuse them otherwise, for the same reason.
    static func orderViolation(of path: UnsafeRawBufferPointer, after previous: UnsafeRawBufferPointer)
        -> FormatViolation?
    {
        let order = EncodedPath.compare(
            EncodedPath(start: previous.baseAddress!, count: previous.count),
            EncodedPath(start: path.baseAddress!, count: path.count))
        if order == 0 {
            return FormatViolation(
                "checkpoint content: the path \(EncodedPath(start: path.baseAddress!, count: path.count).restorationPath) repeats"
            )
        }
        return order > 0 ? FormatViolation("checkpoint content: the paths are not in order") : nil
    }

    var storeID: StoreID
    var sequence: UInt64
    var info: EpochInfoFields
    var entries: StateTable

    /// The fields of an ``EpochInfo`` as stored.
    struct EpochInfoFields: Sendable, Equatable {
        var epoch: UInt64
        var timestampMilliseconds: UInt64
        var entryCount: Int
        var bytes: Int
        var metadata: [String: String]
    }

    /// Serializes the content in pieces of about `chunk` bytes, calling `emit` with each.
    func serialize(chunk: Int = 1 << 20, _ emit: ([UInt8]) throws -> Void) throws {
        var writer = ByteWriter(capacity: chunk + 4096)
        var crc: UInt32 = 0
        writer.raw(Self.magic)
        writer.u16(FormatVersion.current)
        writer.u16(0)
        writer.raw(storeID.bytes)
        writer.u64(sequence)
        writer.u64(info.epoch)
        writer.u64(info.timestampMilliseconds)
        writer.varint(info.entryCount)
        writer.varint(info.bytes)
        writer.varint(info.metadata.count)
        for key in info.metadata.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            writer.lengthPrefixed(key)
            writer.lengthPrefixed(info.metadata[key]!)
        }
        writer.varint(entries.count)
        try entries.withSlots { slots in
            for slot in slots {
                writer.raw(slot.encodedPath.bytes)
                writer.varint(Int(slot.valueCount))
                writer.raw(slot.state)
                if writer.bytes.count >= chunk {
                    crc = CRC32C.checksum(writer.bytes, continuing: crc)
                    try emit(writer.bytes)
                    writer.bytes.removeAll(keepingCapacity: true)
                }
            }
        }
        crc = CRC32C.checksum(writer.bytes, continuing: crc)
        writer.u32(crc)
        try emit(writer.bytes)
    }

    /// Decodes a checkpoint's content, which stays in `arena`: the state's paths and states are
    /// read where they are, not copied.
    static func decode(_ arena: StateArena) throws(FormatViolation) -> CheckpointContent {
        let bytes = arena.bytes
        guard bytes.count >= 4 + 52 else { throw FormatViolation("checkpoint content is too short") }
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<bytes.count - 4])
        guard CRC32C.checksum(body) == ByteReader.littleEndianU32(bytes, at: bytes.count - 4) else {
            throw FormatViolation("checkpoint content checksum mismatch")
        }
        var decoder = CheckpointContentDecoder()
        try decoder.read(body, complete: true)
        return decoder.content(in: arena)
    }
}
