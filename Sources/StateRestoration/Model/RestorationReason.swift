import StateJournal

/// Why a restoration is happening, as ``RestorationCoder/restorationReason`` tells
/// ``ApplicationRestorationDelegate/shouldRestoreApplicationState(_:)``.
public enum RestorationReason: Sendable, Hashable {
    /// An ordinary launch restoring the latest state.
    case launch
    /// A launch after the previous run died: opening the journal cut off a preservation pass that
    /// never committed, or met damage. The latest consistent state is restored.
    case recoveryAfterCrash
    /// Restoring the state of `avoidedEpoch` crashed the app twice in a row (a crash signal ended
    /// it in the app's own restoration code, or it returned held open and never completed; a kill
    /// from outside does not count), so an older state is restored instead of crashing on the same
    /// state again (``CrashLoopFallback/restoreEarlierState``). The avoided state stays in the
    /// history: restoring `avoidedEpoch` brings it back.
    case crashLoopFallback(avoidedEpoch: UInt64)
    /// The app asked for the state as of a given epoch (time travel).
    case requestedEpoch(UInt64)
    /// The last restoration restored an older epoch (time travel or a crash-loop fallback), the app
    /// preserved nothing since, and compaction has folded that epoch into a checkpoint. Its state
    /// can no longer be read, so the state through `readThrough`, the oldest retained epoch that
    /// follows it, is restored instead.
    case restoredEpochCompacted(UInt64, readThrough: UInt64)
}
