import Testing

@testable import StateJournal

/// Each transition of the writer's state machine moves only the activity it names, and the
/// questions the writer asks of the state answer as each transition leaves it.
@Suite struct WriterStateTests {
    @Test func anEpochBeginsOnlyWhenNoneIsOpenAndNoRollSwitchesSegments() {
        var state = WriterState()
        #expect(state.epochCanBegin)
        state.beginEpoch(inBackground: false)
        #expect(state.epoch == .open(inBackground: false))
        #expect(state.callerEpochIsOpen)
        #expect(!state.epochCanBegin)
        state.endEpoch()
        #expect(state.epochCanBegin)

        state.beginEpoch(inBackground: true)
        #expect(!state.callerEpochIsOpen, "the committer thread's epoch is not the caller's")
        state.endEpoch()

        state.claimRoll()
        #expect(state.epochCanBegin, "a claimed roll creating its file lets epochs go on")
        state.startSwitchingSegments()
        #expect(!state.epochCanBegin, "no epoch begins while segments switch")
        state.finishSwitchingSegments()
        #expect(state.epochCanBegin)
        #expect(state.roll == .claimed, "the roll goes on with its syncs")
        state.releaseRoll()
        #expect(state.roll == .none)
    }

    @Test func gatheringAndSyncingAreBothASyncUnderWay() {
        var state = WriterState()
        #expect(!state.syncIsUnderWay)
        state.startGathering()
        #expect(state.sync == .gathering && state.syncIsUnderWay)
        state.stopGathering()
        #expect(!state.syncIsUnderWay)
        state.startSync()
        #expect(state.sync == .syncing && state.syncIsUnderWay)
        state.finishSync()
        #expect(state.sync == .idle)
    }

    @Test func aScheduledCompactionEitherStartsOrIsCancelled() {
        var state = WriterState()
        state.scheduleCompaction()
        #expect(state.compaction == .scheduled)
        state.startCompaction(scheduled: true)
        #expect(state.compaction == .running)
        state.finishCompaction()
        state.scheduleCompaction()
        state.cancelScheduledCompaction()
        #expect(state.compaction == .idle)
        #expect("\(state)" == "lifecycle open, epoch none, roll none, sync idle, compaction idle")
    }

    @Test func aCompactionRunsBetweenItsTwoTransitions() {
        var state = WriterState()
        state.startCompaction()
        #expect(state.compaction == .running)
        state.finishCompaction()
        #expect(state.compaction == .idle)
    }

    @Test func theFirstPoisonStaysAndClosingEndsEverything() {
        var state = WriterState()
        #expect(state.poison == nil && !state.isClosed)
        let first = JournalError(.storePoisoned, "first")
        state.poison(with: first)
        state.poison(with: JournalError(.storePoisoned, "second"))
        #expect(state.poison?.message == "first")
        state.close()
        #expect(state.isClosed)
        #expect(state.poison == nil, "a closed journal reports closed, not poisoned")
        state.poison(with: first)
        #expect(state.isClosed, "a closed journal stays closed")
    }

    @Test func everyActivityIsIndependentOfTheOthers() {
        var state = WriterState()
        state.beginEpoch(inBackground: false)
        state.startCompaction()
        state.claimRoll()
        state.startSync()
        #expect(state.epoch == .open(inBackground: false))
        #expect(state.compaction == .running && state.roll == .claimed && state.sync == .syncing)
        state.finishSync()
        state.releaseRoll()
        state.finishCompaction()
        state.endEpoch()
        #expect("\(state)" == "lifecycle open, epoch none, roll none, sync idle, compaction idle")
    }
}
