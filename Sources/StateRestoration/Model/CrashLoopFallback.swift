/// What a restoration does when restoring the same state crashed the app twice in a row.
///
/// A restoration counts as crashed only when the process died of a crash signal (a Swift trap, a
/// fault, an abort) inside the app's own restoration code (the decode pass, the finish pass,
/// `didDecodeRestorableState`), or when it returned with the restoration held open by
/// `extendStateRestoration()` and the process ended before `completeStateRestoration()`. A process
/// killed from outside (`SIGKILL`, an OOM kill, a deploy, a power cut) while it restores is not a
/// crash: it leaves no trace, and the next launch restores the same state again.
public enum CrashLoopFallback: Sendable, Hashable {
    /// Restore the state saved before the one that crashed, as UIKit discards state that crashes
    /// the app at launch: made for screens, whose state the user can rebuild. The avoided state is
    /// never deleted: the store holds its history (`Journal.holdHistory(from:)`), the report says
    /// ``RestorationReason/crashLoopFallback(avoidedEpoch:)``, the manager logs it at error, and
    /// ``RestorationManager/restoreState(roots:asOf:)`` with the avoided epoch brings it back.
    /// The default of ``RestorationConfiguration``.
    case restoreEarlierState
    /// Restore the latest state however often it crashed, logging each crash at error: for a
    /// service, whose state is data that nothing may undo without an operator saying so. The
    /// default of `StateRestorationService`.
    case never
}
