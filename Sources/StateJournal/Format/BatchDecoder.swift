/// Where a ``BatchDecoder`` delivers the entries of a batch, by path number: the position of the path
/// in the segment's path table (``BatchDecoder/paths``), so that a path is not looked up by value for
/// every entry that names it.
protocol BatchEntrySink {
    /// Appends the state of path number `index` as of the end of the previous batch (the committed
    /// state overlaid with the earlier batches of the same epoch) to `buffer`, or returns `false`
    /// when the path has none.
    func appendCurrentState(ofPath index: Int, to buffer: inout [UInt8]) -> Bool
    /// Reads, and discards, what ``appendCurrentState(ofPath:to:)`` will read for each of `indices`,
    /// in one pass whose memory loads do not wait on one another, so that the cache misses of a
    /// batch's previous versions overlap instead of coming one after another. Returns a value
    /// derived from what it read, which the caller must use.
    func warmCurrentStates(ofPaths indices: UnsafeBufferPointer<Int>) -> Int
    /// The paths numbered `numbers` in `paths` (which keeps them valid) are defined: called with the
    /// paths each batch defines, before that batch's entries are delivered.
    mutating func pathsDefined(_ numbers: Range<Int>, in paths: SegmentPaths)
    /// The path now holds `state`, which is valid only during the call.
    mutating func put(path index: Int, state: UnsafeRawBufferPointer)
    mutating func remove(path index: Int)
    mutating func removeAll()
}

/// Decodes batch records on the reader's side. Keeps the segment's path table and the previous
/// batch's body, which the next batch of the same epoch compresses against.
///
/// A batch is checked whole (checksum, entry headers, path definitions, state lengths) before any of
/// its entries reaches the sink, so a damaged batch delivers nothing.
struct BatchDecoder {
    /// The segment's paths by number: a writer defines each path once per segment.
    let paths = SegmentPaths()
    private var previousBody: [UInt8] = []
    private var body: [UInt8] = []
    private var dictionary: [UInt8] = []
    private var previousVersions: [UInt8] = []
    /// The path numbers of the batch's previous versions, in order.
    private var previousPaths: [Int] = []
    /// What ``BatchEntrySink/warmCurrentStates(ofPaths:)`` returned, kept so that its reads stay.
    private(set) var warmth = 0
    /// The entries of the batch being decoded, between checking and delivering them.
    private var entries: [Entry] = []
    /// The number of paths defined before the batch being decoded.
    private var definedBefore = 0

    /// Zeros that buffers grow by, a chunk at a time, in debug builds.
    private static let zeros = [UInt8](repeating: 0, count: 64 << 10)

    /// One entry header: `path` is a path number, `length` a put's state length.
    private struct Entry {
        var operation: EntryOperation
        var path: Int
        var length: Int
    }

    /// Forgets the previous body: called at each epoch boundary.
    mutating func startEpoch() { previousBody.removeAll(keepingCapacity: true) }

