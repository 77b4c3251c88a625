/// The end of a journal that a power cut left only partly on the disk, which recovery dropped:
/// bytes written after the last sync, of which some reached the disk and some did not.
///
/// Under ``Durability/interval(seconds:)`` and ``Durability/none`` the operating system writes
/// unsynced bytes back in its own order, a page at a time, so after a power cut a later part of the
/// journal can be on the disk while an earlier part is not. This is not damage: nothing in it had
/// been synced, which is what those policies allow a power cut to take. Recovery keeps the journal
/// up to the last consistent epoch before the gap, which holds every epoch that was durable; a
/// writer opening the store cuts the rest off and goes on with the next epoch number.
///
/// Bad bytes that an intact commit record after them shows were synced are damage instead, and
/// reported as a ``DamageReport``.
public struct UnsyncedTail: Sendable, Hashable, CustomStringConvertible {
    /// The segment where the first record that did not reach the disk whole starts, relative to
    /// the store directory.
    public var file: String
    /// The offset of that record in ``file``.
    public var offset: Int64
    /// What was wrong with the record there.
    public var reason: String
    /// Bytes dropped from the last consistent commit on, counting every later segment dropped.
    public var bytesDropped: Int64
    /// Commit records found intact beyond the gap: epochs that were committed but never synced,
    /// and that cannot be replayed without the epochs before them.
    public var epochsDropped: Int
    /// The last epoch kept, or `nil` when none precedes the gap.
    public var lastConsistentEpoch: UInt64?

    /// Creates a report.
    public init(
        file: String, offset: Int64, reason: String, bytesDropped: Int64, epochsDropped: Int,
        lastConsistentEpoch: UInt64?
    ) {
        self.file = file
        self.offset = offset
        self.reason = reason
        self.bytesDropped = bytesDropped
        self.epochsDropped = epochsDropped
        self.lastConsistentEpoch = lastConsistentEpoch
    }

    /// The report in a sentence.
    public var description: String {
        "unsynced tail from \(file) at offset \(offset) (\(reason)): \(bytesDropped) bytes and \(epochsDropped) "
            + "unsynced committed epochs after it dropped; the journal ends at epoch "
            + (lastConsistentEpoch.map(String.init) ?? "none")
    }
}
