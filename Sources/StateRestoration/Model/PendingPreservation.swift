import StateJournal

/// A preservation pass whose encode step has run: its changes are on their way to the journal,
/// compressed, written and synced by the journal's background committer.
///
/// Get one from ``RestorationManager/submitPreservation(roots:mode:)``. `Sendable`: await its
/// ``report()`` from any task; the manager itself stays on its own thread or actor.
public struct PendingPreservation: Sendable {
    private let encoded: PreservationReport
    private let epoch: PendingEpoch?
    private let predecessor: PendingEpoch?

    init(report: PreservationReport, epoch: PendingEpoch?, predecessor: PendingEpoch?) {
        self.encoded = report
        self.epoch = epoch
        self.predecessor = predecessor
    }

    /// Whether the pass handed an epoch to the journal; `false` when it found nothing changed,
    /// the delegate declined, or a restoration was in progress.
    public var submitsEpoch: Bool { epoch != nil }

    /// What the pass did, once its epoch is as durable as the journal's policy promises: synced
    /// under `Durability.everyCommit`, handed to the operating system otherwise.
    ///
    /// A pass that found nothing changed finishes once the epochs submitted before it have (it
    /// relied on them), with ``PreservationReport/Outcome/unchanged``. Cancelling the awaiting
    /// task does not cancel the commit, nor end the wait early.
    ///
    /// - Returns: The report; its ``PreservationReport/epoch`` is the committed epoch.
    /// - Throws: `JournalError` when the epoch could not be committed, or, with
    ///   `JournalError.Code.precedingEpochFailed`, when an epoch submitted before it failed. The
    ///   journal then holds neither, and the manager's next pass is full.
    public func report() async throws -> PreservationReport {
        var report = encoded
        if let epoch {
            report.outcome = .committed(try await epoch.value)
        } else if let predecessor {
            do {
                _ = try await predecessor.value
            } catch {
                throw JournalError(
                    .precedingEpochFailed,
                    """
                    The pass found nothing changed since a pass submitted before it, which failed; the next pass is \
                    full and writes the changes again.
                    """,
                    cause: error)
            }
        }
        return report
    }
}
