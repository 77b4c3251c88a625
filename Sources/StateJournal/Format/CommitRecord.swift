/// The payload of a commit record, which ends an epoch.
///
/// ```
/// epoch              varint
/// entry count        varint: every entry of the epoch, the inline batch's included
/// batch count        varint: the batch records before this commit that belong to the epoch
/// epoch digest       u32, only when batch count > 0: CRC-32C of those records' checksums, in order,
///                    each as 4 little-endian bytes; it ties the commit to exactly those batches
/// synced end         varint, from format version 2 on: how far the segment was known synced when
///                    the record was written (0 when nothing of it was)
/// timestamp          varint: in the segment's first commit, milliseconds since 1970 UTC; after it,
///                    the zigzag-encoded difference from the previous commit's timestamp
/// metadata mode      u8: 0 = the previous commit's metadata in this segment, 1 = inline:
///   count            varint, then count pairs of length-prefixed UTF-8 key and value, sorted by key
/// inline batch       the rest of the payload, if any: a batch payload with the epoch's last entries
/// ```
struct CommitRecord: Equatable, Sendable {
    var epoch: UInt64
    var entryCount: Int
    var batchCount: Int
    var digest: UInt32
    /// The offset in the segment up to which the writer knew the segment synced when it wrote this
    /// record: every byte before it was on stable storage. 0 when nothing of the segment was known
    /// synced; `nil` in a segment of format version 1, which does not store it.
    ///
    /// Recovery tells an unsynced tail from damage with it: bad bytes at an offset that a later
    /// intact commit record's synced end passes had reached the disk, so they are damage.
    var syncedEnd: UInt64?
    var timestampMilliseconds: UInt64
    /// `nil` when the metadata equals the previous commit's in the same segment.
    var metadata: [String: String]?

    /// Encodes the fields; `previousTimestamp` is the segment's previous commit's, if any.
    func encoded(previousTimestamp: UInt64?, inlineBatch: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: 32 + inlineBatch.count)
        encodeFields(into: &writer, previousTimestamp: previousTimestamp)
        writer.raw(inlineBatch)
        return writer.bytes
    }

    /// Appends the fields, everything but the inline batch, to `writer`.
    func encodeFields(into writer: inout ByteWriter, previousTimestamp: UInt64?) {
        writer.varint(epoch)
        writer.varint(entryCount)
        writer.varint(batchCount)
        if batchCount > 0 { writer.u32(digest) }
        if let syncedEnd { writer.varint(syncedEnd) }
        if let previousTimestamp {
            let delta = Int64(bitPattern: timestampMilliseconds &- previousTimestamp)
            writer.varint(ZigZag.encode(delta))
        } else {
            writer.varint(timestampMilliseconds)
        }
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
    }

    /// Decodes the fields of a record of a segment of format `version` and returns where the inline
    /// batch starts (the payload's end when none).
    static func decode(
        _ payload: UnsafeRawBufferPointer, previousTimestamp: UInt64?, version: UInt16
    ) throws(FormatViolation) -> (record: CommitRecord, inlineBatchStart: Int) {
        var reader = ByteReader(payload)
        let epoch = try reader.varint()
        guard epoch < JournalLimits.maximumCounter else {
            throw FormatViolation("epoch \(epoch) is beyond what a store can reach")
        }
        let entryCount = try reader.count(atMost: Int(Int32.max), "entry count")
        let batchCount = try reader.count(atMost: Int(Int32.max), "batch count")
        let digest = batchCount > 0 ? try reader.u32() : 0
        let syncedEnd = version >= FormatVersion.syncedEndInCommits ? try reader.varint() : nil
        if let syncedEnd, syncedEnd > UInt64(Int64.max) {
            throw FormatViolation("synced end \(syncedEnd) is beyond any file")
        }
        let encodedTimestamp = try reader.varint()
        let timestamp: UInt64
        if let previousTimestamp {
            let delta = ZigZag.decode(encodedTimestamp)
            timestamp = previousTimestamp &+ UInt64(bitPattern: delta)
        } else {
            timestamp = encodedTimestamp
        }
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
                guard items.updateValue(value, forKey: key) == nil else {
                    throw FormatViolation("metadata key repeats")
                }
            }
            metadata = items
        default: throw FormatViolation("unknown metadata mode \(mode)")
        }
        let record = CommitRecord(
            epoch: epoch, entryCount: entryCount, batchCount: batchCount, digest: digest, syncedEnd: syncedEnd,
            timestampMilliseconds: timestamp, metadata: metadata)
        return (record, reader.position)
    }
}

/// The payload of the seal record that ends a sealed segment: `last epoch: varint |
/// next segment sequence: varint`.
struct SealRecord: Equatable, Sendable {
    /// Two varints: at least one byte each, at most ten.
    static let minimumPayloadSize = 2
    static let maximumPayloadSize = 20

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
