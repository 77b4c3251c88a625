import Foundation
import StateJournalComparison
import Testing

/// The bytes on disk of one object saved alone, epoch after epoch: the scenario where the framing of
/// each epoch, not the compression of its state, decides the size.
@Suite struct CompressionScenarioTests {
    @Test func oneObjectSavedAThousandTimesTakesAtMostOneAndAHalfTimesLZ4OfTheSameEntries() throws {
        let scenario = CompressionComparison.standardScenarios.first { $0.hotObject }!
        let result = try CompressionComparison.measure(scenario)
        let perEpoch = Double(result.journalBytes) / Double(result.entries)
        print(
            """
            \(result.scenario): journal \(result.journalBytes) bytes (\(String(format: "%.1f", perEpoch)) an epoch), \
            lz4 -1 of the entries \(result.lz4EntryBytes), ratio \(String(format: "%.3f", result.ratioToLZ4Entries))
            """)
        #expect(result.ratioToLZ4Entries <= 1.5)
    }
}
