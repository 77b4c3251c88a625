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

/// One change an epoch made.
public enum JournalChange: Sendable, Hashable {
    /// The path now holds these state bytes.
    case put(RestorationPath, [UInt8])
    /// The path is gone (a tombstone).
    case remove(RestorationPath)
    /// Every path is gone.
    case removeAll
}

extension JournalChange {
    /// Checks the change against ``JournalLimits`` as ``EpochWriter`` does when it is written, so
    /// that a change gathered now and committed later fails here rather than in the commit.
    ///
    /// - Throws: ``JournalError/Code/invalidPath`` for a path without components, or
    ///   ``JournalError/Code/limitExceeded`` when the path or the state exceeds ``JournalLimits``.
    public func validate() throws {
        switch self {
        case .put(let path, let state): try EpochWriter.validate(path, state: state)
        case .remove(let path): try EpochWriter.validate(path)
        case .removeAll: break
        }
    }
}
