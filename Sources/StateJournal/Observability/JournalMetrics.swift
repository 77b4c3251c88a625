import Dispatch
import Metrics

/// The metrics a journal reports, created once when it opens so that commits only increment them.
///
/// Labels start with `statejournal_`; the factory is the global `MetricsSystem`'s unless tests pass one.
struct JournalMetrics: Sendable {
    /// Epochs committed (`statejournal_epochs_committed`).
    let epochsCommitted: Counter
    /// Bytes appended to segments by commits (`statejournal_bytes_appended`).
    let bytesAppended: Counter
    /// Compactions that committed a checkpoint (`statejournal_compactions`).
    let compactions: Counter
    /// How long opening took to replay the journal (`statejournal_replay_duration`).
    let replayDuration: Metrics.Timer
    /// How long a commit took, including its sync under ``Durability/everyCommit``
    /// (`statejournal_commit_duration`).
    let commitDuration: Metrics.Timer

    init(factory: (any MetricsFactory)?) {
        let factory = factory ?? MetricsSystem.factory
        epochsCommitted = Counter(label: "statejournal_epochs_committed", factory: factory)
        bytesAppended = Counter(label: "statejournal_bytes_appended", factory: factory)
        compactions = Counter(label: "statejournal_compactions", factory: factory)
        replayDuration = Metrics.Timer(label: "statejournal_replay_duration", factory: factory)
        commitDuration = Metrics.Timer(label: "statejournal_commit_duration", factory: factory)
    }

    /// Records one commit that started at `start` (from ``now()``) and appended `bytes`.
    func recordCommit(bytes: Int, since start: UInt64) {
        commitDuration.recordNanoseconds(Self.now() &- start)
        epochsCommitted.increment()
        bytesAppended.increment(by: bytes)
    }

    /// A monotonic clock reading in nanoseconds, for durations.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
