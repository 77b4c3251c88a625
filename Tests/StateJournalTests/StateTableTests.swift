import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// The restored state's table: the same answers as a dictionary keyed by `RestorationPath`, in
/// path order, whatever the paths hold.
@Suite(.timeLimit(.minutes(10))) struct StateTableTests {
    /// Components that include canonically equivalent spellings: `é` composed and decomposed, the
    /// Kelvin sign and `K`, the Greek question mark and `;`.
    private static let pieces = [
        "Main", "Window-1", "Item-42", "caf\u{E9}", "cafe\u{301}", "\u{212A}", "K", "a;b", "a\u{37E}b", "", "\u{1F600}",
        String(repeating: "x", count: 300), String(repeating: "\u{E9}", count: 150),
    ]

    private static func randomPath(_ random: inout SplitMix64) -> RestorationPath {
        let depth = Int(random.next() % 4) + 1
        return RestorationPath((0..<depth).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] })
    }

    /// Builds a table from `entries` in the given order, as a checkpoint's content would hold them.
    private static func table(_ entries: [(RestorationPath, [UInt8])]) throws(FormatViolation) -> StateTable {
        let (arena, slots) = StateTable.encode(entries)
        return try StateTable(arenas: [arena], slots: slots)
    }

    private static func paths(of table: StateTable) -> [RestorationPath] {
        JournalState(epoch: nil, table: table, damage: nil, uncommittedTailBytes: 0).paths
    }

    @Test func aTableAgreesWithADictionaryThroughRandomMergesOfEquivalentSpellings() throws {
        var random = SplitMix64(seed: 7)
        var model: [RestorationPath: [UInt8]] = [:]
        var table = StateTable()
        for round in 0..<300 {
            // One segment's changes: distinct paths, as a segment's path table defines each once.
            var changes: [RestorationPath: [UInt8]?] = [:]
            for _ in 0..<Int(random.next() % 12) {
                let path = Self.randomPath(&random)
                if random.next() % 4 == 0 {
                    changes[path] = .some(nil)
                } else {
                    changes[path] = Array("\(round)-\(random.next() % 1000)".utf8)
                }
            }
            if random.next() % 50 == 0 {
                model = [:]
                table = StateTable()
            }
            for (path, state) in changes {
                // The model keeps the spelling it first saw, as a dictionary does; the table may keep
                // either, and both must find it.
                if let state { model[path] = state } else { model.removeValue(forKey: path) }
            }
            table = table.applying(changes.map { StateTable.Change(path: $0.key, state: $0.value) })
            let state = JournalState(epoch: nil, table: table, damage: nil, uncommittedTailBytes: 0)
            #expect(state.count == model.count, "round \(round)")
            #expect(state.entries == model, "round \(round)")
            for path in changes.keys {
                #expect(state[path] == model[path], "round \(round): \(path)")
            }
            let listed = state.paths
            #expect(zip(listed, listed.dropFirst()).allSatisfy { $0.0 < $0.1 }, "round \(round): paths out of order")
            #expect(
                table.arenaBytes <= 2 * table.liveBytes + (1 << 20) + 64 << 10,
                "round \(round): replaced states pile up")
        }
    }

    @Test func lookingUpManyPathsAtOnceFindsWhatLookingThemUpOneByOneFinds() throws {
        var random = SplitMix64(seed: 11)
        var entries: [RestorationPath: [UInt8]] = [:]
        for _ in 0..<200 { entries[Self.randomPath(&random)] = [UInt8(random.next() % 256)] }
        let table = StateTable(entries)
        for round in 0..<50 {
            // Paths in the table and not, in any spelling, repeated or not.
            let builder = StateArenaBuilder()
            var ranges: [(Int, Int)] = []
            for _ in 0..<Int(random.next() % 40) {
                let start = builder.count
                EncodedPath.append(Self.randomPath(&random), to: builder)
                ranges.append((start, builder.count - start))
            }
            let arena = builder.finish()
            let paths = ranges.map { EncodedPath(start: arena.base + $0.0, count: $0.1) }
            var numbers: [Int32] = [7]
            _ = table.slotNumbers(paths.count, path: { paths[$0] }, hash: { paths[$0].pathHashValue }, into: &numbers)
            #expect(numbers.first == 7, "round \(round): what was in the buffer stays")
            #expect(numbers.count == paths.count + 1)
            for (offset, path) in paths.enumerated() {
                let one = table.slotNumber(of: path).map { Int32($0) } ?? StateTable.Change.absent
                #expect(numbers[offset + 1] == one, "round \(round): \(path.restorationPath)")
            }
            withExtendedLifetime(arena) {}
        }
        var empty: [Int32] = []
        _ = StateTable().slotNumbers(3, path: { _ in fatalError() }, hash: { _ in 0 }, into: &empty)
        #expect(empty == [StateTable.Change.absent, StateTable.Change.absent, StateTable.Change.absent])
    }

    @Test func storedPathsCompareAsRestorationPathsDoWhereverTheirBytesFirstDiffer() {
        var random = SplitMix64(seed: 19)
        // Neighbours as a checkpoint holds them (numbers of one length and of several), the
        // components with equivalent spellings, and paths one component longer than others.
        func path() -> RestorationPath {
            switch random.next() % 3 {
            case 0: return RestorationPath(["Board-\(random.next() % 12)", "Card-\(random.next() % 2_000)"])
            case 1: return Self.randomPath(&random)
            default:
                let base = ["Board-\(random.next() % 3)", Self.pieces[Int(random.next() % UInt64(Self.pieces.count))]]
                return RestorationPath(random.next() % 2 == 0 ? base : base + ["x"])
            }
        }
        for _ in 0..<20_000 {
            let (left, right) = (path(), path())
            let expected = left < right ? -1 : (right < left ? 1 : 0)
            let order = EncodedPath.withEncoded(left) { encoded in
                EncodedPath.withEncoded(right) { EncodedPath.compare(encoded, $0) }
            }
            #expect(order == expected, "\(left) against \(right)")
        }
    }

    @Test func aPathEncodedOnTheStackHasTheBytesOfOneEncodedIntoAnArena() {
        var random = SplitMix64(seed: 17)
        let long = RestorationPath([String(repeating: "y", count: 20_000), "\u{E9}", ""])
        for path in (0..<500).map({ _ in Self.randomPath(&random) }) + [long, RestorationPath([])] {
            let builder = StateArenaBuilder()
            EncodedPath.append(path, to: builder)
            let arena = builder.finish()
            EncodedPath.withEncoded(path) { encoded in
                #expect(Array(encoded.bytes) == Array(arena.bytes), "\(path)")
            }
        }
    }

    @Test func aBinarySearchFindsWhatTheHashIndexFindsInEverySpelling() throws {
        var random = SplitMix64(seed: 13)
        var entries: [RestorationPath: [UInt8]] = [:]
        for index in 0..<3_000 {
            entries[Self.randomPath(&random)] = [UInt8(truncatingIfNeeded: index)]
            entries[RestorationPath(["Board-\(index % 37)", "Card-\(index)"])] = [1]
        }
        let probes = (0..<400).map { index in
            index % 2 == 0 ? Self.randomPath(&random) : RestorationPath(["Board-\(index % 41)", "Card-\(index * 7)"])
        }
        // A table searched a few times builds no index; one looked up in bulk builds it.
        let searched = StateTable(entries)
        let answers = probes.prefix(50).map { searched.slotNumber(of: $0) }
        #expect(searched.builtIndex == nil, "50 lookups in 3,000-odd paths are made by binary search")
        let indexed = StateTable(entries)
        let builder = StateArenaBuilder()
        var ranges: [(Int, Int)] = []
        for path in probes {
            let start = builder.count
            EncodedPath.append(path, to: builder)
            ranges.append((start, builder.count - start))
        }
        let arena = builder.finish()
        let encoded = ranges.map { EncodedPath(start: arena.base + $0.0, count: $0.1) }
        var numbers: [Int32] = []
        _ = indexed.slotNumbers(
            encoded.count, path: { encoded[$0] }, hash: { encoded[$0].pathHashValue }, into: &numbers)
        #expect(indexed.builtIndex != nil, "400 lookups at once build the index")
        for (offset, path) in probes.enumerated() {
            let found = indexed.slotNumber(of: path)
            #expect(numbers[offset] == found.map { Int32($0) } ?? StateTable.Change.absent, "\(path)")
            #expect((found != nil) == (entries[path] != nil), "\(path)")
            if offset < 50 { #expect(answers[offset] == found, "\(path)") }
            #expect(searched.slotNumber(of: encoded[offset]) == found, "\(path)")
        }
        withExtendedLifetime(arena) {}
    }

    @Test func equivalentSpellingsOfAPathInTwoSegmentsAreOneEntry() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let composed = RestorationPath("Main", "caf\u{E9}", "\u{212A}")
        let decomposed = RestorationPath("Main", "cafe\u{301}", "K")
        do {
            let journal = try openJournal(store, testOptions(segmentSizeLimit: 4096))
            try journal.commit([.put(decomposed, Array("first".utf8))])
            // Enough other state to roll into a new segment, which defines the path anew.
            let sequence = journal.manifest.segments.last
            var filler = 0
            while journal.manifest.segments.last == sequence {
                try journal.commit([
                    .put(RestorationPath("Filler", "\(filler)"), [UInt8](repeating: UInt8(filler % 251), count: 900))
                ])
                filler += 1
            }
            try journal.commit([.put(composed, Array("second".utf8))])
            let state = try journal.state()
            #expect(state[composed] == Array("second".utf8))
            #expect(state[decomposed] == Array("second".utf8))
            #expect(state.paths.filter { $0 == composed }.count == 1)
            try journal.compact()
            try journal.close()
        }
        let reopened = try openJournal(store)
        defer { try? reopened.close() }
        let state = reopened.recoveredState
        #expect(state[decomposed] == Array("second".utf8))
        #expect(state.paths.filter { $0 == composed }.count == 1)
        #expect(state.entries.count == state.count)
    }

    @Test func descendantsFollowTheirParentWhateverTheSpellingOfTheirComponents() throws {
        let parent = RestorationPath("Main", "caf\u{E9}")
        let child = RestorationPath("Main", "cafe\u{301}", "List")
        let sibling = RestorationPath("Main", "cafe\u{301}x")
        let state = JournalState(
            epoch: nil, entries: [sibling: [3], child: [2], parent: [1], RestorationPath("Main"): [0]])
        #expect(state.paths == [RestorationPath("Main"), parent, child, sibling])
        #expect(state.paths == state.paths.sorted())
        let reordered = try Self.table([(sibling, [3]), (child, [2]), (parent, [1])])
        #expect(Self.paths(of: reordered) == [parent, child, sibling])
    }

    @Test func aCheckpointWhosePathsAreOutOfOrderIsReadInPathOrder() throws {
        let entries = [
            (RestorationPath("Main", "b"), [UInt8]([2])), (RestorationPath("Main"), [1]), (RestorationPath("A"), [0]),
            (RestorationPath("Main", "a", "x"), [3]),
        ]
        let table = try Self.table(entries)
        #expect(
            Self.paths(of: table) == [
                RestorationPath("A"), RestorationPath("Main"), RestorationPath("Main", "a", "x"),
                RestorationPath("Main", "b"),
            ])
        let state = JournalState(epoch: nil, table: table, damage: nil, uncommittedTailBytes: 0)
        #expect(state[RestorationPath("Main", "a", "x")] == [3])
    }

    @Test(arguments: [
        [RestorationPath("Main", "a"), RestorationPath("Main", "a")],
        [RestorationPath("Main", "caf\u{E9}"), RestorationPath("Main", "cafe\u{301}")],
        [RestorationPath("\u{212A}"), RestorationPath("Main"), RestorationPath("K")],
    ])
    func aCheckpointThatRepeatsAPathIsRejected(paths: [RestorationPath]) {
        #expect(throws: FormatViolation.self) { try Self.table(paths.map { ($0, [1]) }) }
    }

    @Test func aStateAnswersLookupsAndListsItsEntriesInPathOrder() {
        let model: [RestorationPath: [UInt8]] = [
            RestorationPath("Main"): [1], RestorationPath("Main", "List"): [2, 2],
            RestorationPath("Main", "List", "Item-1"): [],
            RestorationPath("Settings"): Array("dark".utf8), RestorationPath("Main", "Editor"): [5],
        ]
        var state = JournalState(epoch: nil, entries: model)
        #expect(state.count == 5 && !state.isEmpty && state.underestimatedCount == 5)
        #expect(state.paths == model.keys.sorted())
        #expect(state.map(\.path) == model.keys.sorted())
        #expect(state.map(\.state) == model.keys.sorted().map { model[$0]! })
        var visited: [RestorationPath] = []
        state.forEachEntry { path, bytes in
            visited.append(path)
            #expect(Array(bytes) == model[path])
        }
        #expect(visited == model.keys.sorted())
        #expect(state[RestorationPath("Main", "List", "Item-1")] == [])
        #expect(state[RestorationPath("Nowhere")] == nil)
        #expect(state.contains(RestorationPath("Settings")) && !state.contains(RestorationPath("Main", "Gone")))
        #expect(state.withState(of: RestorationPath("Main", "List")) { $0.count } == 2)
        #expect(state.withState(of: RestorationPath("Gone")) { $0.count } == nil)
        state.entries[RestorationPath("New")] = [9]
        #expect(state.count == 6 && state[RestorationPath("New")] == [9])
        #expect(JournalState(epoch: nil, entries: [:]).isEmpty)
    }

    @Test func anIteratorKeepsItsStatesAliveAfterTheStateIsGone() {
        var iterator: JournalState.Iterator
        do {
            let table = StateTable().applying(
                (0..<100).map {
                    StateTable.Change(path: RestorationPath("Item-\($0)"), state: Array("state \($0)".utf8))
                })
            iterator = JournalState(epoch: nil, table: table, damage: nil, uncommittedTailBytes: 0).makeIterator()
        }
        var count = 0
        while let (path, state) = iterator.next() {
            #expect(state == Array("state \(path.components[0].dropFirst(5))".utf8))
            count += 1
        }
        #expect(count == 100)
    }
}
