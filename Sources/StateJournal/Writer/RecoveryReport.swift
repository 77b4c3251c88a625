/// What opening a store for writing found and repaired.
public struct RecoveryReport: Sendable, Hashable {
    /// Damage before the end of the journal, if any. The part from the damage on was set aside in
    /// ``quarantinedFiles`` and the journal continues from the last consistent epoch.
    public var damage: DamageReport?
    /// Bytes after the last commit that were cut off the segment the journal continues: an epoch a
    /// crash interrupted, garbage, or the part of an ``unsyncedTail`` in that segment.
    public var truncatedTailBytes: Int64
    /// Unsynced bytes a power cut left only partly on the disk, which were cut off: not damage.
    /// Every epoch that was durable is kept; the epochs dropped had never been synced, and their
    /// numbers are used again by the next epochs. `nil` when there was none.
    public var unsyncedTail: UnsyncedTail?
    /// Files no manifest named (leftovers of a crash during a change of files), removed.
    public var removedLeftovers: [String]
    /// Damaged bytes and files moved aside for inspection, relative to the store directory.
    public var quarantinedFiles: [String]
    /// Checkpoints that could not be read, so that replay fell back to an older checkpoint.
    public var damagedCheckpoints: [DamageReport] = []

    /// Creates a report.
    public init(
        damage: DamageReport? = nil, truncatedTailBytes: Int64 = 0, removedLeftovers: [String] = [],
        quarantinedFiles: [String] = []
    ) {
        self.damage = damage
        self.truncatedTailBytes = truncatedTailBytes
        self.removedLeftovers = removedLeftovers
        self.quarantinedFiles = quarantinedFiles
    }

    /// Whether opening found everything intact and had nothing to repair.
    public var isClean: Bool {
        damage == nil && truncatedTailBytes == 0 && unsyncedTail == nil && removedLeftovers.isEmpty
            && quarantinedFiles.isEmpty
            && damagedCheckpoints.isEmpty
    }
}
