import StateJournalTestSupport
import Testing

@testable import StateJournal

/// A segment's path table as the reader rebuilds it: each path defined once, in any spelling, and
/// nothing kept from a batch found damaged.
@Suite(.timeLimit(.minutes(10))) struct SegmentPathsTests {
    private enum Definition {
        case define(RestorationPath)
        case refer(UInt64)
    }

    /// Encodes one batch of puts of `state`, each defining its path or naming an earlier number.
    private static func batch(_ definitions: [Definition], state: [UInt8] = [1, 2, 3]) -> [UInt8] {
        var builder = BatchBuilder()
        for definition in definitions {
            state.withUnsafeBytes { bytes in
                switch definition {
                case .define(let path): builder.add(.put, path: path, reference: 0, state: bytes, previous: nil)
                case .refer(let number): builder.add(.put, path: nil, reference: number, state: bytes, previous: nil)
                }
            }
        }
        var dictionary: [UInt8] = []
        return builder.encode(compressor: LZ4Compressor(), previousBody: [], dictionary: &dictionary).payload
    }

    /// Encodes one batch that removes the paths of the given numbers.
    private static func removals(_ numbers: some Sequence<UInt64>) -> [UInt8] {
        var builder = BatchBuilder()
        for number in numbers { builder.add(.remove, path: nil, reference: number, state: nil, previous: nil) }
        var dictionary: [UInt8] = []
        return builder.encode(compressor: LZ4Compressor(), previousBody: [], dictionary: &dictionary).payload
    }

    private static func decode(
        _ payload: [UInt8], with decoder: inout BatchDecoder, into assembler: inout EpochAssembler
    ) throws {
        _ = try payload.withUnsafeBytes { try decoder.decode($0, into: &assembler) }
    }

    @Test(arguments: [
        (RestorationPath("Main", "Inbox"), RestorationPath("Main", "Inbox")),
        (RestorationPath("Main", "caf\u{E9}"), RestorationPath("Main", "cafe\u{301}")),
        (RestorationPath("\u{212A}"), RestorationPath("K")),
    ])
    func aSegmentThatDefinesAPathTwiceInAnySpellingIsDamaged(first: RestorationPath, second: RestorationPath) {
        var decoder = BatchDecoder()
        var assembler = EpochAssembler(keepsChanges: false)
        let payload = Self.batch([.define(first), .define(RestorationPath("Other")), .define(second)])
        #expect(throws: FormatViolation.self) { try Self.decode(payload, with: &decoder, into: &assembler) }
        #expect(decoder.paths.count == 0)
    }

    @Test func aDamagedBatchLeavesNoDefinitionBehind() throws {
        var decoder = BatchDecoder()
        var assembler = EpochAssembler(keepsChanges: false)
        try Self.decode(Self.batch([.define(RestorationPath("Main"))]), with: &decoder, into: &assembler)
        // Defines a path, then names a number no batch defined: the whole batch is refused.
        let damaged = Self.batch([.define(RestorationPath("Main", "List")), .refer(9)])
        #expect(throws: FormatViolation.self) { try Self.decode(damaged, with: &decoder, into: &assembler) }
        #expect(decoder.paths.restorationPaths == [RestorationPath("Main")])
        // The path it defined can be defined again, under the next number.
        try Self.decode(
            Self.batch([.define(RestorationPath("Main", "List")), .refer(2)]), with: &decoder, into: &assembler)
        #expect(decoder.paths.restorationPaths == [RestorationPath("Main"), RestorationPath("Main", "List")])
        _ = assembler.commit()
        #expect(assembler.finish().count == 2)
    }

    @Test func aSegmentThatDefinesAndRemovesManyPathsKeepsNoValueForThoseItRemoved() throws {
        var decoder = BatchDecoder()
        var assembler = EpochAssembler(keepsChanges: false)
        let state = [UInt8](repeating: 7, count: 1_024)
        try Self.decode(Self.batch([.define(RestorationPath("Kept"))], state: state), with: &decoder, into: &assembler)
        _ = assembler.commit()
        // Each epoch defines 100 paths of 1 KiB, and the next removes them: a churning workload.
        for round in 0..<20 {
            let first = UInt64(2 + round * 100)
            let paths = (0..<100).map { Definition.define(RestorationPath("Gone", "\(round)-\($0)")) }
            try Self.decode(Self.batch(paths, state: state), with: &decoder, into: &assembler)
            _ = assembler.commit()
            try Self.decode(Self.removals(first..<first + 100), with: &decoder, into: &assembler)
            _ = assembler.commit()
        }
        // 2,001 paths defined, 2 MiB written; what is held is the one live value (and its slack).
        #expect(decoder.paths.count == 2_001)
        #expect(assembler.slotCapacity < 4 * 1_024)
        let table = assembler.finish()
        #expect(table.count == 1)
    }

    @Test func aRemovalTakenBackGivesThePathItsValueAgain() throws {
        var decoder = BatchDecoder()
        var assembler = EpochAssembler(keepsChanges: false)
        try Self.decode(
            Self.batch([.define(RestorationPath("A")), .define(RestorationPath("B"))], state: [9, 9]), with: &decoder,
            into: &assembler)
        _ = assembler.commit()
        try Self.decode(Self.removals([1]), with: &decoder, into: &assembler)
        assembler.discard()
        let state = JournalState(epoch: nil, table: assembler.finish(), damage: nil, uncommittedTailBytes: 0)
        #expect(state.paths == [RestorationPath("A"), RestorationPath("B")])
        #expect(state[RestorationPath("A")] == [9, 9])
    }

    @Test func aSegmentDefinesThousandsOfPathsAndFindsEachByItsNumber() throws {
        var decoder = BatchDecoder()
        var assembler = EpochAssembler(keepsChanges: false)
        let paths = (0..<5_000).map { RestorationPath("Main", "List-\($0 % 7)", "Item-\($0)") }
        for start in stride(from: 0, to: paths.count, by: 1_000) {
            try Self.decode(
                Self.batch(paths[start..<start + 1_000].map { .define($0) }), with: &decoder, into: &assembler)
        }
        try Self.decode(Self.batch([.refer(1), .refer(5_000)]), with: &decoder, into: &assembler)
        #expect(decoder.paths.restorationPaths == paths)
        _ = assembler.commit()
        let state = JournalState(epoch: nil, table: assembler.finish(), damage: nil, uncommittedTailBytes: 0)
        #expect(state.count == 5_000)
        #expect(state.paths == paths.sorted())
    }
}
