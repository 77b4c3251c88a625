import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// The scan past damage, which looks for the next intact record at every offset of what follows:
/// on bytes nobody wrote as a segment (a forged or garbage file), it reads each window a few times
/// and never a claimed length whole, and it finds what the plain scan at every offset finds.
@Suite struct DamageScanTests {
    /// A store of a few epochs whose only segment is then replaced, from `keeping` bytes on, by
    /// `garbage` random bytes.
    private func storeWithGarbage(_ directory: TemporaryDirectory, keeping: Int?, garbage: Int, seed: UInt64) throws
        -> (store: String, segment: String)
    {
        let store = directory.appending("store")
        var workload = WorkloadGenerator(seed: seed, pathCount: 5, removeAllPercent: 0)
        var model = JournalModel()
        let journal = try openJournal(store, testOptions(durability: .everyCommit))
        try commitEpochs(3, journal, &workload, &model)
        try journal.close()
        let segment = store + "/" + (try Corruption.segmentNames(in: store))[0]
        let kept = try Corruption.readFile(segment).prefix(keeping ?? 0)
        try Corruption.writeFile(segment, Array(kept) + Corruption.garbage(garbage, seed: seed))
        return (store, segment)
    }

    /// Seeds 1 and 2 replace the whole segment, header too; 3 and 4 keep its header.
    @Test(arguments: UInt64(1)...4)
    func aSegmentOfRandomBytesIsReadAFewTimesOverInWindowsAndNeverAClaimedLengthWhole(seed: UInt64) throws {
        let keeping = seed > 2 ? SegmentHeader.size : nil
        let directory = TemporaryDirectory()
        let (store, segment) = try storeWithGarbage(directory, keeping: keeping, garbage: 3 << 20, seed: seed)
        let size = try fileSize(segment)
        let fileSystem = FaultInjectingFileSystem()
        let state = try JournalReader(path: store, recovery: .stopAtDamage, fileSystem: fileSystem).state()
        // Without a header the segment is damage; with one, nothing in it vouches for the bytes
        // after it, which a power cut could have left: an unsynced tail.
        #expect(seed > 2 || state.damage != nil)
        #expect(state.entries.isEmpty)
        // Random bytes claim records of up to the whole rest of the file at about one offset in a
        // hundred. Each of the two passes past damage reads the file once, checksums claims within
        // a budget of four times its size, and reads a few hundred bytes where claims end: about
        // twelve times the file. A scan that read each claim whole holds megabytes at once; one that
        // read a window again for each claim reads the file hundreds of times over.
        #expect(
            fileSystem.largestRead <= FileWindowReader.chunk,
            "a read of \(fileSystem.largestRead) bytes at once from a \(size)-byte segment")
        #expect(
            fileSystem.bytesRead <= 16 * size,
            "\(fileSystem.bytesRead) bytes read to scan a \(size)-byte segment")
    }

    /// Bytes forged to look like record headers: all `0x01` (at every offset a header of one byte
    /// of type 1 whose chain holds to the end of the file), all `0x02`, a header every nine bytes
    /// claiming 24 MiB (so that each one's claimed end is another's start), or random bytes.
    static func headerShapedBytes(_ count: Int, pattern: Int) -> [UInt8] {
        switch pattern {
        case 0: return Array(repeating: 1, count: count)
        case 1: return Array(repeating: 2, count: count)
        case 2:
            let unit: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF] + Corruption.varint(25_165_818) + [1]
            return Array((0..<(count / unit.count + 1)).flatMap { _ in unit }.prefix(count))
        default: return Corruption.garbage(count, seed: UInt64(count))
        }
    }

    /// The scan past damage charges its budget for each candidate, each header of a chain and each
    /// window a probe reads, so the work of a scan depends on the budget (four times the file),
    /// not on what the bytes look like: forged header-shaped bytes take a few times the reads of
    /// random ones, not hundreds.
    @Test func bytesShapedLikeRecordHeadersAtEveryOffsetCostAboutWhatRandomBytesCost() throws {
        let directory = TemporaryDirectory()
        let size = 2 << 20
        var reads: [Int] = []
        for pattern in 0..<4 {
            let file = directory.appending("segment-\(pattern)")
            try Corruption.writeFile(file, Self.headerShapedBytes(size, pattern: pattern))
            let fileSystem = FaultInjectingFileSystem()
            let descriptor = try fileSystem.open(file, .read)
            defer { fileSystem.close(descriptor) }
            var reader = FileWindowReader(fileSystem: fileSystem, descriptor: descriptor, limit: Int64(size))
            var budget = ResyncBudget(fileSize: Int64(size))
            let found = try RecordScanner.resynchronize(
                in: &reader, after: 0, version: FormatVersion.current, budget: &budget)
            #expect(found == nil)
            reads.append(fileSystem.callCount(of: .read))
        }
        let random = reads[3]
        for pattern in 0..<3 {
            #expect(
                reads[pattern] <= 4 * random + 64,
                "pattern \(pattern): \(reads[pattern]) reads, against \(random) for random bytes")
        }
    }

    /// Looks past damage from offset 0 of `bytes`, then past each bad record after the valid ones it
    /// finds, with one budget, as counting what lies beyond damage does: the valid records found
    /// and the candidates tried.
    private func walkPastDamage(_ bytes: [UInt8], in directory: TemporaryDirectory, name: String) throws -> (
        found: Int, candidates: Int
    ) {
        let file = directory.appending(name)
        try Corruption.writeFile(file, bytes)
        let fileSystem = PosixFileSystem()
        let descriptor = try fileSystem.open(file, .read)
        defer { fileSystem.close(descriptor) }
        var reader = FileWindowReader(fileSystem: fileSystem, descriptor: descriptor, limit: Int64(bytes.count))
        var budget = ResyncBudget(fileSize: Int64(bytes.count))
        var position: Int64 = 0
        var found = 0
        while let record = try RecordScanner.resynchronize(
            in: &reader, after: position, version: FormatVersion.current, budget: &budget)
        {
            var scanner = RecordScanner(reader: reader, offset: record.offset, version: FormatVersion.current)
            scanning: while true {
                switch try scanner.next() {
                case .record: found += 1
                case .end: return (found, budget.candidates)
                case .invalid: break scanning
                }
            }
            reader = scanner.reader
            position = scanner.offset
        }
        return (found, budget.candidates)
    }

    /// Islands of a bad byte, 4 KiB of bytes shaped like record headers and one valid record, over
    /// and over: each look past damage finds the next island's record, and used to start with a
    /// budget of its own for its first pass, so that the file's every byte was tried at the cost of
    /// a chain (5 s a MiB in a debug build). One budget for all the looks bounds them together.
    @Test func islandsOfValidRecordsAmongHeaderShapedBytesCostAboutWhatRandomBytesCost() throws {
        let directory = TemporaryDirectory()
        let record = Corruption.frame(type: 1, payload: [9, 9, 9, 9], version: FormatVersion.current)
        let island = [0xFF] + Array(repeating: UInt8(1), count: 4096) + record
        let size = 2 << 20
        let islands = Array((0..<(size / island.count)).flatMap { _ in island })
        let forged = try walkPastDamage(islands, in: directory, name: "islands")
        let random = try walkPastDamage(Corruption.garbage(islands.count, seed: 9), in: directory, name: "random")
        // The first islands are found, as before: the budget runs out only after many of them.
        #expect(forged.found >= 16, "\(forged.found) islands found")
        #expect(
            forged.candidates <= 8 * max(random.candidates, 1 << 12),
            "\(forged.candidates) candidates tried in islands, \(random.candidates) in random bytes")
    }

    @Test(arguments: UInt64(0)..<16)
    func theScanPastDamageFindsTheRecordThatTheScanAtEveryOffsetFinds(seed: UInt64) throws {
        var random = SplitMix64(seed: 0x5CA7 &+ seed)
        let version: UInt16 = seed % 4 == 0 ? 2 : FormatVersion.current
        // A third of the files are larger than a window, with a record planted across its end.
        let size =
            seed % 3 == 0
            ? Int.random(in: (FileWindowReader.chunk + 1)...(FileWindowReader.chunk + 200_000), using: &random)
            : Int.random(in: 64...200_000, using: &random)
        // Seeds 8 and up fill the file with bytes shaped like record headers (see
        // `headerShapedBytes`), whose every offset or every ninth is a candidate.
        var bytes =
            seed < 8 ? Corruption.garbage(size, seed: seed) : Self.headerShapedBytes(size, pattern: Int(seed % 4))
        var planted: [Int] = []
        func plant(_ record: [UInt8], at offset: Int) {
            guard offset >= 0, offset + record.count <= bytes.count else { return }
            bytes.replaceSubrange(offset..<offset + record.count, with: record)
            planted.append(offset)
        }
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            let payload = (0..<Int.random(in: 0...300, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            let type = UInt8.random(in: 1...(version >= 3 ? 4 : 3), using: &random)
            let record = Corruption.frame(type: type, payload: payload, version: version)
            plant(record, at: Int.random(in: 0..<max(1, bytes.count - record.count), using: &random))
            if seed % 3 == 0 {
                plant(record, at: FileWindowReader.chunk - Int.random(in: 0...12, using: &random))
            }
        }
        // Damage that leaves a record's claimed length pointing at a planted one, now and then.
        if let target = planted.randomElement(using: &random), target > 40, Bool.random(using: &random) {
            let start = target - 30
            // 30 bytes framed: a header of 6 bytes (varint) or 9 (fixed), then the payload.
            let payloadLength = RecordFraming.usesVarintLength(version) ? 24 : 21
            plant(
                Corruption.frame(type: 1, payload: Array(repeating: 7, count: payloadLength), version: version),
                at: start)
            bytes[start] ^= 0xFF
        }
        let directory = TemporaryDirectory()
        let file = directory.appending("segment")
        try Corruption.writeFile(file, bytes)
        let fileSystem = PosixFileSystem()
        let descriptor = try fileSystem.open(file, .read)
        defer { fileSystem.close(descriptor) }
        for _ in 0..<6 {
            let after = Int.random(in: 0..<bytes.count, using: &random)
            let budget =
                Bool.random(using: &random)
                ? 4 * max(bytes.count, 1 << 20) : Int.random(in: 0...bytes.count, using: &random)
            var reader = FileWindowReader(fileSystem: fileSystem, descriptor: descriptor, limit: Int64(bytes.count))
            var scanBudget = ResyncBudget(each: Int64(budget))
            let found = try RecordScanner.resynchronize(
                in: &reader, after: Int64(after), version: version, budget: &scanBudget)
            var reference = ReferenceScan(bytes: bytes, version: version)
            let expected = reference.resynchronize(after: after, budget: budget)
            #expect(
                found.map { Int($0.offset) } == expected,
                "seed \(seed), \(bytes.count) bytes, after \(after), budget \(budget), planted at \(planted)")
            if let found {
                let end = Int(found.offset) + found.framedLength
                #expect(found.payload == Array(bytes[(end - found.payload.count)..<end]))
            }
        }
    }
}

