/// When compaction, or a checkpoint alone, runs by itself.
///
/// Like Redis's `auto-aof-rewrite-percentage` and `auto-aof-rewrite-min-size`: after a commit, and
/// when a compaction ends, when the journal written since the current checkpoint is larger than both
/// ``minimumJournalBytes`` and ``growthRatio`` times the checkpoint, a compaction starts in the
/// background. It counts everything written after the segment the checkpoint was folded from,
/// including what was written while that checkpoint was folded; a journal closed past the threshold
/// starts one at the first commit after it is opened again.
///
/// Checkpoints and compaction are separate concerns. A checkpoint bounds what a restore replays: a
/// restore reads the newest checkpoint and replays only the journal after it, so its cost follows
/// the state's size rather than the history's length. Compaction writes a checkpoint and then lets
/// the ``RetentionPolicy`` delete older history. With automatic compaction off (``isAutomatic``
/// `false`), the journal still writes checkpoints at the same thresholds and deletes no segment, as
/// ``Journal/checkpoint()`` does, unless ``checkpointsAutomatically`` is off too (``manual``): then
/// nothing runs in the background, and a restore replays every epoch since the last checkpoint
/// written by hand.
public struct CompactionPolicy: Sendable, Hashable {
    /// Whether compaction starts by itself after commits: a checkpoint, then retention.
    public var isAutomatic: Bool
    /// Whether, while ``isAutomatic`` is off, checkpoints are still written by themselves, at the
    /// same thresholds, deleting no history (only checkpoints beyond ``RetentionPolicy/checkpoints``,
    /// which replay no longer needs). Ignored while ``isAutomatic`` is on, since compaction writes
    /// checkpoints itself.
    ///
    /// The store then grows by what every epoch writes plus the retained checkpoints, and a restore
    /// stays about as fast as after a compaction.
    public var checkpointsAutomatically: Bool
    /// The journal since the checkpoint, as a multiple of the checkpoint's size, that triggers it.
    public var growthRatio: Double
    /// The journal since the checkpoint, in bytes, below which it never triggers.
    ///
    /// What a restore replays is at most about this or the checkpoint's size, whichever is larger,
    /// or what was written while the previous compaction ran when that is more, plus what is
    /// written while the current one runs: commits never wait for a compaction to catch up.
    /// Replaying the journal costs more per byte than reading a checkpoint, because its entries are
    /// compressed against their previous versions.
    public var minimumJournalBytes: Int64

    /// Creates a policy; by default automatic, at a ratio of 1 and at least 1 MiB.
    ///
    /// - Parameters:
    ///   - isAutomatic: Whether compaction (a checkpoint, then retention) starts by itself.
    ///   - checkpointsAutomatically: Whether, with `isAutomatic` off, checkpoints that delete no
    ///     history are still written by themselves.
    ///   - growthRatio: The journal since the checkpoint, as a multiple of the checkpoint's size,
    ///     that triggers either.
    ///   - minimumJournalBytes: The journal since the checkpoint below which neither triggers.
    public init(
        isAutomatic: Bool = true, checkpointsAutomatically: Bool = true, growthRatio: Double = 1,
        minimumJournalBytes: Int64 = 1 << 20
    ) {
        self.isAutomatic = isAutomatic
        self.checkpointsAutomatically = checkpointsAutomatically
        self.growthRatio = growthRatio
        self.minimumJournalBytes = minimumJournalBytes
    }

    /// Nothing in the background: no compaction and no checkpoint until ``Journal/compact()`` or
    /// ``Journal/checkpoint()`` is called, so a restore replays every epoch since the last one.
    public static var manual: CompactionPolicy { CompactionPolicy(isAutomatic: false, checkpointsAutomatically: false) }

    /// Whether anything starts by itself: a compaction, or a checkpoint alone.
    var startsAnything: Bool { isAutomatic || checkpointsAutomatically }
}
