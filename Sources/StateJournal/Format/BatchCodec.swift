/// What one batch entry does. The numbers are on disk: never renumber or reuse them.
enum EntryOperation: UInt8, Sendable {
    case put = 1
    case remove = 2
    case removeAll = 3
}

/// The payload of a batch record: some entries of one epoch, compressed together.
///
/// ```
/// entry count: varint
/// per entry:   flags: u8 (bits 0-1 operation, bit 2 "compressed against the previous version")
///              [put, remove] path reference: varint (0 = a new path defined in the body, n = path n)
///              [put] state length: varint
/// encoding: u8 (0 = raw, 1 = LZ4 block)
/// body length: varint
/// body crc32c: u32
/// body: the definitions of new paths, in order, then the states of the puts, in order
/// ```
/// A path definition is `component count: varint` then `length: varint, UTF-8 bytes` per component;
/// paths are numbered from 1 in the order they are defined within a segment.
///
/// The LZ4 dictionary is the last `65536 - P` bytes of the previous batch's body in the same epoch,
/// followed by the previous versions of the entries flagged bit 2, in entry order, where `P` is the
/// total size of those previous versions (at most 65536).
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
    private var descriptors = ByteWriter(capacity: 256)
    private var pathDefinitions = ByteWriter(capacity: 256)
    private var states: [UInt8] = []
    private(set) var previousVersions: [UInt8] = []

    var bodySize: Int { pathDefinitions.bytes.count + states.count }
    var isEmpty: Bool { entryCount == 0 }

    /// Adds an entry. `reference` 0 defines `path` anew; `previous` is the path's current state when the
    /// writer knows it, offered as dictionary material.
    mutating func add(
        _ operation: EntryOperation, path: RestorationPath?, reference: UInt64, state: UnsafeRawBufferPointer?,
        previous: [UInt8]?
    ) {
        var flags = operation.rawValue
        if let previous, previousVersions.count + previous.count <= BatchCodec.dictionaryLimit, !previous.isEmpty {
            flags |= BatchCodec.flagUsesPrevious
            previousVersions.append(contentsOf: previous)
        }
        descriptors.u8(flags)
        if operation != .removeAll {
            descriptors.varint(reference)
            if reference == 0, let path {
                pathDefinitions.varint(path.components.count)
                for component in path.components { pathDefinitions.lengthPrefixed(component) }
            }
        }
        if let state {
            descriptors.varint(state.count)
            states.append(contentsOf: state)
        }
        entryCount += 1
    }

    /// The body, uncompressed.
    func body() -> [UInt8] { pathDefinitions.bytes + states }

    /// Encodes the record payload and returns it with the raw body (the next batch's dictionary source).
    func encode(compressor: LZ4Compressor, previousBody: [UInt8], dictionary: inout [UInt8]) -> (payload: [UInt8], body: [UInt8]) {
        let body = body()
        BatchCodec.assembleDictionary(previousBody: previousBody, previousVersions: previousVersions, into: &dictionary)
        let compressed = body.withUnsafeBytes { input in
            dictionary.withUnsafeBytes { compressor.compress(input, dictionary: $0) }
        }
        var writer = ByteWriter(capacity: descriptors.bytes.count + 16 + (compressed?.count ?? body.count))
        writer.varint(entryCount)
        writer.raw(descriptors.bytes)
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
    private var previousBody: [UInt8] = []
    private var dictionary: [UInt8] = []
    private var previousVersions: [UInt8] = []

    /// Forgets the previous body: called at each epoch boundary.
    mutating func startEpoch() { previousBody.removeAll(keepingCapacity: true) }

    private struct Descriptor {
        var operation: EntryOperation
        var usesPrevious: Bool
        var reference: UInt64
        var stateLength: Int
    }

    /// Decodes one batch payload into changes. `current` gives a path's state as of just before this
    /// batch (the committed state overlaid with earlier batches of the same epoch).
    mutating func decode(
        _ payload: UnsafeRawBufferPointer, current: (RestorationPath) -> [UInt8]?
    ) throws(FormatViolation) -> [JournalChange] {
        var reader = ByteReader(payload)
        let count = try reader.count(atMost: JournalLimits.maximumBatchEntries, "batch entry count")
        guard count > 0 else { throw FormatViolation("batch has no entries") }
        var descriptors: [Descriptor] = []
        descriptors.reserveCapacity(count)
        var newPaths = 0
        var stateTotal = 0
        for _ in 0..<count {
            let flags = try reader.u8()
            guard flags & ~0x07 == 0, let operation = EntryOperation(rawValue: flags & 0x03) else {
                throw FormatViolation("unknown entry flags \(flags)")
            }
            let usesPrevious = flags & BatchCodec.flagUsesPrevious != 0
            var reference: UInt64 = 0
            var stateLength = 0
            if operation != .removeAll {
                reference = try reader.varint()
                if reference == 0 {
                    newPaths += 1
                } else if reference > UInt64(paths.count) + UInt64(newPaths) {
                    throw FormatViolation("entry refers to path \(reference), which is not defined yet")
                }
            }
            if operation == .put {
                stateLength = try reader.count(atMost: JournalLimits.maximumStateSize, "state length")
                stateTotal += stateLength
            }
            guard !usesPrevious || operation == .put else { throw FormatViolation("only a put can use a previous version") }
            descriptors.append(Descriptor(operation: operation, usesPrevious: usesPrevious, reference: reference, stateLength: stateLength))
        }
        let encoding = try reader.u8()
        let bodyLength = try reader.count(atMost: JournalLimits.maximumRecordLength, "body length")
        guard bodyLength >= stateTotal else { throw FormatViolation("body is shorter than the states it holds") }
        let bodyChecksum = try reader.u32()
        let stored = try reader.bytes(reader.remaining)

        // Resolve references that point at already known paths; the dictionary needs their previous versions.
        let firstNewID = paths.count + 1
        var body = [UInt8](repeating: 0, count: bodyLength)
        switch encoding {
        case 0:
            guard stored.count == bodyLength else { throw FormatViolation("raw body length does not match") }
            body.withUnsafeMutableBytes { $0.copyMemory(from: stored) }
        case 1:
            previousVersions.removeAll(keepingCapacity: true)
            for descriptor in descriptors where descriptor.usesPrevious {
                guard descriptor.reference != 0, descriptor.reference < UInt64(firstNewID) else {
                    throw FormatViolation("a new path cannot be compressed against a previous version")
                }
                guard let previous = current(paths[Int(descriptor.reference) - 1]) else {
                    throw FormatViolation("entry is compressed against a previous version that does not exist")
                }
                previousVersions.append(contentsOf: previous)
                guard previousVersions.count <= BatchCodec.dictionaryLimit else {
                    throw FormatViolation("previous versions exceed the dictionary limit")
                }
            }
            BatchCodec.assembleDictionary(previousBody: previousBody, previousVersions: previousVersions, into: &dictionary)
            let ok = body.withUnsafeMutableBytes { destination in
                dictionary.withUnsafeBytes { LZ4Decompressor.decompress(stored, dictionary: $0, into: destination) }
            }
            guard ok else { throw FormatViolation("LZ4 block does not decode to the body length") }
        default:
            throw FormatViolation("unknown body encoding \(encoding)")
        }
        guard CRC32C.checksum(body) == bodyChecksum else { throw FormatViolation("body checksum mismatch after decoding") }

        var changes: [JournalChange] = []
        changes.reserveCapacity(count)
        do {
        try body.withUnsafeBytes { (bodyBytes) in
            var bodyReader = ByteReader(bodyBytes)
            var definedPaths: [RestorationPath] = []
            for descriptor in descriptors where descriptor.operation != .removeAll && descriptor.reference == 0 {
                let depth = try bodyReader.count(atMost: JournalLimits.maximumPathDepth, "path depth")
                var components: [String] = []
                components.reserveCapacity(depth)
                for _ in 0..<depth {
                    components.append(try bodyReader.string(atMost: JournalLimits.maximumComponentLength, "path component"))
                }
                definedPaths.append(RestorationPath(components))
            }
            guard bodyReader.remaining == stateTotal else {
                throw FormatViolation("body holds \(bodyReader.remaining) state bytes, entries claim \(stateTotal)")
            }
            var nextDefined = 0
            for descriptor in descriptors {
                let path: RestorationPath
                switch descriptor.operation {
                case .removeAll:
                    changes.append(.removeAll)
                    continue
                case .put, .remove:
                    if descriptor.reference == 0 {
                        path = definedPaths[nextDefined]
                        nextDefined += 1
                    } else if descriptor.reference < UInt64(firstNewID) {
                        path = paths[Int(descriptor.reference) - 1]
                    } else {
                        path = definedPaths[Int(descriptor.reference) - firstNewID]
                    }
                }
                if descriptor.operation == .put {
                    changes.append(.put(path, Array(try bodyReader.bytes(descriptor.stateLength))))
                } else {
                    changes.append(.remove(path))
                }
            }
            paths.append(contentsOf: definedPaths)
        }
        } catch {
            throw (error as? FormatViolation) ?? FormatViolation("\(error)")
        }
        swap(&previousBody, &body)
        return changes
    }
}
