import Foundation

extension CheckpointFile {
    /// Checks the checkpoint a manifest names as ``load(_:storeID:in:)`` does, with the same errors,
    /// and returns its epoch without its state (``CheckpointContent/entries`` is empty): for scans
    /// that check framing and commits only, in memory that does not grow with the checkpoint.
    ///
    /// The file is decompressed once, a window at a time, checking the content's structure (each
    /// path valid and in order, each state's length within the limit and the content) and its
    /// checksum together. When that finds something wrong, the file is checked again as it always
    /// was, checksum first, then structure, so that the error is the one ``load(_:storeID:in:pipelined:)``
    /// gives: a damaged checkpoint is read three times, an intact one once.
    static func check(_ reference: Manifest.CheckpointReference, storeID: StoreID, in store: StoreDirectory)
        throws -> CheckpointContent
    {
        let path = store.file(FileNames.checkpoint(reference.sequence))
        var content: CheckpointContent?
        do {
            content = try CheckpointContentStream.open(path, in: store) { stream in
                try stream.checkStructure(total: nil)
            }
        } catch is FormatViolation {
            content = nil
        }
        if content == nil {
            let total = try CheckpointContentStream.open(path, in: store) { stream in try stream.checksumAll() }
            content = try CheckpointContentStream.open(path, in: store) { stream -> CheckpointContent? in
                try stream.checkStructure(total: total)
            }
        }
        // A version this library does not read is read whole, which says so once its checksum holds.
        guard let content else { return try load(reference, storeID: storeID, in: store) }
        guard content.storeID == storeID, content.sequence == reference.sequence, content.info.epoch == reference.epoch
        else {
            throw FormatViolation("the checkpoint does not belong to this store or position")
        }
        return content
    }
}

/// A checkpoint's content as it decompresses from its file, a window at a time.
private final class CheckpointContentStream {
    private let fileSystem: any FileSystem
    private let descriptor: Int32
    private let size: Int64
    private var fileOffset: Int64 = 0
    private let decompressor: LZ4FrameDecompressor
    private var input: [UInt8] = []
    private var inputPosition = 0
    /// Decompressed bytes, `filled` of them in a block of `capacity`; those before ``position`` are
    /// consumed. A block of its own rather than an array, which an unoptimized build would zero a
    /// byte at a time before each decompression step.
    private var storage: UnsafeMutableRawPointer?
    private var capacity = 0
    private var filled = 0
    private var position = 0
    /// The bytes consumed so far, and their CRC-32C.
    private(set) var consumed = 0
    private(set) var checksum: UInt32 = 0

    /// How much of the file is read at once, and the most a window of content holds beyond what a
    /// read asks for.
    private static let step = 1 << 20

    private init(fileSystem: any FileSystem, descriptor: Int32, size: Int64) throws {
        self.fileSystem = fileSystem
        self.descriptor = descriptor
        self.size = size
        // As in ``CheckpointFile/load(_:storeID:in:)``: LZ4's largest ratio, plus a margin.
        decompressor = try LZ4FrameDecompressor(limit: Int(min(Int64(Int32.max), size * 255 + (1 << 20))))
    }

    static func open<Result>(
        _ path: String, in store: StoreDirectory, _ body: (CheckpointContentStream) throws -> Result
    )
        throws -> Result
    {
        let fileSystem = store.fileSystem
        let descriptor = try fileSystem.open(path, .read)
        defer { fileSystem.close(descriptor) }
        let stream = try CheckpointContentStream(
            fileSystem: fileSystem, descriptor: descriptor, size: try fileSystem.size(descriptor))
        return try body(stream)
    }

    deinit { free(storage) }

