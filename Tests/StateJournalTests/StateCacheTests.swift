import Testing

@testable import StateJournal

/// The writer's compression cache holds to its bound in memory, not in value bytes alone.
@Suite struct StateCacheTests {
    /// A path and a state the size of a small app object's.
    func entry(_ index: Int) -> (RestorationPath, [UInt8]) {
        (RestorationPath(["Board-\(index / 1_000)", "Card-\(index)"]), Array(repeating: UInt8(index % 251), count: 75))
    }

    @Test func smallStatesCountTheirAllocationsAndSlotsAgainstTheBound() {
        var cache = StateCache(limit: 1 << 20)
        var index = 0
        while cache.set(entry(index).0, entry(index).1) { index += 1 }
        // Each 75-byte state costs its array (128 bytes), the path's (80) and a slot (48): a
        // cache that counted only the values held about three times as many.
        #expect(cache.values.count == index)
        #expect(cache.bytes <= 1 << 20)
        #expect(index * 75 < (1 << 20) / 3)
        #expect(StateCache.cost(entry(0).0, entry(0).1) == 256)
    }

    @Test func replacingAndRemovingGiveBackExactlyWhatTheEntryCost() {
        var cache = StateCache(limit: 1 << 20)
        let (path, value) = entry(7)
        cache.set(path, value)
        let one = cache.bytes
        cache.set(path, Array(repeating: 1, count: 300))
        #expect(cache.bytes == StateCache.cost(path, Array(repeating: 1, count: 300)))
        cache.set(path, value)
        #expect(cache.bytes == one)
        cache.remove(path)
        #expect(cache.bytes == 0 && cache.values.isEmpty)
    }

    @Test func aComponentTooLongToBeInlineCountsItsOwnAllocation() {
        let short = RestorationPath(["Board", "Card-1"])
        let long = RestorationPath(["Board", "A card title long enough to need its own allocation"])
        #expect(StateCache.cost(long, []) > StateCache.cost(short, []) + 64)
    }
}
