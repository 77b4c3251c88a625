import Foundation
import StateJournalTestSupport
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

/// Opening a store reads its checkpoint without hashing or copying every path: the writer's cache
/// starts with the states of the paths the segment it continues defines, which are the only ones a
/// commit can write as patches, and the state is looked up by binary search until lookups pay for
/// a hash index.
@Suite struct OpeningALargeStoreTests {
    @Test func openingAStoreHashesNoPathAndCachesOnlyThoseTheActiveSegmentDefines() throws {
        let directory = TemporaryDirectory()
        let options = testOptions(durability: .none)
        let first = try openJournal(directory.path, options, realFileSystem: true)
        for batch in 0..<5 {
            try first.commit(
                (0..<1_000).map { index in
                    .put(RestorationPath(["Board-\(batch)", "Card-\(index)"]), Array("card \(batch)-\(index)".utf8))
                })
        }
        try first.compact()
        // After the checkpoint, the active segment defines 20 paths; the three under Board-5 are new.
        let touched = (0..<20).map { RestorationPath(["Board-\($0 % 6)", "Card-\($0 * 13)"]) }
        try first.commit(touched.map { .put($0, Array("edited \($0)".utf8)) })
        try first.close()

        let journal = try openJournal(directory.path, options, realFileSystem: true)
        defer { try? journal.close() }
        #expect(journal.recoveredState.count == 5_003)
        #expect(journal.recoveredState.table.builtIndex == nil, "no path of the checkpoint was hashed")
        #expect(journal.cache.values.count == touched.count, "the cache holds the active segment's paths alone")
        for path in touched { #expect(journal.cache.value(for: path) == Array("edited \(path)".utf8)) }
        #expect(journal.recoveredState[touched[3]] == Array("edited \(touched[3])".utf8))
        #expect(journal.recoveredState[RestorationPath(["Board-4", "Card-999"])] == Array("card 4-999".utf8))
        #expect(journal.recoveredState[RestorationPath(["Board-9", "Card-1"])] == nil)
    }
}
