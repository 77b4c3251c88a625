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

    /// The record at `offset` when it is whole and its checksum matches.
    static func validRecord(in reader: inout FileWindowReader, at offset: Int64, version: UInt16) throws -> Result<
        ScannedRecord, FormatViolation
    > {
        let available = reader.limit - offset
        guard available >= Int64(RecordFraming.minimumHeaderSize(version)) else {
            return .failure(FormatViolation("\(available) bytes are too few for a record header"))
        }
        let headerBytes = Int(min(available, Int64(RecordFraming.maximumHeaderSize)))
        guard let bytes = try reader.withBytes(at: offset, count: headerBytes, { Array($0) }) else {
            return .failure(FormatViolation("record header runs past the end of the file"))
        }
        guard let header = bytes.withUnsafeBytes({ RecordFraming.header($0, version: version) }) else {
            return .failure(
                FormatViolation("record header runs past the end of the file or has a length of over 4 bytes"))
        }
        let checksum = bytes.withUnsafeBytes { ByteReader.littleEndianU32($0, at: 0) }
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
    private static func chainHolds(in reader: inout FileWindowReader, from offset: Int64, version: UInt16) throws
        -> Bool
    {
        var position = offset
        for _ in 0..<chainHops {
            if position == reader.limit { return true }
            let count = Int(min(reader.limit - position, Int64(RecordFraming.minimumHeaderSize)))
            let zeros = try reader.withBytes(at: position, count: count) { $0.allSatisfy { $0 == 0 } }
            if zeros == true { return true }
            guard let header = try plausibleHeader(in: &reader, at: position, version: version) else { return false }
            position += Int64(header.size + header.length)
        }
        return true
    }

    /// How many records ``chainHolds(in:from:version:)`` follows.
    private static let chainHops = 8

    /// The header at `offset` when its type is known and its length within the limit and the file.
    private static func plausibleHeader(
        in reader: inout FileWindowReader, at offset: Int64, version: UInt16
    ) throws -> RecordFraming.Header? {
        let available = reader.limit - offset
        guard available >= Int64(RecordFraming.minimumHeaderSize(version)) else { return nil }
        let count = Int(min(available, Int64(RecordFraming.maximumHeaderSize)))
        let header = try reader.withBytes(at: offset, count: count) { RecordFraming.header($0, version: version) }
        guard let header = header ?? nil, let type = RecordType(rawValue: header.typeByte),
            type != .compactCommit || RecordFraming.usesVarintLength(version),
            header.length <= JournalLimits.maximumRecordLength,
            Int64(header.length) <= available - Int64(header.size)
        else { return nil }
        return header
    }

    /// Looks for the next valid record after a bad one, within a budget of checksummed bytes.
    ///
    /// Finding one means the bad bytes are damage in the middle, not a torn tail.
    static func resynchronize(
        in reader: inout FileWindowReader, after offset: Int64, version: UInt16, budget: inout Int64
    ) throws -> ScannedRecord? {
        // Damage inside a payload leaves the bad record's length intact: look first where it says the
        // next record starts, so that a large damaged record cannot exhaust the budget of the scan below.
        let available = reader.limit - offset
        if available >= Int64(RecordFraming.minimumHeaderSize(version)) {
            let count = Int(min(available, Int64(RecordFraming.maximumHeaderSize)))
            let claimed = try reader.withBytes(at: offset, count: count) { RecordFraming.header($0, version: version) }
            if let claimed = claimed ?? nil, claimed.length <= JournalLimits.maximumRecordLength {
                let next = offset + Int64(claimed.size + claimed.length)
                if next < reader.limit,
                    case .success(let record) = try validRecord(in: &reader, at: next, version: version)
                {
                    return record
                }
            }
        }
        // The length field of a damaged header is unknown, so every offset is a candidate, and random
        // bytes often claim lengths of megabytes whose checksums exhaust the budget. A first pass checks
        // only candidates that end at the end of the file or where another plausible header follows;
        // the second is the plain scan.
        let start = offset + 1
        var chainedBudget = budget
        if let record = try scan(from: start, in: &reader, version: version, budget: &chainedBudget, chained: true) {
            return record
        }
        return try scan(from: start, in: &reader, version: version, budget: &budget, chained: false)
    }

    private static func scan(
        from start: Int64, in reader: inout FileWindowReader, version: UInt16, budget: inout Int64, chained: Bool
    ) throws -> ScannedRecord? {
        var candidate = start
        let lastStart = reader.limit - Int64(RecordFraming.minimumHeaderSize(version))
        while candidate <= lastStart && budget > 0 {
            if let header = try plausibleHeader(in: &reader, at: candidate, version: version) {
                let end = candidate + Int64(header.size + header.length)
                var followed = true
                if chained && end < reader.limit {
                    followed =
                        RecordFraming.usesVarintLength(version)
                        ? try chainHolds(in: &reader, from: end, version: version)
                        : try knownType(in: &reader, at: end, version: version)
                }
                if followed {
                    budget -= Int64(header.size + header.length)
                    if case .success(let record) = try validRecord(in: &reader, at: candidate, version: version) {
                        return record
                    }
                }
            }
            candidate += 1
        }
        return nil
    }
}
