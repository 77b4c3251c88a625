import StateJournal

/// Chooses which epoch's state a launch restores, from the restoration markers in the history.
///
/// Every restoration commits a `restorationBegan` marker naming the epoch it restores, and a
/// `restorationCompleted` marker once ``RestorationManager/completeStateRestoration()`` balanced
/// every extension. Reading the history backwards from its end:
///
/// - the markers after the last completed restoration or state change count the failed attempts
///   per restored epoch;
/// - the starting point is the epoch the last completed restoration restored, or else the latest
///   epoch that changed the state;
/// - while the starting point has failed twice or more, the epoch before it that changed the state
///   is taken instead.
enum CrashLoopGuard {
    /// Restoring the same state that many times without completing triggers the fallback.
    static let failureLimit = 2

    static func choose(history: [EpochInfo], recoveredAfterCrash: Bool) -> (epoch: UInt64?, reason: RestorationReason) {
        var failures: [UInt64: Int] = [:]
        var anchor: UInt64?
        for info in history.reversed() {
            let kind = info.metadata[EpochMetadataKey.kind].flatMap(RestorationEpochKind.init(rawValue:))
            let restoring = info.metadata[EpochMetadataKey.restoringEpoch].flatMap(UInt64.init)
            if kind == .restorationBegan, let restoring {
                failures[restoring, default: 0] += 1
                continue
            }
            if kind == .restorationCompleted, let restoring {
                anchor = restoring
            } else if kind == nil || kind?.changesState == true {
                anchor = info.epoch
            } else {
                continue
            }
            break
        }
        let stateEpochs = history.filter { info in
            let kind = info.metadata[EpochMetadataKey.kind].flatMap(RestorationEpochKind.init(rawValue:))
            return kind == nil || kind?.changesState == true
        }.map(\.epoch)
        var candidate = anchor
        var avoided: UInt64?
        while let current = candidate, failures[current, default: 0] >= failureLimit {
            avoided = avoided ?? current
            candidate = stateEpochs.last { $0 < current }
        }
        if let avoided { return (candidate, .crashLoopFallback(avoidedEpoch: avoided)) }
        return (candidate, recoveredAfterCrash ? .recoveryAfterCrash : .launch)
    }
}
