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
    private var states: [UInt8] = []
    private var previousVersions: [UInt8] = []

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

    /// Encodes the record payload and returns it with the raw body (the next batch's dictionary source).
    func encode(compressor: LZ4Compressor, previousBody: [UInt8], dictionary: inout [UInt8]) -> (payload: [UInt8], body: [UInt8]) {
        let body = headers.bytes + states
        BatchCodec.assembleDictionary(previousBody: previousBody, previousVersions: previousVersions, into: &dictionary)
        let compressed = body.withUnsafeBytes { input in
            dictionary.withUnsafeBytes { compressor.compress(input, dictionary: $0) }
        }
        var writer = ByteWriter(capacity: previousReferences.bytes.count + 24 + (compressed?.count ?? body.count))
        writer.varint(entryCount)
        writer.varint(previousCount)
        writer.raw(previousReferences.bytes)
        writer.u8(compressed == nil ? 0 : 1)
        writer.varint(body.count)
        writer.u32(CRC32C.checksum(body))
        writer.raw(compressed ?? body)
        return (writer.bytes, body)
    }
}

/// Decodes batch records on the reader's side. Keeps the segment's path table and the previous
/// batch's body, which the next batch of the same epoch compresses against.
struct BatchDecoder {
    private(set) var paths: [RestorationPath] = []
    /// The paths in `paths`: a writer defines each path once per segment.
    private var definedPaths: Set<RestorationPath> = []
    private var previousBody: [UInt8] = []
    private var dictionary: [UInt8] = []
    private var previousVersions: [UInt8] = []

    /// Forgets the previous body: called at each epoch boundary.
    mutating func startEpoch() { previousBody.removeAll(keepingCapacity: true) }

    /// Decodes one batch payload into changes. `current` gives a path's state as of the end of the
    /// previous batch (the committed state overlaid with earlier batches of the same epoch).
    mutating func decode(
        _ payload: UnsafeRawBufferPointer, current: (RestorationPath) -> [UInt8]?
    ) throws(FormatViolation) -> [JournalChange] {
        var reader = ByteReader(payload)
        let count = try reader.count(atMost: JournalLimits.maximumBatchEntries, "batch entry count")
        guard count > 0 else { throw FormatViolation("batch has no entries") }
        let previousCount = try reader.count(atMost: count, "previous-version count")
        var previousPaths: [RestorationPath] = []
        previousPaths.reserveCapacity(previousCount)
        previousVersions.removeAll(keepingCapacity: true)
        for _ in 0..<previousCount {
            let reference = try reader.varint()
            guard reference >= 1, reference <= UInt64(paths.count) else {
                throw FormatViolation("previous-version reference \(reference) is not a path defined before this batch")
            }
            let path = paths[Int(reference) - 1]
            guard let previous = current(path) else {
                throw FormatViolation("entry is compressed against a previous version of \(path) that does not exist")
            }
            previousVersions.append(contentsOf: previous)
            guard previousVersions.count <= BatchCodec.dictionaryLimit else {
                throw FormatViolation("previous versions exceed the dictionary limit")
            }
            previousPaths.append(path)
        }
        let encoding = try reader.u8()
        let bodyLength = try reader.count(atMost: JournalLimits.maximumRecordLength, "body length")
        let bodyChecksum = try reader.u32()
        let stored = try reader.bytes(reader.remaining)

        var body = [UInt8](repeating: 0, count: bodyLength)
        switch encoding {
        case 0:
            guard stored.count == bodyLength else { throw FormatViolation("raw body length does not match") }
            body.withUnsafeMutableBytes { $0.copyMemory(from: stored) }
        case 1:
            BatchCodec.assembleDictionary(previousBody: previousBody, previousVersions: previousVersions, into: &dictionary)
            let decoded = body.withUnsafeMutableBytes { destination in
                dictionary.withUnsafeBytes { LZ4Decompressor.decompress(stored, dictionary: $0, into: destination) }
            }
            guard decoded else { throw FormatViolation("LZ4 block does not decode to the body length") }
        default:
            throw FormatViolation("unknown body encoding \(encoding)")
        }
        guard CRC32C.checksum(body) == bodyChecksum else { throw FormatViolation("body checksum mismatch after decoding") }

        var changes: [JournalChange] = []
        changes.reserveCapacity(count)
        var newPaths: [RestorationPath] = []
        var definedInBatch: Set<RestorationPath> = []
        do {
            try body.withUnsafeBytes { bodyBytes in
                var entry = ByteReader(bodyBytes)
                var nextPrevious = 0
                var puts: [(index: Int, length: Int)] = []
                var stateTotal = 0
                for _ in 0..<count {
                    let flags = try entry.u8()
                    guard flags & ~0x07 == 0, let operation = EntryOperation(rawValue: flags & 0x03) else {
                        throw FormatViolation("unknown entry flags \(flags)")
                    }
                    if operation == .removeAll {
                        guard flags == operation.rawValue else { throw FormatViolation("a clear entry carries flags") }
                        changes.append(.removeAll)
                        continue
                    }
                    let path: RestorationPath
                    if flags & BatchCodec.flagUsesPrevious != 0 {
                        guard operation == .put, nextPrevious < previousPaths.count else {
                            throw FormatViolation("entry claims a previous version that the batch does not list")
                        }
                        path = previousPaths[nextPrevious]
                        nextPrevious += 1
                    } else {
                        let reference = try entry.varint()
                        if reference == 0 {
                            let depth = try entry.count(atMost: JournalLimits.maximumPathDepth, "path depth")
                            guard depth > 0 else { throw FormatViolation("a path has no components") }
                            var components: [String] = []
                            components.reserveCapacity(depth)
                            for _ in 0..<depth {
                                components.append(try entry.string(atMost: JournalLimits.maximumComponentLength, "path component"))
                            }
                            path = RestorationPath(components)
                            guard !definedPaths.contains(path), definedInBatch.insert(path).inserted else {
                                throw FormatViolation("path \(path) is defined twice in the segment")
                            }
                            newPaths.append(path)
                        } else if reference <= UInt64(paths.count) {
                            path = paths[Int(reference) - 1]
                        } else if reference <= UInt64(paths.count + newPaths.count) {
                            path = newPaths[Int(reference) - paths.count - 1]
                        } else {
                            throw FormatViolation("entry refers to path \(reference), which is not defined yet")
                        }
                    }
                    if operation == .put {
                        let length = try entry.count(atMost: JournalLimits.maximumStateSize, "state length")
                        puts.append((changes.count, length))
                        stateTotal += length
                        changes.append(.put(path, []))
                    } else {
                        changes.append(.remove(path))
                    }
                }
                guard entry.remaining == stateTotal, nextPrevious == previousPaths.count else {
                    throw FormatViolation("batch body does not hold exactly the states of its entries")
                }
                for (index, length) in puts {
                    guard case .put(let path, _) = changes[index] else { continue }
                    changes[index] = .put(path, Array(try entry.bytes(length)))
                }
            }
        } catch {
            throw (error as? FormatViolation) ?? FormatViolation("\(error)")
        }
        paths.append(contentsOf: newPaths)
        definedPaths.formUnion(newPaths)
        swap(&previousBody, &body)
        return changes
    }
}
