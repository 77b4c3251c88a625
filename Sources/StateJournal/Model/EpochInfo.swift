import Foundation

/// One committed epoch as the history lists it.
public struct EpochInfo: Sendable, Hashable {
    /// The epoch number. Numbers only grow, across reopenings too.
    public var epoch: UInt64
    /// When the epoch was committed, to the millisecond.
    public var timestamp: Date
    /// The string-keyed metadata the commit carried.
    public var metadata: [String: String]
    /// How many entries (puts, removes and clears) the epoch wrote.
    public var entryCount: Int
    /// The bytes its records take in the segment, framing included.
    public var bytes: Int

    /// Creates an epoch description.
    public init(epoch: UInt64, timestamp: Date, metadata: [String: String], entryCount: Int, bytes: Int) {
        self.epoch = epoch
        self.timestamp = timestamp
        self.metadata = metadata
        self.entryCount = entryCount
        self.bytes = bytes
    }
}

/// The state of a store as of one epoch: every live path with its latest state.
public struct JournalState: Sendable {
    /// The epoch the state is as of, or `nil` when no epoch was ever committed.
    public var epoch: EpochInfo?
    /// Every live path and its latest state bytes.
    public var entries: [RestorationPath: [UInt8]]
    /// Damage met on the way, or `nil` when everything read was intact.
    public var damage: DamageReport?
    /// Bytes after the last commit of the journal that belong to no committed epoch: an epoch being
    /// written, or one a crash cut short. They are not damage; a writer cuts them off when it opens.
    public var uncommittedTailBytes: Int64

    /// Creates a state.
    public init(
        epoch: EpochInfo?, entries: [RestorationPath: [UInt8]], damage: DamageReport? = nil,
        uncommittedTailBytes: Int64 = 0
    ) {
        self.epoch = epoch
        self.entries = entries
        self.damage = damage
        self.uncommittedTailBytes = uncommittedTailBytes
    }
}

/// One change an epoch made.
public enum JournalChange: Sendable, Hashable {
    /// The path now holds these state bytes.
    case put(RestorationPath, [UInt8])
    /// The path is gone (a tombstone).
    case remove(RestorationPath)
    /// Every path is gone.
    case removeAll
}
