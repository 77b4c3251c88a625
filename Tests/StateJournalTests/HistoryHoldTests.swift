import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// A history hold keeps every epoch from its own on through compactions whose retention would drop
/// them, across launches, until it is released; a damaged hold holds everything.
@Suite struct HistoryHoldTests {
    static func options() -> JournalOptions {
        var options = testOptions(compaction: .manual)
        options.retention = RetentionPolicy(checkpoints: 1)
        return options
    }

    /// Commits `count` epochs, compacting after each.
    static func commitAndCompact(
        _ count: Int, _ journal: Journal, _ workload: inout WorkloadGenerator, _ model: inout JournalModel
    ) throws {
        for _ in 0..<count {
            try commitEpochs(1, journal, &workload, &model)
            _ = try journal.compact()
        }
    }

    @Test func compactionKeepsEveryEpochFromTheHeldOneOnUntilTheHoldIsReleased() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var workload = WorkloadGenerator(seed: 3)
        var model = JournalModel()
        var journal = try openJournal(store, Self.options())
        try Self.commitAndCompact(5, journal, &workload, &model)
        // The latest epoch, which the last compaction folded into the only checkpoint kept.
        let held = model.epochs[4]
        try journal.holdHistory(from: held)
        // A later hold that holds less does not move it.
        try journal.holdHistory(from: held + 1)
        #expect(journal.historyHold == held)
        try Self.commitAndCompact(6, journal, &workload, &model)
        try journal.close()

        journal = try openJournal(store, Self.options())
        #expect(journal.historyHold == held)
        try Self.commitAndCompact(3, journal, &workload, &model)
        // The hold is the store's own file, not one a check lists as unnamed.
        #expect(StoreInspector.verify(URL(fileURLWithPath: store)).unnamedFiles.isEmpty)
        let retained = try journal.history().map(\.epoch)
        #expect(retained.first.map { $0 <= held } == true, "\(retained)")
        for epoch in model.epochs where epoch >= held {
            #expect(try journal.state(through: epoch).entries == model.states[epoch], "epoch \(epoch)")
        }
        try journal.releaseHistoryHold()
        #expect(journal.historyHold == nil)
        try Self.commitAndCompact(1, journal, &workload, &model)
        #expect(try journal.history().first?.epoch == model.epochs.last)
        try journal.close()
        #expect(!FileManager.default.fileExists(atPath: store + "/HOLD"))
    }

    @Test func aDamagedHoldHoldsTheWholeHistory() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var workload = WorkloadGenerator(seed: 4)
        var model = JournalModel()
        var journal = try openJournal(store, Self.options())
        try commitEpochs(3, journal, &workload, &model)
        try journal.holdHistory(from: model.epochs[1])
        try journal.close()
        try Corruption.flipByte(store + "/HOLD", at: 8)
        journal = try openJournal(store, Self.options())
        #expect(journal.historyHold == 0)
        try Self.commitAndCompact(4, journal, &workload, &model)
        #expect(try journal.history().first?.epoch == model.epochs.first)
        try journal.close()
        #expect(StoreInspector.verify(URL(fileURLWithPath: store)).status == .clean)
    }
}
