/// Sequential-ish reads of a file through a window, so that scanning a segment reads it in large
/// chunks. Every request is checked against the file size first: nothing read from the file can
/// make it allocate more than the file holds.
struct FileWindowReader {
    let fileSystem: any FileSystem
    let descriptor: Int32
    /// The bytes considered: the file size when opened, or less (a writer's committed end).
    let limit: Int64
    private var window: [UInt8] = []
    private var windowStart: Int64 = 0
    /// How much a window holds when a request is smaller.
    static let chunk = 1 << 20

    /// How much this reader's window holds when a request is smaller.
    private(set) var windowSize = chunk

    /// How many times the window was read from the file.
    private(set) var reads = 0

    init(fileSystem: any FileSystem, descriptor: Int32, limit: Int64) {
        self.fileSystem = fileSystem
        self.descriptor = descriptor
        self.limit = limit
    }

    /// The same reader with windows of `size` bytes: for reads of a few bytes here and there, which
    /// a large window would make read a chunk each.
    func withWindowSize(_ size: Int) -> FileWindowReader {
        var copy = self
        copy.windowSize = max(1, size)
        return copy
    }

    /// Whether every byte from `offset` to the limit is zero: the space a writer wrote ahead of its
    /// records (see ``Journal/preallocate(through:)``), not a torn record.
    mutating func isZero(from offset: Int64) throws -> Bool {
        var position = offset
        while position < limit {
            let count = Int(min(Int64(Self.chunk), limit - position))
            guard let zero = try withBytes(at: position, count: count, { bytes in bytes.allSatisfy { $0 == 0 } }) else {
                return true
            }
            guard zero else { return false }
            position += Int64(count)
        }
        return true
    }

    /// How many bytes from `offset` run up to the last byte before the limit that is not zero: the
    /// part of a tail that is not zeros written ahead.
    mutating func lengthBeforeTrailingZeros(from offset: Int64) throws -> Int64 {
        var position = offset
        var end = offset
        while position < limit {
            let count = Int(min(Int64(Self.chunk), limit - position))
            guard let last = try withBytes(at: position, count: count, { bytes in bytes.lastIndex { $0 != 0 } }) else {
                break
            }
            if let last { end = position + Int64(last) + 1 }
            position += Int64(count)
        }
        return end - offset
    }

    /// Whether the file no longer holds, from `offset`, the bytes the window read there (up to
    /// `count` of them, or to the window's end): a writer appended over the zeros it wrote ahead,
    /// or cut them, after the window was read. Damage on the disk does not change between two reads.
    func changedSinceRead(at offset: Int64, count: Int = 64 << 10) throws -> Bool {
        let windowEnd = windowStart + Int64(window.count)
        guard offset >= windowStart, offset < windowEnd else { return false }
        let length = Int(min(Int64(max(0, count)), windowEnd - offset))
        let start = Int(offset - windowStart)
        let now = try fileSystem.read(descriptor, count: length, at: offset)
        return now[...] != window[start..<start + length]
    }

    /// Calls `body` with the bytes from `offset` to the end of the window, reading a new window there
    /// when the current one holds fewer than `minimum` of them (or than remain before the limit);
    /// `nil` when `offset` is past the limit or the file ended early. For walks that go through a
    /// file byte by byte, each window read once.
    mutating func withWindow<Result>(
        at offset: Int64, minimum: Int, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        guard offset >= 0, minimum >= 0, offset < limit else { return nil }
        let needed = min(Int64(minimum), limit - offset)
        let windowEnd = windowStart + Int64(window.count)
        if offset < windowStart || offset + needed > windowEnd {
            return try withBytes(at: offset, count: Int(min(Int64(windowSize), limit - offset)), body)
        }
        let start = Int(offset - windowStart)
        return try window.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }

    /// Calls `body` with `count` bytes at `offset`; `nil` when they run past the limit.
    mutating func withBytes<Result>(
        at offset: Int64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        guard offset >= 0, count >= 0, offset + Int64(count) <= limit else { return nil }
        if offset < windowStart || offset + Int64(count) > windowStart + Int64(window.count) {
            let length = Int(min(Int64(max(count, windowSize)), limit - offset))
            window = try fileSystem.read(descriptor, count: length, at: offset)
            windowStart = offset
            reads += 1
            // The file is shorter than when it was opened: a writer cut the zeros it had written
            // ahead of a segment it sealed, or an epoch it abandoned. Its data ends there.
            guard window.count >= count else { return nil }
        }
        let start = Int(offset - windowStart)
        return try window.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<start + count])) }
    }
}