/// The scan past damage written plainly over an array: every offset tried in order, as the format
/// article describes it, without windows.
private struct ReferenceScan {
    let bytes: [UInt8]
    let version: UInt16

    private var minimumHeader: Int { RecordFraming.minimumHeaderSize(version) }

    private func header(at offset: Int) -> RecordFraming.Header? {
        let available = bytes.count - offset
        guard available >= minimumHeader else { return nil }
        let count = min(available, RecordFraming.maximumHeaderSize)
        return bytes.withUnsafeBytes {
            RecordFraming.header(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count]), version: version)
        }
    }

    private func plausible(at offset: Int) -> RecordFraming.Header? {
        guard let header = header(at: offset), let type = RecordType(rawValue: header.typeByte),
            type != .compactCommit || RecordFraming.usesVarintLength(version),
            header.length <= JournalLimits.maximumRecordLength,
            header.length <= bytes.count - offset - header.size
        else { return nil }
        return header
    }

    private func valid(at offset: Int) -> Bool {
        guard let header = plausible(at: offset) else { return false }
        let checksum =
            UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
        return CRC32C.checksum(bytes, range: (offset + 4)..<(offset + header.size + header.length)) == checksum
    }

    /// Where the window of each hop of a chain lies, to count the reads the budget is charged
    /// for: a hop's bytes outside its window are read with a window of their own.
    private var probeWindows: [Range<Int>] = Array(repeating: 0..<0, count: 8)
    private var probeReads = 0

    init(bytes: [UInt8], version: UInt16) {
        self.bytes = bytes
        self.version = version
    }

    private mutating func touch(hop: Int, at offset: Int, count: Int) {
        let window = probeWindows[hop]
        guard offset + count <= bytes.count, offset < window.lowerBound || offset + count > window.upperBound else {
            return
        }
        probeWindows[hop] = offset..<min(bytes.count, offset + max(count, RecordScanner.probeWindow))
        probeReads += 1
    }

    private mutating func chainHolds(from offset: Int, hops: inout Int) -> Bool {
        var position = offset
        for hop in 0..<8 {
            if position == bytes.count { return true }
            hops += 1
            let count = min(bytes.count - position, RecordFraming.minimumHeaderSize)
            touch(hop: hop, at: position, count: count)
            if bytes[position..<position + count].allSatisfy({ $0 == 0 }) { return true }
            if bytes.count - position >= minimumHeader {
                touch(hop: hop, at: position, count: min(bytes.count - position, RecordFraming.maximumHeaderSize))
            }
            guard let header = plausible(at: position) else { return false }
            position += header.size + header.length
        }
        return true
    }

    private mutating func followed(_ end: Int, hops: inout Int) -> Bool {
        if RecordFraming.usesVarintLength(version) { return chainHolds(from: end, hops: &hops) }
        hops = 1
        if bytes.count - end >= minimumHeader {
            touch(hop: 0, at: end, count: min(bytes.count - end, RecordFraming.maximumHeaderSize))
        }
        guard let header = header(at: end) else { return false }
        return RecordType(rawValue: header.typeByte) != nil
    }

    /// What is left of the two passes' budgets, kept from one look past damage to the next.
    var chainedBudget = 0
    var plainBudget = 0
    var candidates = 0

    mutating func resynchronize(after offset: Int, budget: Int) -> Int? {
        chainedBudget = budget
        plainBudget = budget
        return resynchronize(after: offset)
    }

    mutating func resynchronize(after offset: Int) -> Int? {
        if plainBudget > 0, let claimed = header(at: offset), claimed.length <= JournalLimits.maximumRecordLength {
            let next = offset + claimed.size + claimed.length
            if next < bytes.count {
                candidates += 1
                plainBudget -= Int(RecordScanner.candidateCharge)
                if let header = plausible(at: next) {
                    plainBudget -= header.size + header.length + Int(RecordScanner.checksumCharge)
                    if valid(at: next) { return next }
                }
            }
        }
        var chained = chainedBudget
        defer { chainedBudget = chained }
        if let found = scan(from: offset + 1, budget: &chained, chained: true) { return found }
        var plain = plainBudget
        defer { plainBudget = plain }
        return scan(from: offset + 1, budget: &plain, chained: false)
    }

    private mutating func scan(from start: Int, budget: inout Int, chained: Bool) -> Int? {
        probeWindows = Array(repeating: 0..<0, count: 8)
        let lastStart = bytes.count - minimumHeader
        var candidate = start
        while candidate <= lastStart && budget > 0 {
            // The walk to the next plausible header is charged a unit for every few bytes.
            let walkedFrom = candidate
            while candidate <= lastStart && plausible(at: candidate) == nil { candidate += 1 }
            budget -= (candidate - walkedFrom) / Int(RecordScanner.walkChargeDivisor)
            guard candidate <= lastStart, let header = plausible(at: candidate) else { return nil }
            candidates += 1
            let end = candidate + header.size + header.length
            // Each plausible header, each header read for its chain and each checksum cost
            // a fixed charge besides the bytes checksummed.
            budget -= Int(RecordScanner.candidateCharge)
            var hops = 0
            let reads = probeReads
            let holds = !chained || end >= bytes.count || followed(end, hops: &hops)
            budget -= hops * Int(RecordScanner.hopCharge)
            budget -= (probeReads - reads) * Int(RecordScanner.probeReadCharge)
            if holds {
                budget -= header.size + header.length + Int(RecordScanner.checksumCharge)
                if valid(at: candidate) { return candidate }
            }
            candidate += 1
        }
        return nil
    }
}
