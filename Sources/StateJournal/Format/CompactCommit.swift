/// The payload of a compact commit record (type 4, from format version 3 on): a whole epoch of one
/// put or remove of a path the segment already defines, with the metadata of the previous commit
/// in the segment, which it must follow.
///
/// ```
/// flags          u8: bit 0 zero,
///                    bit 1 the synced end is the previous commit's (else a varint follows): only
///                          when the previous commit record starts in the same 512-byte sector,
///                    bit 2 the timestamp is the previous commit's (else a zigzag delta follows),
///                    bit 3 the path is the previous compact commit's in the segment (else a
///                          path reference follows), bits 4-5 the operation: 1 put, 2 remove;
///                    bits 6-7 zero
/// epoch          varint, always: a compact commit read on its own says which epoch it ends
/// synced end     varint, unless bit 1
/// timestamp      varint, unless bit 2: zigzag difference from the previous commit's
/// path           varint n ≥ 1, unless bit 3: the n-th path defined in this segment
/// patch          the rest of the payload, for a put: a ``StatePatch`` against the path's previous
///                version; nothing for a remove
/// ```
///
/// The epoch, and the synced end of the first commit of each sector, are stored whole so that
/// recovery, which reads commits on their own beyond damage, learns from an intact compact commit
/// exactly which epoch it ends and, once per sector, how far the segment was synced: the epoch
/// floor and the line between damage and an unsynced tail stay as exact as with version 2's
/// commit records (see ``JournalScanner``).
struct CompactCommit: Equatable, Sendable {
    static let reserved: UInt8 = 0xC1
    static let sameSyncedEnd: UInt8 = 0x02
    static let sameTimestamp: UInt8 = 0x04
    static let samePath: UInt8 = 0x08
    static let operationShift: UInt8 = 4

    /// What the segment's previous commit said, which a compact commit is written relative to.
    struct Previous: Equatable, Sendable {
        var epoch: UInt64
        var syncedEnd: UInt64
        var timestampMilliseconds: UInt64
        /// The path number (from 1) of the segment's previous compact commit, if any.
        var compactPath: UInt64?
        /// Where the previous commit record starts in the segment.
        var recordStart: Int64
    }

    /// The sectors that "the synced end as before" may not reach across.
    static let sectorSize: Int64 = 512

    /// Whether a commit record starting at `offset` may say its synced end is `previous`'s.
    static func mayRepeatSyncedEnd(at offset: Int64, after previous: Previous) -> Bool {
        previous.recordStart / sectorSize == offset / sectorSize
    }

    var epoch: UInt64
    var syncedEnd: UInt64
    var timestampMilliseconds: UInt64
    var operation: EntryOperation
    /// The path number, from 1.
    var path: UInt64

    /// Appends the fields, everything but the patch, to `writer`, for a record starting at `offset`
    /// in its segment.
    func encodeFields(into writer: inout ByteWriter, previous: Previous, at offset: Int64) {
        var flags = operation.rawValue << Self.operationShift
        if syncedEnd == previous.syncedEnd && Self.mayRepeatSyncedEnd(at: offset, after: previous) {
            flags |= Self.sameSyncedEnd
        }
        if timestampMilliseconds == previous.timestampMilliseconds { flags |= Self.sameTimestamp }
        if path == previous.compactPath { flags |= Self.samePath }
        writer.u8(flags)
        writer.varint(epoch)
        if flags & Self.sameSyncedEnd == 0 { writer.varint(syncedEnd) }
        if flags & Self.sameTimestamp == 0 {
            let delta = Int64(bitPattern: timestampMilliseconds &- previous.timestampMilliseconds)
            writer.varint(ZigZag.encode(delta))
        }
        if flags & Self.samePath == 0 { writer.varint(path) }
    }

    /// Decodes the fields of a record starting at `offset` in its segment and returns where the
    /// patch starts. `pathCount` is the number of paths the segment defines.
    static func decode(
        _ payload: UnsafeRawBufferPointer, previous: Previous, pathCount: Int, at offset: Int64
    ) throws(FormatViolation) -> (record: CompactCommit, patchStart: Int) {
        var reader = ByteReader(payload)
        let flags = try reader.u8()
        guard flags & Self.reserved == 0,
            let operation = EntryOperation(rawValue: (flags >> Self.operationShift) & 0x03),
            operation != .removeAll
        else { throw FormatViolation("unknown compact commit flags \(flags)") }
        let epoch = try reader.varint()
        guard epoch < JournalLimits.maximumCounter else {
            throw FormatViolation("epoch \(epoch) is beyond what a store can reach")
        }
        if flags & Self.sameSyncedEnd != 0 && !Self.mayRepeatSyncedEnd(at: offset, after: previous) {
            throw FormatViolation("compact commit repeats the synced end of a commit in another sector")
        }
        let syncedEnd = flags & Self.sameSyncedEnd != 0 ? previous.syncedEnd : try reader.varint()
        guard syncedEnd <= UInt64(Int64.max) else {
            throw FormatViolation("synced end \(syncedEnd) is beyond any file")
        }
        var timestamp = previous.timestampMilliseconds
        if flags & Self.sameTimestamp == 0 {
            let encoded = try reader.varint()
            let delta = ZigZag.decode(encoded)
            timestamp = timestamp &+ UInt64(bitPattern: delta)
        }
        let path: UInt64
        if flags & Self.samePath != 0 {
            guard let compactPath = previous.compactPath else {
                throw FormatViolation("compact commit repeats the path of a compact commit the segment does not have")
            }
            path = compactPath
        } else {
            path = try reader.varint()
        }
        guard path >= 1, path <= UInt64(pathCount) else {
            throw FormatViolation("compact commit refers to path \(path), which is not defined")
        }
        guard operation == .put || reader.isAtEnd else { throw FormatViolation("a compact remove carries a patch") }
        let record = CompactCommit(
            epoch: epoch, syncedEnd: syncedEnd, timestampMilliseconds: timestamp, operation: operation, path: path)
        return (record, reader.position)
    }
}
