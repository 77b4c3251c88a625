import Foundation
import StateJournalComparison
import Testing

/// The bench's byte comparison: the journal it measures must hold the same history that `lz4 -1`
/// is given, whatever the writer's automatic compaction would have done meanwhile.
@Suite struct CompressionComparisonTests {
    @Test func theComparedJournalHoldsEveryPassEvenWhenAutomaticCompactionWouldHaveRun() throws {
        // About 200 bytes × 1,000 objects × 40 passes: well past the default policy's trigger.
        let result = try CompressionComparison.measure(
            .init(name: "1,000 objects, 40 passes, all changed", objects: 1_000, passes: 40, changed: 1_000))
        #expect(result.epochsRetained == 41)
        #expect(result.entries == 41_000)
        #expect(result.rawStateBytes > 4 << 20)
        // Whole history, compressed against previous versions: smaller than the raw states, and
        // more than one pass's worth.
        #expect(result.journalBytes < result.rawStateBytes)
        #expect(result.journalBytes > result.rawStateBytes / 41)
    }
}
