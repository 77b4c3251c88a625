/// What the writer is doing: the one value `Journal.condition` guards about its activities, changed
/// only through the named transitions below.
///
/// Five activities can be under way at once, each with states of its own: the writer's life
/// (open, poisoned by a failed write or sync, closed), the epoch being written, a roll to a new
/// segment, a sync, and a compaction. Each transition says which states it starts from; in a debug
/// build a transition from any other state stops the program, so that the tests find a path that
/// reaches it (`WriterStateTests` checks each transition, and the engine's suites every path that
/// uses them).
struct WriterState: Sendable {
    /// The writer's life.
    enum Lifecycle: Sendable {
        case open
        /// A write or sync failed: the journal refuses commits until it is reopened.
        case poisoned(JournalError)
        case closed
    }

    /// The epoch being written; one at most.
    enum Epoch: Equatable, Sendable {
        case none
        /// Begun by ``Journal/beginEpoch()`` (`inBackground` false) or by the committer thread of
        /// ``Journal/submit(_:metadata:after:)``.
        case open(inBackground: Bool)
    }

    /// A roll to a new segment, one at a time.
    enum Roll: Equatable, Sendable {
        case none
        /// A thread has the right to roll and is creating the new segment or syncing the old one.
        case claimed
        /// The claimed roll is switching segments under the lock: no epoch may begin.
        case switching
    }

    /// The sync of the active segment, one at a time.
    enum Sync: Equatable, Sendable {
        case idle
        /// A committer waits for other commits to join the sync it is about to start.
        case gathering
        /// A sync runs, with the lock released.
        case syncing
    }

    /// A compaction, one at a time.
    enum Compaction: Equatable, Sendable {
        case idle
        /// A commit found one due and started a thread to run it, which has not begun yet: no
        /// other commit starts another.
        case scheduled
        case running
    }

    private(set) var lifecycle = Lifecycle.open
    private(set) var epoch = Epoch.none
    private(set) var roll = Roll.none
    private(set) var sync = Sync.idle
    private(set) var compaction = Compaction.idle

    // MARK: - Questions

    var isClosed: Bool {
        if case .closed = lifecycle { return true }
        return false
    }

    /// The failure that poisoned the journal, if one did.
    var poison: JournalError? {
        if case .poisoned(let error) = lifecycle { return error }
        return nil
    }

    /// Whether an epoch may begin now: none is open and no roll is switching segments.
    var epochCanBegin: Bool { epoch == .none && roll != .switching }

    /// Whether an epoch begun by the caller (not the committer thread) is open.
    var callerEpochIsOpen: Bool { epoch == .open(inBackground: false) }

    /// Whether a sync runs or is about to.
    var syncIsUnderWay: Bool { sync != .idle }

    // MARK: - Transitions

    /// An epoch begins. From: no epoch open, no roll switching.
    mutating func beginEpoch(inBackground: Bool) {
        assert(epochCanBegin, "an epoch began while \(self)")
        epoch = .open(inBackground: inBackground)
    }

    /// The open epoch was committed or aborted. From: an epoch open.
    mutating func endEpoch() {
        assert(epoch != .none, "an epoch ended while none was open")
        epoch = .none
    }

    /// A thread takes the right to roll. From: no roll (or a closed journal, where waiting for the
    /// roll under way ends early).
    mutating func claimRoll() {
        assert(roll == .none || isClosed, "a roll was claimed while \(self)")
        roll = .claimed
    }

    /// The claimed roll starts switching segments. From: the roll claimed.
    mutating func startSwitchingSegments() {
        assert(roll == .claimed, "segments switched while \(self)")
        roll = .switching
    }

    /// The switch is done; the roll goes on with its syncs. From: switching.
    mutating func finishSwitchingSegments() {
        assert(roll == .switching, "a switch ended while \(self)")
        roll = .claimed
    }

    /// The roll is over. From: the roll claimed.
    mutating func releaseRoll() {
        assert(roll == .claimed, "a roll was released while \(self)")
        roll = .none
    }

    /// A committer starts waiting for others before it syncs. From: no sync.
    mutating func startGathering() {
        assert(sync == .idle, "gathering started while \(self)")
        sync = .gathering
    }

    /// The gathering is over. From: gathering.
    mutating func stopGathering() {
        assert(sync == .gathering, "gathering stopped while \(self)")
        sync = .idle
    }

    /// A sync starts. From: no sync.
    mutating func startSync() {
        assert(sync == .idle, "a sync started while \(self)")
        sync = .syncing
    }

    /// The sync returned, whatever it returned. From: syncing.
    mutating func finishSync() {
        assert(sync == .syncing, "a sync finished while \(self)")
        sync = .idle
    }

    /// A commit found a compaction due and starts a thread for it. From: no compaction.
    mutating func scheduleCompaction() {
        assert(compaction == .idle, "a compaction was scheduled while \(self)")
        compaction = .scheduled
    }

    /// The scheduled compaction will not run: the journal closes, or its thread found it could not.
    /// From: scheduled.
    mutating func cancelScheduledCompaction() {
        assert(compaction == .scheduled, "a scheduled compaction was cancelled while \(self)")
        compaction = .idle
    }

    /// A compaction starts: one called for (from no compaction) or the scheduled one (from
    /// scheduled).
    mutating func startCompaction(scheduled: Bool = false) {
        assert(compaction == (scheduled ? .scheduled : .idle), "a compaction started while \(self)")
        compaction = .running
    }

    /// The compaction is over. From: running.
    mutating func finishCompaction() {
        assert(compaction == .running, "a compaction finished while \(self)")
        compaction = .idle
    }

    /// A write or sync failed. From: open (a journal poisoned or closed stays so).
    mutating func poison(with error: JournalError) {
        if case .open = lifecycle { lifecycle = .poisoned(error) }
    }

    /// A poisoned journal opened its store again (``Journal/reopen()``) and accepts commits. From:
    /// poisoned, with no epoch, sync, roll or compaction under way.
    mutating func reopen() {
        assert(poison != nil, "a journal that was not poisoned was reopened")
        assert(
            epoch == .none && sync == .idle && roll == .none && compaction == .idle,
            "the journal reopened while \(self)")
        lifecycle = .open
    }

    /// The journal closes. From: open or poisoned, with no sync, roll or compaction under way.
    mutating func close() {
        assert(!isClosed, "the journal closed twice")
        assert(sync == .idle && roll == .none && compaction == .idle, "the journal closed while \(self)")
        lifecycle = .closed
    }
}

extension WriterState: CustomStringConvertible {
    var description: String {
        let life =
            switch lifecycle {
            case .open: "open"
            case .poisoned: "poisoned"
            case .closed: "closed"
            }
        return "lifecycle \(life), epoch \(epoch), roll \(roll), sync \(sync), compaction \(compaction)"
    }
}
