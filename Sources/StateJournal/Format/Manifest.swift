/// The one file that names the store's current checkpoint and live segments.
///
/// It is replaced atomically (temporary file, fsync, rename, fsync of the directory) and is the
/// commit point for every change to the set of files. Layout, little-endian:
/// `magic "SJMF" | version: u16 | flags: u16 | store id: 16 bytes | generation: u64 |
/// next file sequence: u64 | epoch floor: u64 | checkpoint count: u32 |
/// per checkpoint, oldest first: sequence u64, epoch u64, timestamp ms u64 |
/// segment count: u32 | segment sequences: u64 each | crc32c of all that precedes: u32`.
struct Manifest: Equatable, Sendable {
    static let magic: [UInt8] = Array("SJMF".utf8)
    static let maximumSegments = 1 << 20
    static let maximumCheckpoints = 1 << 16
    static let maximumSize = 64 + maximumCheckpoints * 24 + maximumSegments * 8

    /// A checkpoint the manifest names: its file, and the epoch it holds the state of.
    struct CheckpointReference: Equatable, Sendable {
        var sequence: UInt64
        var epoch: UInt64
        var timestampMilliseconds: UInt64
    }

    var storeID: StoreID
    /// Grows by one each time the manifest is replaced.
    var generation: UInt64
    /// The next sequence number to give a new segment or checkpoint.
    var nextFileSequence: UInt64
    /// Every epoch ever committed is at most this; the next epoch written is greater.
    var epochFloor: UInt64
    /// The retained checkpoints, oldest first; the last is the current one.
    var checkpoints: [CheckpointReference]
    /// The live segments, oldest first; the last one is the one being appended to.
    var segments: [UInt64]
    /// How many of the last ``segments`` the file does not list: segments found by following the
    /// chain of seals (``StoreDirectory/followingSealedSegments(of:)``). Not stored.
    ///
    /// Every segment before the last one the file lists was synced, seal included, before a
    /// manifest named the one after it; from that one on, only what the commit records' synced ends
    /// vouch for is known to have reached the disk.
    var chainedSegments = 0

    /// How many of the first ``segments`` were synced whole before this manifest was written.
    var wholeDurableSegments: Int { max(0, segments.count - chainedSegments - 1) }

    /// The epoch of the current checkpoint, or 0 when there is none.
    var newestCheckpointEpoch: UInt64 { checkpoints.last?.epoch ?? 0 }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 72 + segments.count * 8)
        writer.raw(Self.magic)
        writer.u16(FormatVersion.current)
        writer.u16(0)
        writer.raw(storeID.bytes)
        writer.u64(generation)
        writer.u64(nextFileSequence)
        writer.u64(epochFloor)
        writer.u32(UInt32(checkpoints.count))
        for checkpoint in checkpoints {
            writer.u64(checkpoint.sequence)
            writer.u64(checkpoint.epoch)
            writer.u64(checkpoint.timestampMilliseconds)
        }
        writer.u32(UInt32(segments.count))
        for segment in segments { writer.u64(segment) }
        writer.u32(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws(FormatViolation) -> Manifest {
        guard bytes.count >= 64 else { throw FormatViolation("manifest is shorter than its fixed fields") }
        guard Array(bytes[0..<4]) == magic else { throw FormatViolation("not a manifest: bad magic") }
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<bytes.count - 4])
        guard CRC32C.checksum(body) == ByteReader.littleEndianU32(bytes, at: bytes.count - 4) else {
            throw FormatViolation("manifest checksum mismatch")
        }
        var reader = ByteReader(body, position: 4)
        let version = try reader.u16()
        guard FormatVersion.isReadable(version) else {
            throw .unsupported("manifest", version: version)
        }
        _ = try reader.u16()
        let id = StoreID(bytes: Array(try reader.bytes(16)))
        let generation = try reader.u64()
        let nextFileSequence = try reader.u64()
        let epochFloor = try reader.u64()
        guard generation < JournalLimits.maximumCounter, nextFileSequence < JournalLimits.maximumCounter,
            epochFloor < JournalLimits.maximumCounter
        else { throw FormatViolation("manifest counters are beyond what a store can reach") }
        let checkpointCount = Int(try reader.u32())
        guard checkpointCount <= maximumCheckpoints, reader.remaining >= checkpointCount * 24 + 4 else {
            throw FormatViolation("manifest lists \(checkpointCount) checkpoints but is too short for them")
        }
        var checkpoints: [CheckpointReference] = []
        for _ in 0..<checkpointCount {
            checkpoints.append(
                CheckpointReference(
                    sequence: try reader.u64(), epoch: try reader.u64(), timestampMilliseconds: try reader.u64()))
        }
        guard
            zip(checkpoints, checkpoints.dropFirst()).allSatisfy({ $0.sequence < $1.sequence && $0.epoch < $1.epoch }),
            checkpoints.allSatisfy({ $0.sequence < nextFileSequence && $0.epoch < JournalLimits.maximumCounter })
        else { throw FormatViolation("manifest checkpoints are out of order") }
        let count = Int(try reader.u32())
        guard count >= 1, count <= maximumSegments, reader.remaining == count * 8 else {
            throw FormatViolation("manifest lists \(count) segments but holds \(reader.remaining) bytes for them")
        }
        var segments: [UInt64] = []
        segments.reserveCapacity(count)
        for _ in 0..<count { segments.append(try reader.u64()) }
        guard zip(segments, segments.dropFirst()).allSatisfy({ $0 < $1 }),
            segments.allSatisfy({ $0 < nextFileSequence })
        else { throw FormatViolation("manifest segment sequences are out of order") }
        return Manifest(
            storeID: id, generation: generation, nextFileSequence: nextFileSequence, epochFloor: epochFloor,
            checkpoints: checkpoints, segments: segments)
    }
}
