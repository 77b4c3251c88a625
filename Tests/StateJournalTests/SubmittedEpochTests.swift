import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Epochs handed to the background committer with `Journal.submit(_:metadata:after:)`. Nothing here
/// asserts a duration: held calls of the fault-injecting file system order the steps.
@Suite(.timeLimit(.minutes(10)))
struct SubmittedEpochTests {
    static let path = RestorationPath(["Main", "Draft"])

    static func value(_ round: Int) -> [UInt8] { (0..<64).map { UInt8(truncatingIfNeeded: $0 &+ round &* 17) } }

    @Test func submittedEpochsCommitInTheOrderTheyWereSubmitted() async throws {
        let directory = TemporaryDirectory()
        let journal = try openJournal(directory.appending("store"), testOptions(durability: .everyCommit))
        var pending: [PendingEpoch] = []
        for round in 1...20 {
            pending.append(
                journal.submit(
                    [
                        .put(Self.path, Self.value(round)),
                        .put(RestorationPath(["Round", "\(round)"]), [UInt8(round)]),
                    ],
                    metadata: ["round": "\(round)"], after: pending.last))
        }
        var epochs: [UInt64] = []
        for submission in pending { epochs.append(try await submission.value.epoch) }
        #expect(epochs == epochs.sorted())
        #expect(Set(epochs).count == 20)
        #expect(try journal.history().map { $0.metadata["round"] } == (1...20).map { "\($0)" })
        #expect(try journal.state()[Self.path] == Self.value(20))
        #expect(journal.lastDurable?.epoch == epochs.last)
        try journal.close()
    }

    @Test func anEpochSubmittedAfterOneThatFailsWritesNothing() async throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        let store = directory.appending("store")
        let journal = try Journal.open(path: store, options: testOptions(), fileSystem: fileSystem)
        try journal.commit([.put(Self.path, Self.value(0))])

        // The first submission's write waits until the second is queued behind it, then fails.
        fileSystem.hold([.write])
        let first = journal.submit([.put(Self.path, Self.value(1))])
        #expect(fileSystem.waitForHeldCall(until: Date(timeIntervalSinceNow: 600)))
        let second = journal.submit([.put(RestorationPath(["Other"]), [2])], after: first)
        fileSystem.arm(FaultPlan(at: 1, of: [.write], fault: .eio))
        fileSystem.release()

        await #expect(throws: JournalError.self) { try await first.value }
        do {
            _ = try await second.value
            Issue.record("the dependent epoch committed")
        } catch let error as JournalError {
            #expect(error.code == .precedingEpochFailed)
            #expect((error.cause as? JournalError)?.code == .ioFailure)
        }
        #expect(try journal.history().count == 1)
        #expect(try journal.state()[Self.path] == Self.value(0))
        try journal.close()
        let reopened = try Journal.open(path: store, options: testOptions(), fileSystem: FaultInjectingFileSystem())
        #expect(reopened.recoveredState[Self.path] == Self.value(0))
        #expect(reopened.recoveredState[RestorationPath(["Other"])] == nil)
        try reopened.close()
    }

    @Test func anIndependentSubmissionAfterAFailedOneCommits() async throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        let store = directory.appending("store")
        let journal = try Journal.open(path: store, options: testOptions(), fileSystem: fileSystem)
        fileSystem.arm(FaultPlan(at: 1, of: [.write], fault: .eio))
        let failed = journal.submit([.put(Self.path, Self.value(1))])
        let independent = journal.submit([.put(Self.path, Self.value(2))])
        await #expect(throws: JournalError.self) { try await failed.value }
        let committed = try await independent.value
        #expect(committed.epoch == 1)
        try journal.close()
        let reopened = try Journal.open(path: store, options: testOptions(), fileSystem: FaultInjectingFileSystem())
        #expect(reopened.recoveredState[Self.path] == Self.value(2))
        try reopened.close()
    }

    @Test func closeWaitsForEverySubmittedEpoch() throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        let store = directory.appending("store")
        let journal = try Journal.open(
            path: store, options: testOptions(durability: .everyCommit), fileSystem: fileSystem)
        fileSystem.hold([.dataSync])
        let pending = (1...5).map { journal.submit([.put(Self.path, Self.value($0))]) }
        #expect(fileSystem.waitForHeldCall(until: Date(timeIntervalSinceNow: 600)))
        #expect(pending.allSatisfy { $0.result == nil })
        let closer = Thread { fileSystem.release() }
        closer.start()
        try journal.close()
        #expect(try pending.map { try $0.wait().epoch } == [1, 2, 3, 4, 5])
        let reopened = try Journal.open(path: store, options: testOptions(), fileSystem: FaultInjectingFileSystem())
        #expect(reopened.recoveredState[Self.path] == Self.value(5))
        try reopened.close()
    }

    @Test func anEpochAcknowledgedUnderEveryCommitSurvivesAPowerCutWithoutClose() async throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        let store = directory.appending("store")
        let journal = try Journal.open(
            path: store, options: testOptions(durability: .everyCommit), fileSystem: fileSystem)
        let info = try await journal.submit([.put(Self.path, Self.value(7))], metadata: ["k": "v"]).value
        #expect(journal.lastDurable?.epoch == info.epoch)
        // The power is cut now: only what was synced is in the image.
        let image = directory.appending("image")
        try fileSystem.writePowerLossImage(of: store, to: image)
        let recovered = try openJournal(image)
        #expect(recovered.recoveredState.epoch?.epoch == info.epoch)
        #expect(recovered.recoveredState[Self.path] == Self.value(7))
        try recovered.close()
        withExtendedLifetime(journal) {}
    }

    @Test func anEpochSubmittedAfterCloseFailsAtOnceAsClosed() throws {
        let directory = TemporaryDirectory()
        let journal = try openJournal(directory.appending("store"))
        try journal.commit([.put(Self.path, Self.value(1))])
        try journal.close()
        #expect(journalError(.closed) { try journal.submit([.put(Self.path, Self.value(2))]).wait() } != nil)
    }

    @Test func aJournalDroppedWithAnEpochInFlightCommitsItAndThenShutsDown() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var journal: Journal? = try openJournal(store, testOptions(durability: .everyCommit))
        let pending = journal!.submit([.put(Self.path, Self.value(4))])
        // The committer's work holds the journal; the last reference goes with it, on its thread.
        journal = nil
        #expect(try pending.wait().epoch == 1)
        var reopened: Journal?
        for _ in 0..<1_000 where reopened == nil {
            do {
                reopened = try openJournal(store)
            } catch let error as JournalError where error.code == .storeLocked {
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        let opened = try #require(reopened, "the dropped journal never released its lock")
        #expect(opened.recoveredState[Self.path] == Self.value(4))
        try opened.close()
    }

    @Test func aChangeOverTheLimitsIsRejectedByValidateBeforeItIsSubmitted() {
        let oversized = JournalChange.put(Self.path, [UInt8](repeating: 0, count: JournalLimits.maximumStateSize + 1))
        #expect(journalError(.limitExceeded) { try oversized.validate() } != nil)
        #expect(journalError(.invalidPath) { try JournalChange.remove(RestorationPath([])).validate() } != nil)
        #expect((try? JournalChange.put(Self.path, [1]).validate()) != nil)
    }
}
