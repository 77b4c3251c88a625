import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Damage inside a large record, with committed epochs after it in the last segment: it must be
/// reported as damage (and strict mode must throw), never taken for a torn tail that a writer cuts.
@Suite struct ResyncBudgetTests {
    @Test(arguments: [20, 5] as [Int])
    func damageInsideALargeRecordIsNotMistakenForATornTail(byte: Int) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var random = SplitMix64(seed: 1)
        var model = JournalModel()
        // Under everyCommit the later commits say the large record was synced: damage there is damage.
        let journal = try openJournal(store, testOptions(durability: .everyCommit))
        let small: [JournalChange] = [.put(RestorationPath("Main"), [1])]
        model.commit(try journal.commit(small).epoch, small)
        let segment = store + "/" + (try Corruption.segmentNames(in: store))[0]
        let before = writtenEnd(of: journal)
        // An incompressible 6 MiB state: stored raw, in one large record.
        let big: [JournalChange] = [.put(RestorationPath("Big"), random.bytes(6 << 20))]
        model.commit(try journal.commit(big).epoch, big)
        for index in 0..<3 {
            let changes: [JournalChange] = [.put(RestorationPath("After", "\(index)"), [UInt8(index)])]
            model.commit(try journal.commit(changes).epoch, changes)
        }
        try journal.close()

        try Corruption.flipByte(segment, at: before + byte)
        let state = try openReader(store).state()
        #expect(
            state.damage != nil,
            "damage followed by three committed epochs was taken for a torn tail (\(state.uncommittedTailBytes) bytes)")
        #expect(state.epoch?.epoch == 1)
        journalError(.damaged) { try openReader(store, recovery: .strict).state() }
        let writer = try openJournal(store)
        #expect(writer.recoveryReport.damage != nil)
        #expect(!writer.recoveryReport.quarantinedFiles.isEmpty)
        #expect(try writer.commit([]).epoch == 6)
        try writer.close()
    }
}
