#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A block of memory that holds paths and states for a ``StateTable``: allocated once, never
/// changed after it is built, and freed when the last table using it goes.
///
/// A table points straight into its arenas, so that a state of 100,000 paths is a few allocations
/// rather than 200,000 separately allocated arrays (which cost more to free than to read).
final class StateArena: @unchecked Sendable {
    // Unchecked: the bytes are written only while the arena is being built, before it is shared.
    let base: UnsafeMutableRawPointer
    let count: Int
    /// The length of the mapping `base` starts, when `mmap` made it rather than `malloc`.
    private let mappedLength: Int?

    /// Takes ownership of `base`, which `malloc` or `realloc` allocated, holding `count` bytes.
    init(adopting base: UnsafeMutableRawPointer, count: Int) {
        self.base = base
        self.count = count
        self.mappedLength = nil
    }

    /// Takes ownership of the anonymous mapping of `mappedLength` bytes (a whole number of pages)
    /// at `base`, holding `count` bytes.
    init(mapping base: UnsafeMutableRawPointer, mappedLength: Int, count: Int) {
        self.base = base
        self.count = count
        self.mappedLength = mappedLength
    }

    /// Takes ownership of `base`, which `malloc` or `realloc` allocated with room for at least
    /// `count` bytes (or `nil` for none), giving back the room beyond `count`.
    convenience init(shrinking base: UnsafeMutableRawPointer?, count: Int) {
        let block = base.map { realloc($0, max(count, 1)) ?? $0 } ?? malloc(1)!
        self.init(adopting: block, count: count)
    }

    deinit {
        if let mappedLength { munmap(base, mappedLength) } else { free(base) }
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}

/// Builds a ``StateArena`` by appending, growing its block with `realloc`.
///
/// Appends return offsets, not pointers: the block may move until ``finish()``. A builder dropped
/// before ``finish()`` frees what it holds.
final class StateArenaBuilder {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    private(set) var count = 0

    init(capacity: Int = 0) { reserve(capacity) }

    /// Makes room for `additional` more bytes.
    func reserve(_ additional: Int) {
        let needed = count + additional
        guard needed > capacity else { return }
        let grown = max(needed, capacity * 2, 4096)
        base = realloc(base, grown)!
        capacity = grown
    }

    /// Appends `bytes` and returns their offset.
    @discardableResult
    func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        reserve(bytes.count)
        let offset = count
        if let source = bytes.baseAddress { (base! + offset).copyMemory(from: source, byteCount: bytes.count) }
        count += bytes.count
        return offset
    }

    /// Appends `value` as a LEB128 varint.
    func appendVarint(_ value: Int) {
        reserve(10)
        var remaining = UInt64(value)
        while remaining >= 0x80 {
            base!.storeBytes(of: UInt8(truncatingIfNeeded: remaining) | 0x80, toByteOffset: count, as: UInt8.self)
            count += 1
            remaining >>= 7
        }
        base!.storeBytes(of: UInt8(remaining), toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// The arena, holding everything appended. The builder is empty afterwards.
    func finish() -> StateArena {
        let arena = StateArena(shrinking: base, count: count)
        base = nil
        capacity = 0
        count = 0
        return arena
    }

    deinit { free(base) }
}
