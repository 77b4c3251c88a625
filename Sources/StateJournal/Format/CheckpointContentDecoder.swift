/// Reads a checkpoint's content (``CheckpointContent``) from a prefix that grows: the whole content
/// at once, or the part decompressed so far while the rest is still being decompressed
/// (``CheckpointFile``'s pipelined load). Paths and states are read where they lie; the slots point
/// into the content, which must neither move nor change while the decoder and its table use it.
///
/// Every length is checked against the bytes the decoder was given, so damaged content can make it
/// neither read past them nor allocate beyond what they could hold. While the content is
/// incomplete, an entry that fails to read with fewer than ``largestEntry`` bytes after its start
/// is read again with more: only then can it be damaged rather than cut.
struct CheckpointContentDecoder {
    /// The most bytes the header or one entry can take: a path of the greatest depth with
    /// components of the greatest length, and a state of the greatest size, with their lengths;
    /// the header's metadata is smaller.
    static let largestEntry =
        JournalLimits.maximumPathDepth * (JournalLimits.maximumComponentLength + 10) + 10
        + JournalLimits.maximumStateSize + 10

    /// The fields before the paths.
    struct Header {
        var storeID: StoreID
        var sequence: UInt64
        var info: CheckpointContent.EpochInfoFields
        var count: Int
        /// Where the live path count starts.
        var countStart: Int
    }

    private(set) var header: Header?
    private(set) var slots: [StateTable.Slot] = []
    /// Where the next entry starts.
    private(set) var position = 0
    private var paths = PathReader()
    private var previous: UnsafeRawBufferPointer?
    /// The most slots reserved at once, whatever the header declares.
    private let reservationLimit: Int

    /// A decoder that reserves room for at most `reservationLimit` slots up front (more are added as
    /// entries are read): a bound taken from the size of the file, so that a damaged count cannot
    /// make it allocate much.
    init(reservationLimit: Int = .max) {
        self.reservationLimit = reservationLimit
    }

    /// Reads what `body` holds beyond what was read before. `body` is the content's first bytes
    /// (when `complete`, all of them but the trailing checksum), at the same address every time.
    /// While the content is incomplete, an entry that `body` may hold only part of is left for the
    /// next call; when `complete`, the decoder checks that the content ends where the last path's
    /// state ends.
    mutating func read(_ body: UnsafeRawBufferPointer, complete: Bool) throws(FormatViolation) {
        var reader = ByteReader(body, position: position)
        if header == nil {
            do throws(FormatViolation) {
                header = try Self.readHeader(&reader, complete: complete)
            } catch {
                // The header is shorter than the largest entry: with fewer bytes, it may be cut.
                if !complete && body.count < Self.largestEntry { return }
                throw error
            }
            slots.reserveCapacity(min(header!.count, reservationLimit))
            position = reader.position
        }
        let count = header!.count
        if complete {
            // Read incomplete, the count was not yet checked against the content's length.
            let limit = (body.count - header!.countStart) / 3
            guard count <= limit else { throw FormatViolation("live path count \(count) exceeds the limit \(limit)") }
        }
        while slots.count < count && (complete || !reader.isAtEnd) {
            let start = reader.position
            do throws(FormatViolation) {
                try readEntry(&reader)
            } catch {
                // Fewer bytes than the largest entry follow its start: it may be cut, not damaged.
                if !complete && body.count - start < Self.largestEntry {
                    reader = ByteReader(body, position: start)
                    break
                }
                throw error
            }
        }
        position = reader.position
        if complete {
            guard reader.isAtEnd else { throw FormatViolation("checkpoint content has trailing bytes") }
        }
    }

    /// Reads one path and its state, and adds their slot.
    @inline(__always)
    private mutating func readEntry(_ reader: inout ByteReader) throws(FormatViolation) {
        let path = try paths.check(from: &reader)
        if let previous, let violation = CheckpointContent.orderViolation(of: path, after: previous) {
            throw violation
        }
        let length = try reader.count(atMost: JournalLimits.maximumStateSize, "state length")
        let state = try reader.bytes(length)
        previous = path
        slots.append(
            StateTable.Slot(
                path: path.baseAddress!, value: state.baseAddress ?? path.baseAddress!,
                pathCount: Int32(path.count),
                valueCount: Int32(length)))
    }

    /// The content read, once ``read(_:complete:)`` read it complete. `arena` holds the content.
    func content(in arena: StateArena) -> CheckpointContent {
        let header = header!
        // Each path was checked to come after the one before it.
        return CheckpointContent(
            storeID: header.storeID, sequence: header.sequence, info: header.info,
            entries: StateTable(arenas: [arena], slotsInPathOrder: slots))
    }

    private static func readHeader(_ reader: inout ByteReader, complete: Bool) throws(FormatViolation) -> Header {
        guard Array(try reader.bytes(4)) == CheckpointContent.magic else {
            throw FormatViolation("not a checkpoint: bad magic")
        }
        let version = try reader.u16()
        guard FormatVersion.isReadable(version) else {
            throw .unsupported("checkpoint", version: version)
        }
        _ = try reader.u16()
        let id = StoreID(bytes: Array(try reader.bytes(16)))
        let sequence = try reader.u64()
        let epoch = try reader.u64()
        let timestamp = try reader.u64()
        let entryCount = try reader.count(atMost: Int(Int32.max), "epoch entry count")
        let epochBytes = try reader.count(atMost: Int(Int64.max), "epoch bytes")
        let metadataCount = try reader.count(atMost: JournalLimits.maximumMetadataCount, "metadata count")
        var metadata: [String: String] = [:]
        for _ in 0..<metadataCount {
            let key = try reader.string(atMost: JournalLimits.maximumMetadataItemLength, "metadata key")
            metadata[key] = try reader.string(atMost: JournalLimits.maximumMetadataItemLength, "metadata value")
        }
        // Each entry takes at least three bytes; while the content is incomplete, the bound is
        // checked once it is (``read(_:complete:)``).
        let countStart = reader.position
        let count = try reader.count(atMost: complete ? reader.remaining / 3 : Int(Int32.max), "live path count")
        return Header(
            storeID: id, sequence: sequence,
            info: CheckpointContent.EpochInfoFields(
                epoch: epoch, timestampMilliseconds: timestamp, entryCount: entryCount, bytes: epochBytes,
                metadata: metadata),
            count: count, countStart: countStart)
    }
}
