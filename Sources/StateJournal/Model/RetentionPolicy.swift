/// What history survives compaction.
///
/// Compaction writes a checkpoint of the state as of the latest epoch, so that a restore reads it
/// and replays only what came after; retention then decides what older history to delete. Every
/// retained checkpoint keeps the segments after it, so replay can reach every epoch from the oldest
/// retained checkpoint on. A generation (a checkpoint and the segments up to the next one) is kept
/// when any rule keeps it; the current one is always kept.
///
/// ``allHistory`` deletes no segment at all: compaction still bounds what a restore replays, and
/// every epoch since the first stays readable.
public struct RetentionPolicy: Sendable, Hashable {
    /// How many checkpoints to keep, the current one included, with their segments. At least 1.
    ///
    /// With ``keepsAllHistory``, how many checkpoints to keep as starting points for replay (the
    /// segments are all kept anyway).
    public var checkpoints: Int
    /// Whether every segment is kept, from the store's first epoch on, whatever the other rules say.
    ///
    /// Compaction then writes checkpoints and deletes only the checkpoints beyond ``checkpoints``,
    /// which replay no longer needs: an epoch older than the oldest checkpoint is replayed from the
    /// first segment. The store grows by what every epoch writes, as a store whose compaction is
    /// off does, plus the retained checkpoints.
    public var keepsAllHistory: Bool = false
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

    /// Keeps every epoch since the store's first, and the two newest checkpoints to restore from.
    ///
    /// For an app that wants its whole history (to inspect, diff or rewind to any epoch) and
    /// restores that stay as fast as after a compaction: automatic compaction keeps writing
    /// checkpoints, and nothing it does deletes a segment.
    public static var allHistory: RetentionPolicy {
        var policy = RetentionPolicy(checkpoints: 2)
        policy.keepsAllHistory = true
        return policy
    }
}
