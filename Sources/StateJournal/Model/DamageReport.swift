/// Where reading met damage, and what it cost.
///
/// Reading in ``RecoveryMode/stopAtDamage`` mode returns the state of the last consistent epoch
/// before the damage together with this report.
public struct DamageReport: Sendable, Hashable, CustomStringConvertible {
    /// The damaged file, relative to the store directory.
    public var file: String
    /// The byte offset in ``file`` where the damage starts.
    public var offset: Int64
    /// What was wrong there.
    public var reason: String
    /// Bytes of the store from the damage on that replay could not use.
    public var bytesDropped: Int64
    /// The last consistent epoch before the damage, or `nil` when none precedes it.
    public var lastConsistentEpoch: UInt64?
    /// Commit records found intact beyond the damage: epochs that were committed but cannot be
    /// replayed, because an epoch before them is lost.
    public var epochsLost: Int

    /// Creates a report.
    public init(
        file: String, offset: Int64, reason: String, bytesDropped: Int64, lastConsistentEpoch: UInt64?,
        epochsLost: Int
    ) {
        self.file = file
        self.offset = offset
        self.reason = reason
        self.bytesDropped = bytesDropped
        self.lastConsistentEpoch = lastConsistentEpoch
        self.epochsLost = epochsLost
    }

    /// The report in a sentence: where, what, what it cost, and where replay stops.
    public var description: String {
        "damage in \(file) at offset \(offset): \(reason); \(bytesDropped) bytes and \(epochsLost) "
            + "committed epochs after it dropped; replay stops at epoch "
            + (lastConsistentEpoch.map(String.init) ?? "none")
    }
}