    /// Makes at least `count` bytes available unless the content ends first; returns how many are.
    private func fill(_ count: Int) throws -> Int {
        while filled - position < count {
            if position > 0 {
                if filled > position { memmove(storage!, storage! + position, filled - position) }
                filled -= position
                position = 0
            }
            if decompressor.finished { break }
            if inputPosition == input.count {
                guard fileOffset < size else { break }
                input = try fileSystem.read(
                    descriptor, count: Int(min(Int64(Self.step), size - fileOffset)), at: fileOffset)
                inputPosition = 0
                guard !input.isEmpty else { break }
                fileOffset += Int64(input.count)
            }
            let room = min(max(count - filled, 64 << 10), Self.step)
            if filled + room > capacity {
                capacity = filled + room
                storage = realloc(storage, capacity)
                guard storage != nil else { throw FormatViolation("no memory for a window of the checkpoint") }
            }
            let target = UnsafeMutableRawBufferPointer(start: storage! + filled, count: room)
            let step = try input.withUnsafeBytes { source in
                try decompressor.decompress(
                    from: UnsafeRawBufferPointer(rebasing: source[inputPosition...]), into: target)
            }
            filled += step.produced
            inputPosition += step.consumed
            if step.consumed == 0 && step.produced == 0 && !decompressor.finished {
                throw FormatViolation("the checkpoint's LZ4 frame makes no progress")
            }
        }
        return filled - position
    }

