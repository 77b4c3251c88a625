import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Replay against a plain in-memory model, at every epoch, across segment rolls and reopenings.
@Suite struct ReplayModelTests {
    /// Checks every epoch of `model` against the journal's and a reader's replay.
    private func expectReplayMatches(
        _ model: JournalModel, journal: Journal?, store: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let reader = try openReader(store)
        for epoch in model.epochs {
            let expected = model.states[epoch]!
            if let journal {
                let state = try journal.state(through: epoch)
                #expect(state.epoch?.epoch == epoch, sourceLocation: sourceLocation)
                #expect(
                    state.entries == expected, "journal at epoch \(epoch): \(difference(state.entries, expected))",
                    sourceLocation: sourceLocation)
                #expect(state.damage == nil, sourceLocation: sourceLocation)
            }
            let read = try reader.state(through: epoch)
            #expect(
                read.entries == expected, "reader at epoch \(epoch): \(difference(read.entries, expected))",
                sourceLocation: sourceLocation)
        }
        let latest = try reader.state()
        #expect(latest.epoch?.epoch == model.epochs.last, sourceLocation: sourceLocation)
        #expect(latest.entries == model.latest, sourceLocation: sourceLocation)
        #expect(try reader.history().map(\.epoch) == model.epochs, sourceLocation: sourceLocation)
        var seen: [UInt64] = []
        try reader.forEachEpoch { info, changes in
            seen.append(info.epoch)
            #expect(
                changes == model.changes[info.epoch], "changes of epoch \(info.epoch)", sourceLocation: sourceLocation)
            return true
        }
        #expect(seen == model.epochs, sourceLocation: sourceLocation)
    }

    @Test(arguments: [0, 64 << 20])
    func replayEqualsTheModelAtEveryEpochAcrossSegmentRollsAndReopenings(compressionCacheLimit: Int) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let options = testOptions(segmentSizeLimit: 4096, compressionCacheLimit: compressionCacheLimit)
        var workload = WorkloadGenerator(seed: 42, removeAllPercent: 5)
        var model = JournalModel()

        do {
            let journal = try openJournal(store, options)
            try commitEpochs(60, journal, &workload, &model)
            try expectReplayMatches(model, journal: journal, store: store)
            try journal.close()
        }
        let segments = try Corruption.segmentNames(in: store)
        #expect(segments.count >= 3, "a 4 KiB segment limit should roll several segments, got \(segments)")
        #expect(model.changes.values.contains { $0.contains(.removeAll) }, "the workload should include a discard")
        #expect(model.changes.values.contains { $0.contains { if case .remove = $0 { true } else { false } } })

        do {
            let journal = try openJournal(store, options)
            #expect(journal.recoveryReport.isClean)
            #expect(journal.recoveredState.epoch?.epoch == model.epochs.last)
            #expect(journal.recoveredState.entries == model.latest)
            try expectReplayMatches(model, journal: journal, store: store)
            // Writing continues after reopening, and the numbers keep growing.
            try commitEpochs(30, journal, &workload, &model)
            #expect(model.epochs == Array(1...90))
            try expectReplayMatches(model, journal: journal, store: store)
            try journal.close()
        }
        let journal = try openJournal(store, options)
        try expectReplayMatches(model, journal: journal, store: store)
        try journal.close()
    }

    @Test func anEpochSpanningSeveralBatchesReplaysWhole() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var random = SplitMix64(seed: 7)
        var model = JournalModel()
        let journal = try openJournal(store)
        // About 240 KiB of state in one epoch: several 32 KiB batches, each compressed against the one before.
        var first: [JournalChange] = []
        for index in 0..<600 {
            let path = RestorationPath("Main", "List", "Row-\(index)")
            first.append(.put(path, WorkloadGenerator.freshState(for: path, size: 400, random: &random)))
        }
        model.commit(try journal.commit(first).epoch, first)
        // The next epoch edits most of them, removes some, and ends with a path put twice.
        var second: [JournalChange] = []
        for index in 0..<600 {
            let path = RestorationPath("Main", "List", "Row-\(index)")
            if index % 7 == 0 {
                second.append(.remove(path))
            } else if let old = model.latest[path] {
                second.append(.put(path, WorkloadGenerator.edit(old, sizes: 50...420, random: &random)))
            }
        }
        second.append(.put(RestorationPath("Main", "List", "Row-1"), Array("last write wins".utf8)))
        model.commit(try journal.commit(second).epoch, second)
        try expectReplayMatches(model, journal: journal, store: store)
        let history = try journal.history()
        #expect(history.map(\.entryCount) == [600, 601])
        try journal.close()
        let reopened = try openJournal(store)
        #expect(reopened.recoveredState.entries == model.latest)
        try reopened.close()
    }

    @Test func metadataAndEntryCountsAreReplayed() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let journal = try openJournal(store, testOptions(segmentSizeLimit: 200))
        let path = RestorationPath("Main")
        try journal.commit([.put(path, [1])], metadata: ["bundleVersion": "1.0", "idiom": "desktop"])
        try journal.commit([.put(path, [2])], metadata: ["bundleVersion": "1.0", "idiom": "desktop"])
        try journal.commit([.remove(path), .removeAll], metadata: ["bundleVersion": "1.1"])
        try journal.commit([], metadata: [:])
        try journal.close()
        let history = try openReader(store).history()
        #expect(history.map(\.epoch) == [1, 2, 3, 4])
        #expect(
            history.map(\.metadata) == [
                ["bundleVersion": "1.0", "idiom": "desktop"], ["bundleVersion": "1.0", "idiom": "desktop"],
                ["bundleVersion": "1.1"], [:],
            ])
        #expect(history.map(\.entryCount) == [1, 1, 2, 0])
        #expect(try openReader(store).state().entries.isEmpty)
        #expect(try openReader(store).state(through: 2).entries == [path: [2]])
        journalError(.noSuchEpoch) { try openReader(store).state(through: 9) }
    }
}
