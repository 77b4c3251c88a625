/// The sizes a valid store never exceeds. Writing beyond them throws
/// ``JournalError/Code/limitExceeded``; reading a length beyond them is treated as damage, so a
/// corrupt length can never make the reader allocate more than these bounds.
public enum JournalLimits {
    /// The largest state one entry can hold: 16 MiB.
    public static let maximumStateSize = 16 << 20
    /// The most components a restoration path can have.
    public static let maximumPathDepth = 64
    /// The longest path component, in UTF-8 bytes.
    public static let maximumComponentLength = 1024
    /// The most metadata items one epoch can carry.
    public static let maximumMetadataCount = 256
    /// The longest metadata key or value, in UTF-8 bytes.
    public static let maximumMetadataItemLength = 16 << 10
    /// The largest record in a segment, header excluded: one batch of entries or one commit.
    public static let maximumRecordLength = 24 << 20
    /// The most entries a single batch record can list.
    public static let maximumBatchEntries = 1 << 16
    /// The largest epoch number, file sequence number or manifest generation read from disk. A
    /// writer would need centuries to get there; a damaged file could claim `UInt64.max` and make
    /// the next number overflow.
    static let maximumCounter: UInt64 = 1 << 62
}
