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
    private static let chunk = 1 << 20

    init(fileSystem: any FileSystem, descriptor: Int32, limit: Int64) {
        self.fileSystem = fileSystem
        self.descriptor = descriptor
        self.limit = limit
    }

    /// Calls `body` with `count` bytes at `offset`; `nil` when they run past the limit.
    mutating func withBytes<Result>(
        at offset: Int64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        guard offset >= 0, count >= 0, offset + Int64(count) <= limit else { return nil }
        if offset < windowStart || offset + Int64(count) > windowStart + Int64(window.count) {
            let length = Int(min(Int64(max(count, Self.chunk)), limit - offset))
            window = try fileSystem.read(descriptor, count: length, at: offset)
            windowStart = offset
            guard window.count >= count else { throw SystemError(call: "pread", errno: 5) }
        }
        let start = Int(offset - windowStart)
        return try window.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<start + count])) }
    }
}
