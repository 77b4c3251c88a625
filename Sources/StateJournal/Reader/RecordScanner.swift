/// A record read from a segment, checksum verified.
struct ScannedRecord {
    var type: RecordType
    var offset: Int64
    var framedLength: Int
    var checksum: UInt32
    var payload: [UInt8]
}

/// Reads the records of one segment in order and says where and why the first bad one is bad.
struct RecordScanner {
    private(set) var reader: FileWindowReader
    private(set) var offset: Int64
    /// The format version of the segment, which decides the record header's layout.
    let version: UInt16

    init(reader: FileWindowReader, offset: Int64, version: UInt16) {
        self.reader = reader
        self.offset = offset
        self.version = version
    }

    enum Step {
        case record(ScannedRecord)
        case end
        case invalid(reason: String)
    }

    /// Reads the record at the current offset and moves past it when it is valid.
    mutating func next() throws -> Step {
        if offset == reader.limit { return .end }
        switch try Self.validRecord(in: &reader, at: offset, version: version) {
        case .success(let record):
            offset += Int64(record.framedLength)
            return .record(record)
        case .failure(let violation):
            return .invalid(reason: violation.reason)
        }
    }

    /// The record at `offset` when it is whole and its checksum matches. With `checksumFirst`, for
    /// lengths read from bytes that may be damage, a record larger than a window is checksummed a
    /// window at a time and read whole only when it is intact: a claimed length costs reads, not memory.
    static func validRecord(
        in reader: inout FileWindowReader, at offset: Int64, version: UInt16, checksumFirst: Bool = false
    ) throws -> Result<
        ScannedRecord, FormatViolation
    > {
        let available = reader.limit - offset
        guard available >= Int64(RecordFraming.minimumHeaderSize(version)) else {
            return .failure(FormatViolation("\(available) bytes are too few for a record header"))
        }
        let headerBytes = Int(min(available, Int64(RecordFraming.maximumHeaderSize)))
        guard
            let read = try reader.withBytes(
                at: offset, count: headerBytes,
                { bytes in (RecordFraming.header(bytes, version: version), ByteReader.littleEndianU32(bytes, at: 0)) })
        else {
            return .failure(FormatViolation("record header runs past the end of the file"))
        }
        guard let header = read.0 else {
            return .failure(
                FormatViolation("record header runs past the end of the file or has a length of over 4 bytes"))
        }
        let checksum = read.1
        let length = header.length
        guard let type = RecordType(rawValue: header.typeByte),
            type != .compactCommit || RecordFraming.usesVarintLength(version)
        else {
            return .failure(FormatViolation("unknown record type \(header.typeByte)"))
        }
        guard length <= JournalLimits.maximumRecordLength else {
            return .failure(
                FormatViolation("record length \(length) exceeds the limit \(JournalLimits.maximumRecordLength)"))
        }
        guard Int64(length) <= available - Int64(header.size) else {
            return .failure(FormatViolation("record of \(length) bytes runs past the end of the file"))
        }
        let framed = header.size + length
        if checksumFirst && framed > FileWindowReader.chunk {
            var crc: UInt32 = 0
            var position = offset + 4
            let end = offset + Int64(framed)
            while position < end {
                let count = Int(min(Int64(FileWindowReader.chunk), end - position))
                guard
                    let next = try reader.withBytes(
                        at: position, count: count, { CRC32C.checksum($0, continuing: crc) })
                else { return .failure(FormatViolation("record of \(length) bytes runs past the end of the file")) }
                crc = next
                position += Int64(count)
            }
            guard crc == checksum else { return .failure(FormatViolation("record checksum mismatch")) }
        }
        let record = try reader.withBytes(at: offset, count: framed) { bytes -> ScannedRecord? in
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[4...])) == checksum else { return nil }
            return ScannedRecord(
                type: type, offset: offset, framedLength: framed, checksum: checksum,
                payload: Array(bytes[header.size...]))
        }
        guard let record, let record else { return .failure(FormatViolation("record checksum mismatch")) }
        return .success(record)
    }

    /// Whether a header whose type is known starts at `offset`.
    private static func knownType(in reader: inout FileWindowReader, at offset: Int64, version: UInt16) throws -> Bool {
        let count = Int(min(reader.limit - offset, Int64(RecordFraming.maximumHeaderSize)))
        guard count >= RecordFraming.minimumHeaderSize(version) else { return false }
        let header = try reader.withBytes(at: offset, count: count) { RecordFraming.header($0, version: version) }
        guard let header = header ?? nil else { return false }
        return RecordType(rawValue: header.typeByte) != nil
    }

    /// Whether the headers from `offset` on chain, each where the one before it ends, to the end of
    /// the file or to zeros written ahead, or hold for `chainHops` records.
    ///
    /// A varint length of one to three bytes fits in the file far more often than a random `u32`
    /// does, so in a segment of version 3 a header whose type is known followed by another such
    /// header is common in random bytes, and checksumming every such candidate would exhaust the
    /// budget long before a large damaged record ends. A chain of them is not.
    ///
    /// Each hop reads through a window of its own in `probes`: the claimed ends of neighbouring
    /// candidates lie near one another at each hop, but far apart from one hop to the next.
    private static func chainHolds(
        in probes: inout [FileWindowReader], from offset: Int64, version: UInt16, hops: inout Int
    ) throws -> Bool {
        var position = offset
        let limit = probes[0].limit
        for hop in 0..<chainHops {
            if position == limit { return true }
            hops += 1
            let count = Int(min(limit - position, Int64(RecordFraming.minimumHeaderSize)))
            let zeros = try probes[hop].withBytes(at: position, count: count) { $0.allSatisfy { $0 == 0 } }
            if zeros == true { return true }
            guard let header = try plausibleHeader(in: &probes[hop], at: position, version: version) else {
                return false
            }
            position += Int64(header.size + header.length)
        }
        return true
    }

    /// How many records ``chainHolds(in:from:version:hops:)`` follows.
    private static let chainHops = 8

    /// What the scan past damage charges its budget, in bytes, besides the bytes it checksums: for
    /// each plausible header it finds, for each header it reads to see whether a chain holds, and for
    /// each candidate it checksums. Random bytes rarely look like a header, so these charges cost
    /// them little; bytes forged to look like a header at every offset, whose chains hold and whose
    /// claims are a few bytes long, would otherwise be checksummed at every offset of a file for
    /// nearly nothing, at a cost of microseconds each: the charges make the work of the scan
    /// proportional to its budget, whatever the bytes.
    static let candidateCharge: Int64 = 32
    /// Charged for each header read to follow a chain.
    static let hopCharge: Int64 = 16
    /// Charged for each candidate checksummed, besides its claimed bytes.
    static let checksumCharge: Int64 = 128
    /// Charged for each window a chain's probes read: a read costs about what checksumming a few
    /// hundred bytes does, and claimed ends that land far apart make one a header.
    static let probeReadCharge: Int64 = 128
    /// The walk from one candidate to the next is charged a unit for this many bytes.
    static let walkChargeDivisor: Int64 = 4

    /// The header at `offset` when its type is known and its length within the limit and the file.
    private static func plausibleHeader(
        in reader: inout FileWindowReader, at offset: Int64, version: UInt16
    ) throws -> RecordFraming.Header? {
        let available = reader.limit - offset
        guard available >= Int64(RecordFraming.minimumHeaderSize(version)) else { return nil }
        let count = Int(min(available, Int64(RecordFraming.maximumHeaderSize)))
        let header = try reader.withBytes(at: offset, count: count) { RecordFraming.header($0, version: version) }
        guard let header = header ?? nil, isPlausible(header, available: available, version: version) else {
            return nil
        }
        return header
    }

    /// Whether `header`, with `available` bytes from its start to the limit, has a type the version
    /// knows and a length within the limit and the file.
    private static func isPlausible(_ header: RecordFraming.Header, available: Int64, version: UInt16) -> Bool {
        guard let type = RecordType(rawValue: header.typeByte),
            type != .compactCommit || RecordFraming.usesVarintLength(version)
        else { return false }
        return header.length <= JournalLimits.maximumRecordLength
            && Int64(header.length) <= available - Int64(header.size)
    }

    /// Looks for the next valid record after a bad one, within `budget`.
    ///
    /// Finding one means the bad bytes are damage in the middle, not a torn tail. A scan that looks
    /// past damage again and again in one file (to count what lies beyond it) passes the same
    /// budget to every call, so that the work of all of them together is bounded by the file's size,
    /// however many islands of valid records its bytes hold.
    static func resynchronize(
        in reader: inout FileWindowReader, after offset: Int64, version: UInt16, budget: inout ResyncBudget
    ) throws -> ScannedRecord? {
        // Damage inside a payload leaves the bad record's length intact: look first where it says the
        // next record starts, so that a large damaged record cannot exhaust the budget of the scan below.
        let available = reader.limit - offset
        if available >= Int64(RecordFraming.minimumHeaderSize(version)) && budget.plain > 0 {
            let count = Int(min(available, Int64(RecordFraming.maximumHeaderSize)))
            let claimed = try reader.withBytes(at: offset, count: count) { RecordFraming.header($0, version: version) }
            if let claimed = claimed ?? nil, claimed.length <= JournalLimits.maximumRecordLength {
                let next = offset + Int64(claimed.size + claimed.length)
                if next < reader.limit {
                    budget.candidates += 1
                    budget.plain -= candidateCharge
                    if let header = try plausibleHeader(in: &reader, at: next, version: version) {
                        budget.plain -= Int64(header.size + header.length) + checksumCharge
                        if case .success(let record) = try validRecord(
                            in: &reader, at: next, version: version, checksumFirst: true)
                        {
                            return record
                        }
                    }
                }
            }
        }
        // The length field of a damaged header is unknown, so every offset is a candidate, and random
        // bytes often claim lengths of megabytes whose checksums exhaust the budget. A first pass checks
        // only candidates that end at the end of the file or where another plausible header follows;
        // the second is the plain scan.
        let start = offset + 1
        if let record = try scan(
            from: start, in: &reader, version: version, budget: &budget.chained, candidates: &budget.candidates,
            chained: true)
        {
            return record
        }
        return try scan(
            from: start, in: &reader, version: version, budget: &budget.plain, candidates: &budget.candidates,
            chained: false)
    }

    private static func scan(
        from start: Int64, in reader: inout FileWindowReader, version: UInt16, budget: inout Int64,
        candidates: inout Int, chained: Bool
    ) throws -> ScannedRecord? {
        // The candidates are walked through the window of `reader`, which moves forward a chunk at a
        // time; the headers a candidate's claimed end leads to are read through `probes`, and the
        // claimed records themselves through `claims`: each window goes its own way, so that a claim
        // megabytes ahead does not make the others read their chunk again.
        let probe = FileWindowReader(fileSystem: reader.fileSystem, descriptor: reader.descriptor, limit: reader.limit)
        var probes = Array(repeating: probe.withWindowSize(probeWindow), count: chainHops)
        var claims = reader
        var probeReads = 0
        var candidate = start
        let lastStart = reader.limit - Int64(RecordFraming.minimumHeaderSize(version))
        while candidate <= lastStart && budget > 0 {
            let walkedFrom = candidate
            let found = try nextPlausibleHeader(in: &reader, from: &candidate, through: lastStart, version: version)
            // The walk costs little a byte, but a file of many islands of valid records is walked
            // once for each: it is charged too.
            budget -= (candidate - walkedFrom) / walkChargeDivisor
            guard let header = found else { return nil }
            candidates += 1
            let end = candidate + Int64(header.size + header.length)
            var followed = true
            budget -= candidateCharge
            if chained && end < reader.limit {
                var hops = 0
                if RecordFraming.usesVarintLength(version) {
                    followed = try chainHolds(in: &probes, from: end, version: version, hops: &hops)
                } else {
                    hops = 1
                    followed = try knownType(in: &probes[0], at: end, version: version)
                }
                budget -= Int64(hops) * hopCharge
                var reads = 0
                for index in probes.indices { reads += probes[index].reads }
                budget -= Int64(reads - probeReads) * probeReadCharge
                probeReads = reads
            }
            if followed {
                budget -= Int64(header.size + header.length) + checksumCharge
                if case .success(let record) = try validRecord(
                    in: &claims, at: candidate, version: version, checksumFirst: true)
                {
                    return record
                }
            }
            candidate += 1
        }
        return nil
    }

    /// The window of the reader that follows claimed ends: they land anywhere in the file, and
    /// each needs a header's bytes, not a chunk.
    static let probeWindow = 256

    /// Moves `candidate` to the first offset at or after it, up to `lastStart`, where a plausible
    /// header starts (see ``plausibleHeader(in:at:version:)``), and returns that header; `nil` when
    /// there is none. Reads the window a chunk at a time and tests each offset in it directly.
    private static func nextPlausibleHeader(
        in reader: inout FileWindowReader, from candidate: inout Int64, through lastStart: Int64, version: UInt16
    ) throws -> RecordFraming.Header? {
        let limit = reader.limit
        while candidate <= lastStart {
            let base = candidate
            let found = try reader.withWindow(at: base, minimum: 4 * RecordFraming.maximumHeaderSize) {
                window -> (Int, RecordFraming.Header)? in
                // Offsets whose header could run past this window but not past the file wait for the
                // next window, which starts at them.
                let count = window.count
                let reachesLimit = base + Int64(count) >= limit
                // Most offsets are rejected by their type byte alone, found without parsing the
                // header: after the fixed length, or after the varint's continued bytes.
                let varint = RecordFraming.usesVarintLength(version)
                let known = RecordType.rawValues
                let (lowest, highest) = (known.lowerBound, known.upperBound)
                let lengthEnd = 4 + RecordFraming.maximumLengthBytes
                var index = 0
                while index < count {
                    let end = index + RecordFraming.maximumHeaderSize
                    if end > count && !reachesLimit { break }
                    if base + Int64(index) > lastStart { break }
                    if end <= count {
                        var typeAt = index + lengthEnd
                        if varint {
                            typeAt = index + 4
                            while typeAt < index + lengthEnd && window[typeAt] >= 0x80 { typeAt += 1 }
                            typeAt += 1
                        }
                        if typeAt > index + lengthEnd || window[typeAt] < lowest || window[typeAt] > highest {
                            index += 1
                            continue
                        }
                    }
                    let bytes = UnsafeRawBufferPointer(rebasing: window[index..<min(end, count)])
                    if let header = RecordFraming.header(bytes, version: version),
                        isPlausible(header, available: limit - (base + Int64(index)), version: version)
                    {
                        return (index, header)
                    }
                    index += 1
                }
                candidate = base + Int64(index)
                return nil
            }
            guard let found else { return nil }
            if let (index, header) = found {
                candidate = base + Int64(index)
                return header
            }
            // No progress means the window could not hold a header: the file ended before the limit.
            if candidate == base { return nil }
        }
        return nil
    }
}

/// What the scan past damage may still spend in one file: the first pass (candidates whose chains
/// hold) and the plain scan each have their own, in bytes checksummed and the charges of
/// ``RecordScanner/candidateCharge`` and the others; both start at four times the file's size
/// (at least 4 MiB) and are passed to every look past damage in the same file.
struct ResyncBudget {
    var chained: Int64
    var plain: Int64
    /// The candidates tried so far, whatever their pass.
    var candidates = 0

    init(fileSize: Int64) {
        self.init(each: 4 * max(fileSize, 1 << 20))
    }

    init(each: Int64) {
        chained = each
        plain = each
    }
}
