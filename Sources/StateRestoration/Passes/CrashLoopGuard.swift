import StateJournal

/// Chooses the epoch a launch restores: the state the app last ran with, unless restoring it began
/// and never completed ``failureLimit`` times in a row, in which case the state saved before it.
///
/// The history it reads is what the store retains, so compaction may have folded the epoch a
/// marker names into a checkpoint. The guard then reads the same state through a later epoch:
/// a marker changes no state, so the state through a marker that restored the latest state is the
/// state it names. Failures are counted per *named* epoch, so a crash loop is seen across any
/// compaction.
enum CrashLoopGuard {
    static let failureLimit = 2

    /// What to restore.
    struct Choice: Equatable {
        /// The epoch whose state is restored, as markers name it; nil when there is nothing to restore.
        var stateEpoch: UInt64?
        /// The retained epoch to read that state through (the same as `stateEpoch` unless compaction folded it).
        var readEpoch: UInt64?
        var reason: RestorationReason
        /// How many restorations of `stateEpoch` began in a row and never completed.
        var unfinishedAttempts = 0
        /// How many restorations of `stateEpoch` began in a row and never completed, exactly, for
        /// reports (``unfinishedAttempts`` may count more, which only matters above the limit).
        var reportedAttempts = 0
        /// How many restorations of the epoch a crash-loop fallback avoided began and never
        /// completed, exactly, for reports.
        var avoidedAttempts = 0
    }

    static func kind(of info: EpochInfo) -> RestorationEpochKind? {
        info.metadata[EpochMetadataKey.kind].flatMap(RestorationEpochKind.init(rawValue:))
    }

    /// Whether `info` is an epoch of `scene` (the default scene when `nil`): one of its passes or
    /// restoration markers, a discard that removed it, or a store's first epoch written by
    /// `rewind`, which holds every scene's state.
    static func concerns(_ info: EpochInfo, scene: SceneSession?) -> Bool {
        if info.metadata[StoreInspector.rewoundFromKey] != nil { return true }
        if kind(of: info) == .discard {
            guard let listed = info.metadata[EpochMetadataKey.discardedScenes] else { return true }
            guard let scene else { return false }
            return RestorationManager.decodeSceneList(listed)?.contains(scene.persistentIdentifier) ?? false
        }
        return info.metadata[EpochMetadataKey.scene] == scene?.persistentIdentifier
    }

    static func changesState(_ info: EpochInfo) -> Bool {
        let kind = kind(of: info)
        return kind == nil || kind?.changesState == true
    }

    /// - Parameters:
    ///   - history: The epochs that concern the state restored (one scene's, see ``concerns(_:scene:)``).
    ///   - recoveredAfterCrash: Whether opening the store cut or met something.
    ///   - retained: Every retained epoch, whichever scene it concerns; `history`'s by default.
    /// The unfinished restorations of a scene as its bookkeeping entry records them, so that
    /// compaction folding every marker of the scene does not forget them.
    struct RecordedAttempts: Equatable {
        /// The epoch the restorations restored, as their markers name it.
        var epoch: UInt64
        /// How many began in a row and never completed, the last one included.
        var attempts: Int
        /// Whether that epoch held the scene's latest state.
        var restoredLatest: Bool
    }

