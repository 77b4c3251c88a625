import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// What each durability policy promises about a power cut, checked on the image a power cut would
/// leave (every file cut back to what was synced), and that structure files are synced whatever the policy.
@Suite struct DurabilityTests {
    /// Opens the power-cut image of `store` and returns its recovered state.
    private func openImage(
        of store: String, fileSystem: FaultInjectingFileSystem, in directory: TemporaryDirectory, name: String
    ) throws -> JournalState {
        let image = directory.appending(name)
        try fileSystem.writePowerLossImage(of: store, to: image)
        let journal = try openJournal(image)
        defer { try? journal.close() }
        #expect(journal.recoveryReport.damage == nil, "\(name): \(String(describing: journal.recoveryReport.damage))")
        return journal.recoveredState
    }

    @Test func underEveryCommitAPowerCutLosesNothingAcknowledged() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem()
        let journal = try Journal.open(
            path: store, options: testOptions(durability: .everyCommit, segmentSizeLimit: 800), fileSystem: fileSystem)
        var workload = WorkloadGenerator(seed: 17)
        var model = JournalModel()
        for index in 0..<16 {
            let syncs = fileSystem.callCount(of: .dataSync)
            try commitEpochs(1, journal, &workload, &model)
            #expect(fileSystem.callCount(of: .dataSync) > syncs, "commit \(index) returned without a sync")
            let recovered = try openImage(of: store, fileSystem: fileSystem, in: directory, name: "image-\(index)")
            #expect(recovered.epoch?.epoch == model.epochs.last, "after commit \(index)")
            #expect(recovered.entries == model.latest, "after commit \(index)")
        }
        #expect(try Corruption.segmentNames(in: store).count >= 2)
        try journal.close()
    }

    @Test(arguments: [Durability.none, .interval(seconds: 3600)])
    func withoutPerCommitSyncsAPowerCutStillLeavesAConsistentStore(durability: Durability) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem()
        let journal = try Journal.open(
            path: store, options: testOptions(durability: durability, segmentSizeLimit: 800), fileSystem: fileSystem)
        var workload = WorkloadGenerator(seed: 18)
        var model = JournalModel()
        var lastRecovered: UInt64 = 0
        for index in 0..<16 {
            try commitEpochs(1, journal, &workload, &model)
            let recovered = try openImage(of: store, fileSystem: fileSystem, in: directory, name: "image-\(index)")
            let epoch = recovered.epoch?.epoch ?? 0
            // Some epochs may be lost, but what comes back is exactly one epoch, never less than a roll made durable.
            #expect(recovered.entries == (epoch == 0 ? [:] : model.states[epoch]), "after commit \(index)")
            #expect(epoch >= lastRecovered, "after commit \(index): a later power cut lost more")
            lastRecovered = epoch
        }
        #expect(fileSystem.callCount(of: .dataSync) == 0, "no per-commit sync under \(durability)")
        #expect(lastRecovered > 0, "sealing a segment syncs it, so the epochs before the last roll survive")

        // The manifest and every segment's header are synced whatever the policy.
        let image = directory.appending("structure")
        try fileSystem.writePowerLossImage(of: store, to: image)
        #expect(try Corruption.readFile(image + "/MANIFEST") == Corruption.readFile(store + "/MANIFEST"))
        for segment in try Corruption.segmentNames(in: store) {
            #expect(try fileSize(image + "/" + segment) >= Corruption.segmentHeaderSize, "\(segment) header")
        }

        // An explicit sync makes everything durable.
        try journal.sync()
        let synced = try openImage(of: store, fileSystem: fileSystem, in: directory, name: "after-sync")
        #expect(synced.epoch?.epoch == model.epochs.last)
        #expect(synced.entries == model.latest)
        try journal.close()
    }

    @Test func closingSyncsUnderTheIntervalPolicyButNotUnderNone() throws {
        for durability in [Durability.interval(seconds: 3600), .none] {
            let directory = TemporaryDirectory()
            let store = directory.appending("store")
            let fileSystem = FaultInjectingFileSystem()
            let journal = try Journal.open(
                path: store, options: testOptions(durability: durability), fileSystem: fileSystem)
            try journal.commit([.put(RestorationPath("Main"), [1])])
            #expect(fileSystem.callCount(of: .dataSync) == 0)
            try journal.close()
            let expectSync = durability != .none
            #expect((fileSystem.callCount(of: .dataSync) > 0) == expectSync, "\(durability)")
            let recovered = try openImage(of: store, fileSystem: fileSystem, in: directory, name: "image")
            // Under `.none` nothing synced the commit, so a power cut takes it.
            #expect(recovered.epoch?.epoch == (expectSync ? 1 : nil), "\(durability)")
            #expect(recovered.entries == (expectSync ? [RestorationPath("Main"): [1]] : [:]), "\(durability)")
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func aFailedBackgroundSyncPoisonsTheJournalAndCutsWhatItCouldNotSync() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let fileSystem = FaultInjectingFileSystem(plan: FaultPlan(at: 1, of: [.dataSync], fault: .eio))
        let journal = try Journal.open(
            path: store, options: testOptions(durability: .interval(seconds: 0.001)), fileSystem: fileSystem)
        try journal.commit([.put(RestorationPath("Main"), [1])])
        // The background sync fails soon; from then on the journal refuses commits.
        var poisoned = false
        while !poisoned {
            do {
                let epoch = try journal.beginEpoch()
                epoch.abort()
                Thread.sleep(forTimeInterval: 0.001)
            } catch let error as JournalError {
                #expect(error.code == .storePoisoned)
                poisoned = true
            }
        }
        #expect(fileSystem.faultsFired == 1)
        let syncs = fileSystem.callCount(of: .dataSync)
        journalError(.storePoisoned) { try journal.commit([.put(RestorationPath("Main"), [2])]) }
        journalError(.storePoisoned) { try journal.sync() }
        #expect(fileSystem.callCount(of: .dataSync) == syncs, "a failed sync is not retried")
        try? journal.close()
        // Epoch 1 never reached the disk: it was cut, so a reopened store does not show it.
        let reopened = try openJournal(store)
        #expect(reopened.recoveredState.entries == [:])
        #expect(reopened.lastCommitted == nil)
        try reopened.close()
    }

    @Test func theTornTailCutByAWriterIsSyncedBeforeNewEpochsFollowIt() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        do {
            let journal = try openJournal(store)
            try journal.commit([.put(RestorationPath("Main"), [1])])
            try journal.close()
        }
        let segment = store + "/" + (try Corruption.segmentNames(in: store))[0]
        try Corruption.append(segment, Corruption.garbage(300, seed: 3))
        let fileSystem = FaultInjectingFileSystem(keepsLog: true)
        let journal = try Journal.open(
            path: store, options: testOptions(durability: .everyCommit), fileSystem: fileSystem)
        #expect(journal.recoveryReport.truncatedTailBytes == 300)
        let log = fileSystem.log
        let cut = log.firstIndex { $0.hasPrefix("truncate") && $0.contains(".sjl") }
        let syncAfterCut = cut.flatMap { index in
            log[index...].firstIndex { $0.hasPrefix("fullSync") || $0.hasPrefix("dataSync") }
        }
        #expect(cut != nil && syncAfterCut != nil, "\(log)")
        try journal.commit([.put(RestorationPath("Main"), [2])])
        let recovered = try openImage(of: store, fileSystem: fileSystem, in: directory, name: "image")
        #expect(recovered.entries == [RestorationPath("Main"): [2]])
        try journal.close()
    }
}
