/// The payload of a commit record, which ends an epoch.
///
/// `epoch: varint | entry count: varint | batch count: varint | epoch digest: u32 |
/// timestamp in ms since 1970 UTC: varint | metadata mode: u8 | metadata`, where mode 0 means
/// "the same metadata as the previous commit in this segment" and mode 1 is followed by
/// `count: varint` and `count` pairs of length-prefixed UTF-8 key and value, sorted by key.
/// The epoch digest is the CRC-32C of the epoch's batch-record checksums, in order, each as 4
/// little-endian bytes: it ties the commit to exactly the batches before it.
struct CommitRecord: Equatable, Sendable {
    var epoch: UInt64
    var entryCount: Int
    var batchCount: Int
    var digest: UInt32
    var timestampMilliseconds: UInt64
    /// `nil` when the metadata equals the previous commit's in the same segment.
    var metadata: [String: String]?

    func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.varint(epoch)
        writer.varint(entryCount)
        writer.varint(batchCount)
        writer.u32(digest)
        writer.varint(timestampMilliseconds)
        if let metadata {
            writer.u8(1)
            writer.varint(metadata.count)
            for key in metadata.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                writer.lengthPrefixed(key)
                writer.lengthPrefixed(metadata[key]!)
            }
        } else {
            writer.u8(0)
        }
        return writer.bytes
    }

    static func decode(_ payload: UnsafeRawBufferPointer) throws(FormatViolation) -> CommitRecord {
        var reader = ByteReader(payload)
        let epoch = try reader.varint()
        let entryCount = try reader.count(atMost: Int(Int32.max), "entry count")
        let batchCount = try reader.count(atMost: Int(Int32.max), "batch count")
        let digest = try reader.u32()
        let timestamp = try reader.varint()
        let mode = try reader.u8()
        var metadata: [String: String]?
        switch mode {
        case 0: metadata = nil
        case 1:
            let count = try reader.count(atMost: JournalLimits.maximumMetadataCount, "metadata count")
            var items: [String: String] = [:]
            for _ in 0..<count {
                let key = try reader.string(atMost: JournalLimits.maximumMetadataItemLength, "metadata key")
                let value = try reader.string(atMost: JournalLimits.maximumMetadataItemLength, "metadata value")
                items[key] = value
            }
            metadata = items
        default: throw FormatViolation("unknown metadata mode \(mode)")
        }
        guard reader.isAtEnd else { throw FormatViolation("commit record has \(reader.remaining) trailing bytes") }
        return CommitRecord(
            epoch: epoch, entryCount: entryCount, batchCount: batchCount, digest: digest,
            timestampMilliseconds: timestamp, metadata: metadata)
    }
}

/// The payload of the seal record that ends a sealed segment: `last epoch: varint |
/// next segment sequence: varint`.
struct SealRecord: Equatable, Sendable {
    var lastEpoch: UInt64
    var nextSegment: UInt64

    func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.varint(lastEpoch)
        writer.varint(nextSegment)
        return writer.bytes
    }

    static func decode(_ payload: UnsafeRawBufferPointer) throws(FormatViolation) -> SealRecord {
        var reader = ByteReader(payload)
        let record = SealRecord(lastEpoch: try reader.varint(), nextSegment: try reader.varint())
        guard reader.isAtEnd else { throw FormatViolation("seal record has trailing bytes") }
        return record
    }
}
