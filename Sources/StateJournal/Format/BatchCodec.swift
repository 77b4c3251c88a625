/// What one batch entry does. The numbers are on disk: never renumber or reuse them.
enum EntryOperation: UInt8, Sendable {
    case put = 1
    case remove = 2
    case removeAll = 3
}

/// The payload of a batch record: some entries of one epoch, compressed together.
///
/// ```
/// entry count        varint, 1 ... 65,536
/// previous count     varint k, at most the entry count
/// previous refs      k varints: the paths whose previous versions form the dictionary, in order
/// encoding           u8: 0 = raw, 1 = one LZ4 block
/// body length        varint
/// body crc32c        u32: of the uncompressed body
/// body               the rest: the entries, raw or as an LZ4 block
/// ```
/// The body holds first one header per entry, then the states of the puts, in entry order. A header
/// is `flags: u8` (bits 0-1 operation, bit 2 "compressed against the previous version"), then for a
/// put or remove not flagged bit 2 a `path reference: varint` (0 = a new path whose definition follows:
/// `component count: varint`, then `length: varint` and UTF-8 bytes per component; n = the n-th path
/// defined in this segment), then for a put `state length: varint`. An entry flagged bit 2 takes its
/// path from the next previous ref.
///
/// The LZ4 dictionary is the last `65536 - P` bytes of the previous batch's body in the same epoch,
/// followed by the previous versions of the paths in the previous refs, in order, where `P` is their
/// total size (at most 65536). The states section of the body lines up with the previous versions, so
/// that the unchanged parts of consecutive states compress as long matches.
enum BatchCodec {
    static let dictionaryLimit = 65536
    static let flagUsesPrevious: UInt8 = 0x04

    /// Builds the dictionary described above into `dictionary`.
    static func assembleDictionary(previousBody: [UInt8], previousVersions: [UInt8], into dictionary: inout [UInt8]) {
        dictionary.removeAll(keepingCapacity: true)
        let fromBody = min(previousBody.count, dictionaryLimit - previousVersions.count)
        if fromBody > 0 { dictionary.append(contentsOf: previousBody[(previousBody.count - fromBody)...]) }
        dictionary.append(contentsOf: previousVersions)
    }
}

/// Collects the entries of one batch on the writer's side.
struct BatchBuilder {
    private(set) var entryCount = 0
    private var previousCount = 0
    private var previousReferences = ByteWriter(capacity: 64)
    private var headers = ByteWriter(capacity: 1024)
    private(set) var states: [UInt8] = []
    private(set) var previousVersions: [UInt8] = []
    /// The operation and path reference of the last entry added.
    private(set) var lastOperation = EntryOperation.removeAll
    private(set) var lastReference: UInt64 = 0

    var bodySize: Int { headers.bytes.count + states.count }
    var isEmpty: Bool { entryCount == 0 }

    /// Adds an entry. `reference` 0 defines `path` anew; `previous` is the path's state as of the end
    /// of the previous batch when the writer knows it, offered as dictionary material.
    mutating func add(
        _ operation: EntryOperation, path: RestorationPath?, reference: UInt64, state: UnsafeRawBufferPointer?,
        previous: [UInt8]?
    ) {
        var flags = operation.rawValue
        if operation == .put, reference != 0, let previous, !previous.isEmpty,
            previousVersions.count + previous.count <= BatchCodec.dictionaryLimit
        {
            flags |= BatchCodec.flagUsesPrevious
            previousVersions.append(contentsOf: previous)
            previousReferences.varint(reference)
            previousCount += 1
        }
        lastOperation = operation
        lastReference = reference
        headers.u8(flags)
        if operation != .removeAll && flags & BatchCodec.flagUsesPrevious == 0 {
            headers.varint(reference)
            if reference == 0, let path {
                headers.varint(path.components.count)
                for component in path.components { headers.lengthPrefixed(component) }
            }
        }
        if let state {
            headers.varint(state.count)
            states.append(contentsOf: state)
        }
        entryCount += 1
    }

    /// Empties the builder for the next batch, keeping the room of its buffers unless a large
    /// epoch grew them beyond ``EpochBuffers/retainedCapacity``.
    mutating func reset() {
        entryCount = 0
        previousCount = 0
        EpochBuffers.empty(&previousReferences.bytes)
        EpochBuffers.empty(&headers.bytes)
        EpochBuffers.empty(&states)
        EpochBuffers.empty(&previousVersions)
    }

    /// Appends the record payload to `record`, and leaves the raw body (the next batch's
    /// dictionary source) in `body`. `dictionary` is scratch space.
    func encode(
        into record: inout ByteWriter, compressor: LZ4Compressor, previousBody: [UInt8], dictionary: inout [UInt8],
        body: inout [UInt8]
    ) {
        body.removeAll(keepingCapacity: true)
        body.append(contentsOf: headers.bytes)
        body.append(contentsOf: states)
        BatchCodec.assembleDictionary(previousBody: previousBody, previousVersions: previousVersions, into: &dictionary)
        let compressedCount = body.withUnsafeBytes { input in
            dictionary.withUnsafeBytes { compressor.compress(input, dictionary: $0) }
        }
        record.varint(entryCount)
        record.varint(previousCount)
        record.raw(previousReferences.bytes)
        record.u8(compressedCount == nil ? 0 : 1)
        record.varint(body.count)
        record.u32(CRC32C.checksum(body))
        if let compressedCount {
            compressor.appendOutput(count: compressedCount, to: &record)
        } else {
            record.raw(body)
        }
    }

    /// The record payload and the raw body, in arrays of their own.
    func encode(compressor: LZ4Compressor, previousBody: [UInt8], dictionary: inout [UInt8]) -> (
        payload: [UInt8], body: [UInt8]
    ) {
        var record = ByteWriter()
        var body: [UInt8] = []
        encode(into: &record, compressor: compressor, previousBody: previousBody, dictionary: &dictionary, body: &body)
        return (record.bytes, body)
    }
}
