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

    init(reader: FileWindowReader, offset: Int64) {
        self.reader = reader
        self.offset = offset
    }

    enum Step {
        case record(ScannedRecord)
        case end
        case invalid(reason: String)
    }

    /// Reads the record at the current offset and moves past it when it is valid.
    mutating func next() throws -> Step {
        if offset == reader.limit { return .end }
        switch try Self.validRecord(in: &reader, at: offset) {
        case .success(let record):
            offset += Int64(record.framedLength)
            return .record(record)
        case .failure(let violation):
            return .invalid(reason: violation.reason)
        }
    }

    /// The record at `offset` when it is whole and its checksum matches.
    static func validRecord(in reader: inout FileWindowReader, at offset: Int64) throws -> Result<
        ScannedRecord, FormatViolation
    > {
        let available = reader.limit - offset
        guard available >= Int64(RecordFraming.headerSize) else {
            return .failure(FormatViolation("\(available) bytes are too few for a record header"))
        }
        guard let header = try reader.withBytes(at: offset, count: RecordFraming.headerSize, { Array($0) }) else {
            return .failure(FormatViolation("record header runs past the end of the file"))
        }
        let checksum = header.withUnsafeBytes { ByteReader.littleEndianU32($0, at: 0) }
        let length = Int(header.withUnsafeBytes { ByteReader.littleEndianU32($0, at: 4) })
        guard let type = RecordType(rawValue: header[8]) else {
            return .failure(FormatViolation("unknown record type \(header[8])"))
        }
        guard length <= JournalLimits.maximumRecordLength else {
            return .failure(
                FormatViolation("record length \(length) exceeds the limit \(JournalLimits.maximumRecordLength)"))
        }
        guard Int64(length) <= available - Int64(RecordFraming.headerSize) else {
            return .failure(FormatViolation("record of \(length) bytes runs past the end of the file"))
        }
        let framed = RecordFraming.headerSize + length
        let record = try reader.withBytes(at: offset, count: framed) { bytes -> ScannedRecord? in
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[4...])) == checksum else { return nil }
            return ScannedRecord(
                type: type, offset: offset, framedLength: framed, checksum: checksum,
                payload: Array(bytes[RecordFraming.headerSize...]))
        }
        guard let record, let record else { return .failure(FormatViolation("record checksum mismatch")) }
        return .success(record)
    }

    /// Looks for the next valid record after a bad one, within a budget of checksummed bytes.
    ///
    /// Finding one means the bad bytes are damage in the middle, not a torn tail.
    static func resynchronize(
        in reader: inout FileWindowReader, after offset: Int64, budget: inout Int64
    ) throws -> ScannedRecord? {
        let lastStart = reader.limit - Int64(RecordFraming.headerSize)
        // Damage inside a payload leaves the bad record's length intact: look first where it says the
        // next record starts, so that a large damaged record cannot exhaust the budget of the scan below.
        let claimed = try reader.withBytes(at: offset, count: RecordFraming.headerSize) {
            Int(ByteReader.littleEndianU32($0, at: 4))
        }
        if let claimed, claimed <= JournalLimits.maximumRecordLength {
            let next = offset + Int64(RecordFraming.headerSize + claimed)
            if next <= lastStart, case .success(let record) = try validRecord(in: &reader, at: next) { return record }
        }
        // The length field of a damaged header is unknown, so every offset is a candidate, and random
        // bytes often claim lengths of megabytes whose checksums exhaust the budget. A first pass checks
        // only candidates that end at the end of the file or where another record type byte follows;
        // the second is the plain scan.
        let start = offset + 1
        var chainedBudget = budget
        if let record = try scan(from: start, in: &reader, budget: &chainedBudget, chained: true) { return record }
        return try scan(from: start, in: &reader, budget: &budget, chained: false)
    }

    private static func scan(
        from start: Int64, in reader: inout FileWindowReader, budget: inout Int64, chained: Bool
    ) throws -> ScannedRecord? {
        var candidate = start
        let lastStart = reader.limit - Int64(RecordFraming.headerSize)
        while candidate <= lastStart && budget > 0 {
            let plausible = try reader.withBytes(at: candidate, count: RecordFraming.headerSize) { header -> Int? in
                guard RecordType(rawValue: header[8]) != nil else { return nil }
                let length = Int(ByteReader.littleEndianU32(header, at: 4))
                return length <= JournalLimits.maximumRecordLength ? length : nil
            }
            if let length = plausible ?? nil,
                Int64(length) <= reader.limit - candidate - Int64(RecordFraming.headerSize)
            {
                let end = candidate + Int64(RecordFraming.headerSize + length)
                var followed = true
                if chained && end < reader.limit {
                    let next = try reader.withBytes(at: end, count: RecordFraming.headerSize) {
                        RecordType(rawValue: $0[8]) != nil
                    }
                    followed = next ?? false
                }
                if followed {
                    budget -= Int64(length + RecordFraming.headerSize)
                    if case .success(let record) = try validRecord(in: &reader, at: candidate) { return record }
                }
            }
            candidate += 1
        }
        return nil
    }
}