    /// Decodes one batch payload, delivers its entries to `sink` in order and returns how many there
    /// were.
    mutating func decode<Sink: BatchEntrySink>(
        _ payload: UnsafeRawBufferPointer, into sink: inout Sink
    ) throws(FormatViolation) -> Int {
        var reader = ByteReader(payload)
        let count = try reader.count(atMost: JournalLimits.maximumBatchEntries, "batch entry count")
        guard count > 0 else { throw FormatViolation("batch has no entries") }
        let previousCount = try reader.count(atMost: count, "previous-version count")
        let previousStart = reader.position
        previousVersions.removeAll(keepingCapacity: true)
        previousPaths.removeAll(keepingCapacity: true)
        for _ in 0..<previousCount {
            let reference = try reader.varint()
            guard reference >= 1, reference <= UInt64(paths.count) else {
                throw FormatViolation("previous-version reference \(reference) is not a path defined before this batch")
            }
            previousPaths.append(Int(reference) - 1)
        }
        // Replaying a long history, these are the reads that miss the cache: one path's value after
        // another, scattered over the heap. Touching them all first lets the misses overlap.
        warmth &+= previousPaths.withUnsafeBufferPointer { sink.warmCurrentStates(ofPaths: $0) }
        for index in previousPaths {
            guard sink.appendCurrentState(ofPath: index, to: &previousVersions) else {
                let path = paths[index].restorationPath
                throw FormatViolation("entry is compressed against a previous version of \(path) that does not exist")
            }
            guard previousVersions.count <= BatchCodec.dictionaryLimit else {
                throw FormatViolation("previous versions exceed the dictionary limit")
            }
        }
        let previousEnd = reader.position
        let encoding = try reader.u8()
        let bodyLength = try reader.count(atMost: JournalLimits.maximumRecordLength, "body length")
        let bodyChecksum = try reader.u32()
        let stored = try reader.bytes(reader.remaining)

        // The body's buffer is the one the body before last used, zeroed to the new length.
        body.removeAll(keepingCapacity: true)
        #if DEBUG
            // Unoptimized, `repeatElement` is appended one byte at a time (about a thousand
            // instructions a byte): copy zeros a chunk at a time instead, so that debug builds
            // replay fast too. Optimized, the line below is a `memset`, cheaper than a copy.
            while body.count < bodyLength { body.append(contentsOf: Self.zeros.prefix(bodyLength - body.count)) }
        #else
            body.append(contentsOf: repeatElement(0, count: bodyLength))
        #endif
        switch encoding {
        case 0:
            guard stored.count == bodyLength else { throw FormatViolation("raw body length does not match") }
            body.withUnsafeMutableBytes { $0.copyMemory(from: stored) }
        case 1:
            BatchCodec.assembleDictionary(
                previousBody: previousBody, previousVersions: previousVersions, into: &dictionary)
            let decoded = body.withUnsafeMutableBytes { destination in
                dictionary.withUnsafeBytes { LZ4Decompressor.decompress(stored, dictionary: $0, into: destination) }
            }
            guard decoded else { throw FormatViolation("LZ4 block does not decode to the body length") }
        default:
            throw FormatViolation("unknown body encoding \(encoding)")
        }
        guard CRC32C.checksum(body) == bodyChecksum else {
            throw FormatViolation("body checksum mismatch after decoding")
        }

        let previousReferences = UnsafeRawBufferPointer(rebasing: payload[previousStart..<previousEnd])
        let decodedBody = body  // shares the buffer: `self` changes below while it is read
        let statesStart: Int
        do {
            statesStart = try decodedBody.withUnsafeBytes { bodyBytes in
                var entry = ByteReader(bodyBytes)
                return try readHeaders(
                    count, from: &entry, previousReferences: previousReferences, previousCount: previousCount)
            }
        } catch {
            throw (error as? FormatViolation) ?? FormatViolation("\(error)")
        }
        decodedBody.withUnsafeBytes { bodyBytes in
            sink.pathsDefined(definedBefore..<paths.count, in: paths)
            var position = statesStart
            for header in entries {
                switch header.operation {
                case .put:
                    let state = UnsafeRawBufferPointer(rebasing: bodyBytes[position..<position + header.length])
                    sink.put(path: header.path, state: state)
                    position += header.length
                case .remove: sink.remove(path: header.path)
                case .removeAll: sink.removeAll()
                }
            }
        }
        swap(&previousBody, &body)
        return count
    }

    /// Reads and checks the `count` entry headers into ``entries``, defines the paths they define,
    /// and returns where the states start. On failure the segment's paths are as before.
    private mutating func readHeaders(
        _ count: Int, from entry: inout ByteReader, previousReferences: UnsafeRawBufferPointer, previousCount: Int
    ) throws(FormatViolation) -> Int {
        entries.removeAll(keepingCapacity: true)
        definedBefore = paths.count
        do throws(FormatViolation) {
            var previous = ByteReader(previousReferences)
            var nextPrevious = 0
            var stateTotal = 0
            var pathReader = PathReader()
            for _ in 0..<count {
                let flags = try entry.u8()
                guard flags & ~0x07 == 0, let operation = EntryOperation(rawValue: flags & 0x03) else {
                    throw FormatViolation("unknown entry flags \(flags)")
                }
                if operation == .removeAll {
                    guard flags == operation.rawValue else { throw FormatViolation("a clear entry carries flags") }
                    entries.append(Entry(operation: .removeAll, path: 0, length: 0))
                    continue
                }
                let path: Int
                if flags & BatchCodec.flagUsesPrevious != 0 {
                    guard operation == .put, nextPrevious < previousCount else {
                        throw FormatViolation("entry claims a previous version that the batch does not list")
                    }
                    // Checked to be a defined path number when the previous versions were gathered.
                    path = Int(try previous.varint()) - 1
                    nextPrevious += 1
                } else {
                    let reference = try entry.varint()
                    if reference == 0 {
                        let defined = try pathReader.check(from: &entry)
                        guard paths.define(defined) else {
                            let path = EncodedPath(start: defined.baseAddress!, count: defined.count).restorationPath
                            throw FormatViolation("path \(path) is defined twice in the segment")
                        }
                        path = paths.count - 1
                    } else if reference <= UInt64(paths.count) {
                        path = Int(reference) - 1
                    } else {
                        throw FormatViolation("entry refers to path \(reference), which is not defined yet")
                    }
                }
                var length = 0
                if operation == .put {
                    length = try entry.count(atMost: JournalLimits.maximumStateSize, "state length")
                    stateTotal += length
                }
                entries.append(Entry(operation: operation, path: path, length: length))
            }
            guard entry.remaining == stateTotal, nextPrevious == previousCount else {
                throw FormatViolation("batch body does not hold exactly the states of its entries")
            }
            return entry.position
        } catch {
            paths.truncate(to: definedBefore)
            throw error
        }
    }
}