    /// Takes `count` bytes (fewer where the content ends) through `body`, which returns how many it
    /// consumed; those are checksummed.
    private func take<Result>(
        _ count: Int, _ body: (UnsafeRawBufferPointer) throws -> (Result, consumed: Int)
    ) throws -> Result {
        // A file that changed between the two passes can leave less content than the first counted.
        let count = max(0, count)
        let available = try fill(count)
        let window = UnsafeRawBufferPointer(start: storage.map { $0 + position }, count: min(count, available))
        let (result, used) = try body(window)
        checksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: window[0..<used]), continuing: checksum)
        position += used
        consumed += used
        return result
    }

    /// Reads fields of at most `count` bytes together with `body`.
    private func read<Result>(_ count: Int, _ body: (inout ByteReader) throws(FormatViolation) -> Result) throws
        -> Result
    {
        try take(count) { window in
            var reader = ByteReader(window)
            let result = try body(&reader)
            return (result, reader.position)
        }
    }

    /// Passes over `count` bytes, checksumming them.
    private func skip(_ count: Int) throws {
        var remaining = count
        while remaining > 0 {
            let taken = try take(min(remaining, Self.step)) { window in (window.count, window.count) }
            guard taken > 0 else { throw FormatViolation("unexpected end of record") }
            remaining -= taken
        }
    }

    /// Checks that the frame and the file end where the content does.
    private func finish() throws {
        guard try fill(1) == 0 else { throw FormatViolation("checkpoint content has trailing bytes") }
        guard decompressor.finished else { throw FormatViolation("the checkpoint's LZ4 frame is cut short") }
        guard inputPosition == input.count && fileOffset == size else {
            throw FormatViolation("bytes follow the checkpoint's LZ4 frame")
        }
    }

    /// Reads the whole content and checks its checksum (its last 4 bytes); returns its length.
    func checksumAll() throws -> Int {
        var last: [UInt8] = []
        var crc: UInt32 = 0
        while true {
            let taken = try take(Self.step) { window -> (Int, consumed: Int) in
                // Everything but the last 4 bytes seen so far is checksummed.
                if window.count >= 4 {
                    crc = CRC32C.checksum(last, continuing: crc)
                    crc = CRC32C.checksum(
                        UnsafeRawBufferPointer(rebasing: window[..<(window.count - 4)]), continuing: crc)
                    last = Array(window[(window.count - 4)...])
                } else {
                    last.append(contentsOf: window)
                    if last.count > 4 {
                        crc = CRC32C.checksum(last, range: 0..<(last.count - 4), continuing: crc)
                        last.removeFirst(last.count - 4)
                    }
                }
                return (window.count, window.count)
            }
            if taken == 0 { break }
        }
        try finish()
        guard consumed >= 4 + 52 else { throw FormatViolation("checkpoint content is too short") }
        let stored = last.withUnsafeBytes { ByteReader.littleEndianU32($0, at: 0) }
        guard crc == stored else { throw FormatViolation("checkpoint content checksum mismatch") }
        return consumed
    }

    /// Checks the structure of the content of `total` bytes, whose checksum holds, keeping only the
    /// path before each one (paths are stored in order, each once); `nil` when it is of a format
    /// version this library does not read. With `total` unknown (`nil`), the checksum is checked
    /// too, at the end, and the errors may differ from a load's: a caller checks again with
    /// ``checksumAll()`` first for those.
    func checkStructure(total: Int?) throws -> CheckpointContent? {
        let body = total.map { $0 - 4 }
        let header = try read(52) { reader throws(FormatViolation) -> (StoreID, UInt64, UInt64, UInt64)? in
            guard Array(try reader.bytes(4)) == CheckpointContent.magic else {
                throw FormatViolation("not a checkpoint: bad magic")
            }
            guard FormatVersion.isReadable(try reader.u16()) else { return nil }
            _ = try reader.u16()
            let id = StoreID(bytes: Array(try reader.bytes(16)))
            return (id, try reader.u64(), try reader.u64(), try reader.u64())
        }
        guard let (id, sequence, epoch, timestamp) = header else { return nil }
        let (entryCount, epochBytes, metadataCount) = try read(30) { reader throws(FormatViolation) in
            (
                try reader.count(atMost: Int(Int32.max), "epoch entry count"),
                try reader.count(atMost: Int(Int64.max), "epoch bytes"),
                try reader.count(atMost: JournalLimits.maximumMetadataCount, "metadata count")
            )
        }
        var metadata: [String: String] = [:]
        let itemBytes = 10 + JournalLimits.maximumMetadataItemLength
        for _ in 0..<metadataCount {
            let key = try read(itemBytes) { reader throws(FormatViolation) in
                try reader.string(atMost: JournalLimits.maximumMetadataItemLength, "metadata key")
            }
            metadata[key] = try read(itemBytes) { reader throws(FormatViolation) in
                try reader.string(atMost: JournalLimits.maximumMetadataItemLength, "metadata value")
            }
        }
        // What the content can still hold before its checksum, as far as is known.
        let countLimit = max(0, body.map { $0 - consumed } ?? Int(Int32.max)) / 3
        let count = try read(10) { reader throws(FormatViolation) in
            try reader.count(atMost: countLimit, "live path count")
        }
        let entryBytes = 10 + JournalLimits.maximumPathDepth * (2 + JournalLimits.maximumComponentLength) + 10
        var previous: [UInt8] = []
        for _ in 0..<count {
            let left = body.map { $0 - consumed } ?? Int(Int32.max)
            let length = try read(min(entryBytes, left)) { reader throws(FormatViolation) in
                var paths = PathReader()
                let path = try paths.check(from: &reader)
                let length = try reader.count(atMost: JournalLimits.maximumStateSize, "state length")
                if !previous.isEmpty,
                    let violation = previous.withUnsafeBytes({
                        CheckpointContent.orderViolation(of: path, after: $0)
                    })
                {
                    throw violation
                }
                previous.removeAll(keepingCapacity: true)
                previous.append(contentsOf: path)
                return length
            }
            guard length <= (body.map { $0 - consumed } ?? Int(Int32.max)) else {
                throw FormatViolation("length \(length) runs past the record")
            }
            try skip(length)
        }
        guard body == nil || consumed == body else { throw FormatViolation("checkpoint content has trailing bytes") }
        let computed = checksum
        let stored = try read(4) { reader throws(FormatViolation) in try reader.u32() }
        try finish()
        guard computed == stored else { throw FormatViolation("checkpoint content checksum mismatch") }
        return CheckpointContent(
            storeID: id, sequence: sequence,
            info: CheckpointContent.EpochInfoFields(
                epoch: epoch, timestampMilliseconds: timestamp, entryCount: entryCount, bytes: epochBytes,
                metadata: metadata),
            entries: StateTable())
    }
}
