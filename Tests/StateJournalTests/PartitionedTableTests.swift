import StateJournalTestSupport
import Testing

@testable import StateJournal

/// The writer's per-path table grows a part at a time and answers as a `Dictionary` does.
@Suite struct PartitionedTableTests {
    /// A key whose hash is the same for all: what a table meets when keys' hashes agree on every bit.
    struct Colliding: PartitionedKey {
        var number: Int
        var partitionHash: Int { 0 }
        func hash(into hasher: inout Hasher) { hasher.combine(0) }
    }

    @Test func randomInsertsReplacementsAndRemovalsAgreeWithADictionaryAtEveryStep() {
        var random = SplitMix64(seed: 42)
        var table = PartitionedTable<RestorationPath, Int>()
        var model: [RestorationPath: Int] = [:]
        for step in 0..<60_000 {
            let path = RestorationPath(["Board", "Card-\(Int.random(in: 0..<40_000, using: &random))"])
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                let (value, inserted) = table.value(forKey: path, inserting: step)
                #expect(inserted == (model[path] == nil))
                if inserted { model[path] = step }
                #expect(value == model[path])
            case 3..<6:
                #expect(table.updateValue(step, forKey: path) == model.updateValue(step, forKey: path))
            case 6..<8:
                #expect(table.removeValue(forKey: path) == model.removeValue(forKey: path))
            default:
                #expect(table[path] == model[path])
            }
            #expect(table.count == model.count)
        }
        for (path, value) in model { #expect(table[path] == value) }
        #expect(table.shape.parts > 4)
    }

    @Test func noPartEverHoldsMoreThanItsLimitSoThatOneInsertMovesAtMostOnePart() {
        var table = PartitionedTable<RestorationPath, Int>()
        for index in 0..<200_000 { table[RestorationPath(["Card-\(index)"])] = index }
        let shape = table.shape
        #expect(shape.largestLimit == PartitionedTable<RestorationPath, Int>.partLimit)
        // Parts split at the limit into halves: between a quarter and all of the limit each.
        #expect(shape.parts >= 200_000 / PartitionedTable<RestorationPath, Int>.partLimit)
        #expect(shape.parts <= 4 * 200_000 / PartitionedTable<RestorationPath, Int>.partLimit)
        #expect(shape.directory <= 8 * shape.parts)
        for index in stride(from: 0, to: 200_000, by: 997) {
            #expect(table[RestorationPath(["Card-\(index)"])] == index)
        }
    }

    @Test func keysWhoseHashesAllAgreeDoNotGrowTheDirectoryAndAreAllFound() {
        var table = PartitionedTable<Colliding, Int>()
        let count = 3 * PartitionedTable<Colliding, Int>.partLimit
        for number in 0..<count { table[Colliding(number: number)] = number }
        #expect(table.count == count)
        #expect(table.shape.parts == 1 && table.shape.directory == 1)
        for number in stride(from: 0, to: count, by: 101) { #expect(table[Colliding(number: number)] == number) }
    }

    @Test func aTableMadeWithRoomSplitsNoPartWhileFillingIt() {
        var table = PartitionedTable<RestorationPath, Int>(capacity: 50_000)
        let before = table.shape
        for index in 0..<50_000 { table[RestorationPath(["Card-\(index)"])] = index }
        #expect(table.shape.parts == before.parts)
        #expect(table.count == 50_000)
    }

    @Test func removingEverythingLeavesAnEmptyTableThatFillsAgain() {
        var table = PartitionedTable<RestorationPath, Int>()
        for index in 0..<10_000 { table[RestorationPath(["Card-\(index)"])] = index }
        table.removeAll()
        #expect(table.isEmpty && table.shape.parts == 1)
        table[RestorationPath(["Card-1"])] = 1
        #expect(table.count == 1 && table[RestorationPath(["Card-1"])] == 1)
    }
}