    static func choose(
        history: [EpochInfo], recoveredAfterCrash: Bool, retained: Set<UInt64>? = nil,
        recorded: RecordedAttempts? = nil, fallsBack: Bool = true
    ) -> Choice {
        let retained = retained ?? Set(history.map(\.epoch))
        var failures: [UInt64: Int] = [:]
        // For reports: the markers seen and the most attempts one of them accounts for.
        var exact: [UInt64: (markers: Int, attempts: Int)] = [:]

        func reported(_ epoch: UInt64?) -> Int { epoch.flatMap { exact[$0] }.map { max($0.markers, $0.attempts) } ?? 0 }
        var anchor: (state: UInt64, read: UInt64, exact: Bool)?
        var oldestBegan: (state: UInt64, marker: EpochInfo)?
        for info in history.reversed() {
            let restoring = info.metadata[EpochMetadataKey.restoringEpoch].flatMap(UInt64.init)
            switch kind(of: info) {
            case .restorationBegan?:
                if let restoring {
                    // With a crash note armed, a restoration that never completed failed only when a
                    // later marker says so (and that marker counts it): a process killed from outside
                    // left it unfinished, and that is not a crash. Without one (an earlier release),
                    // it failed.
                    let counts = info.metadata[EpochMetadataKey.restorationToken] == nil ? 1 : 0
                    // A marker also says how many attempts came before it, which compaction may have folded.
                    let before = info.metadata[EpochMetadataKey.unfinishedAttempts].flatMap(Int.init) ?? 0
                    failures[restoring] = max(failures[restoring, default: 0], before) + counts
                    let counted = exact[restoring, default: (0, 0)]
                    exact[restoring] = (counted.markers + counts, max(counted.attempts, before + counts))
                    oldestBegan = (restoring, info)
                }
                continue
            case .restorationHeld?, .restorationFailed?:
                // It also says how many attempts failed in a row with it, for when compaction folded
                // the `restorationBegan` marker it names.
                if let restoring {
                    let through = info.metadata[EpochMetadataKey.unfinishedAttempts].flatMap(Int.init) ?? 1
                    failures[restoring] = max(failures[restoring, default: 0], through)
                    let counted = exact[restoring, default: (0, 0)]
                    exact[restoring] = (counted.markers + 1, max(counted.attempts, through))
                    oldestBegan = (restoring, info)
                }
                continue
            case .restorationCompleted?:
                guard let restoring else { continue }
                anchor = resolve(restoring, marker: info, retained: retained)
            case let kind where kind == nil || kind?.changesState == true:
                anchor = (info.epoch, info.epoch, true)
            default:
                continue
            }
            break
        }
        // The bookkeeping entry counts the attempts whose markers compaction folded.
        if let recorded {
            failures[recorded.epoch] = max(failures[recorded.epoch, default: 0], recorded.attempts)
            let counted = exact[recorded.epoch, default: (0, 0)]
            exact[recorded.epoch] = (counted.markers, max(counted.attempts, recorded.attempts))
        }
        // Only markers are retained: the checkpoint folded everything before them.
        if anchor == nil, let (state, marker) = oldestBegan {
            anchor = resolve(state, marker: marker, retained: retained)
        }
        // Nothing of the scene is retained but its bookkeeping entry: read its state through any
        // retained epoch (they all hold it), the oldest.
        if anchor == nil, let recorded, let oldest = retained.min() {
            anchor =
                retained.contains(recorded.epoch)
                ? (recorded.epoch, recorded.epoch, true) : (recorded.epoch, oldest, recorded.restoredLatest)
        }
        guard let found = anchor else { return Choice(reason: recoveredAfterCrash ? .recoveryAfterCrash : .launch) }
        let stateEpochs = history.filter(changesState).map(\.epoch)
        var candidate: UInt64? = found.state
        var avoided: UInt64?
        while fallsBack, let current = candidate, failures[current, default: 0] >= failureLimit {
            avoided = avoided ?? current
            candidate = stateEpochs.last { $0 < current }
        }
        if let avoided {
            return Choice(
                stateEpoch: candidate, readEpoch: candidate, reason: .crashLoopFallback(avoidedEpoch: avoided),
                unfinishedAttempts: candidate.map { failures[$0, default: 0] } ?? 0,
                reportedAttempts: reported(candidate), avoidedAttempts: reported(avoided))
        }
        let reason: RestorationReason =
            found.exact
            ? (recoveredAfterCrash ? .recoveryAfterCrash : .launch)
            : .restoredEpochCompacted(found.state, readThrough: found.read)
        return Choice(
            stateEpoch: found.state, readEpoch: found.read, reason: reason,
            unfinishedAttempts: failures[found.state, default: 0], reportedAttempts: reported(found.state))
    }

    /// Where to read the state a marker names: the named epoch while it is retained, otherwise the
    /// marker's own epoch (exact when the marker says it restored the latest state).
    private static func resolve(_ state: UInt64, marker: EpochInfo, retained: Set<UInt64>)
        -> (state: UInt64, read: UInt64, exact: Bool)
    {
        if retained.contains(state) { return (state, state, true) }
        let restoredLatest = marker.metadata[EpochMetadataKey.restoredLatest] != "0"
        return (state, marker.epoch, restoredLatest)
    }
}
