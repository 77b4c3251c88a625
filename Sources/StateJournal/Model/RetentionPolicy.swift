/// What history survives compaction.
///
/// Compaction writes a checkpoint of the state as of the latest epoch. Every retained checkpoint
/// keeps the segments after it, so replay can reach every epoch from the oldest retained
/// checkpoint on. A generation (a checkpoint and the segments up to the next one) is kept when any
/// rule keeps it; the current one is always kept.
public struct RetentionPolicy: Sendable, Hashable {
    /// How many checkpoints to keep, the current one included, with their segments. At least 1.
    public var checkpoints: Int
    /// Also keep every epoch younger than this many seconds, or `nil`.
    public var maximumAge: Double?
    /// Drop the oldest generations while the store's files exceed this many bytes, or `nil`. The
    /// current checkpoint and the segments after it are never dropped.
    public var byteBudget: Int64?

    /// Creates a policy. The default keeps two checkpoints: the current one, and the previous one to
    /// fall back to if the current one is ever damaged.
    public init(checkpoints: Int = 2, maximumAge: Double? = nil, byteBudget: Int64? = nil) {
        self.checkpoints = max(1, checkpoints)
        self.maximumAge = maximumAge
        self.byteBudget = byteBudget
    }
}

/// When compaction runs by itself.
///
/// Like Redis's `auto-aof-rewrite-percentage` and `auto-aof-rewrite-min-size`: after a commit, when
/// the journal written since the current checkpoint is larger than both ``minimumJournalBytes`` and
/// ``growthRatio`` times the checkpoint, a compaction starts in the background.
public struct CompactionPolicy: Sendable, Hashable {
    /// Whether compaction starts by itself after commits.
    public var isAutomatic: Bool
    /// The journal since the checkpoint, as a multiple of the checkpoint's size, that triggers it.
    public var growthRatio: Double
    /// The journal since the checkpoint, in bytes, below which it never triggers.
    ///
    /// What a restore replays is at most about this or the checkpoint's size, whichever is larger,
    /// plus what is written while a compaction runs: replaying the journal costs more per byte than
    /// reading a checkpoint, because its entries are compressed against their previous versions.
    public var minimumJournalBytes: Int64

    /// Creates a policy; by default automatic, at a ratio of 1 and at least 1 MiB.
    public init(isAutomatic: Bool = true, growthRatio: Double = 1, minimumJournalBytes: Int64 = 1 << 20) {
        self.isAutomatic = isAutomatic
        self.growthRatio = growthRatio
        self.minimumJournalBytes = minimumJournalBytes
    }
}
