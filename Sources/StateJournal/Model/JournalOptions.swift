import Foundation
import Logging
import Metrics

/// When committed epochs are forced to stable storage.
///
/// Under every policy, an epoch whose commit has returned has been handed to the operating system,
/// so killing the process loses nothing that was acknowledged. The policies differ in what a power
/// cut or kernel crash can cost. Files that give the store its structure (the manifest, checkpoints,
/// new segments and their directory entries) are synced whatever the policy.
public enum Durability: Sendable, Hashable, CustomStringConvertible {
    /// `fdatasync` before ``EpochWriter/commit(metadata:)`` returns. Concurrent commits share one sync
    /// (group commit). A power cut loses nothing acknowledged.
    case everyCommit
    /// A background sync about every `seconds`. A power cut loses at most that interval.
    case interval(seconds: Double)
    /// Syncing is left to the operating system.
    case none

    /// The default: a background sync about once a second.
    public static let `default` = Durability.interval(seconds: 1)

    /// The policy as written in options and logs: `everyCommit`, `interval(1.0s)` or `none`.
    public var description: String {
        switch self {
        case .everyCommit: "everyCommit"
        case .interval(let seconds): "interval(\(seconds)s)"
        case .none: "none"
        }
    }
}

/// What reading does when it meets damage before the end of the journal.
public enum RecoveryMode: Sendable, Hashable {
    /// Stop at the last consistent epoch before the damage and report it in a ``DamageReport``.
    case stopAtDamage
    /// Throw ``JournalError/Code/damaged`` naming the file and offset.
    case strict
}

/// How a ``Journal`` is opened.
public struct JournalOptions: Sendable {
    /// When commits reach stable storage. Defaults to ``Durability/default``.
    public var durability: Durability
    /// What to do about damage before the end of the journal. Defaults to ``RecoveryMode/stopAtDamage``.
    public var recovery: RecoveryMode
    /// The size at which the current segment is sealed and a new one started. Defaults to 64 MiB.
    public var segmentSizeLimit: Int
    /// How much memory the writer's copy of the latest state may take, kept to compress new
    /// versions against the previous ones. Each cached state counts its bytes with its allocations
    /// and its path's (about 180 bytes over the state's own for a short path), so the bound holds
    /// for the process's memory. Defaults to 64 MiB; `0` disables it.
    public var compressionCacheLimit: Int
    /// What history survives compaction. Defaults to two checkpoints.
    public var retention: RetentionPolicy = RetentionPolicy()
    /// When compaction, or a checkpoint alone, runs by itself. Defaults to automatic compaction.
    public var compaction: CompactionPolicy = CompactionPolicy()
    /// Where the journal logs what recovery repaired (notice, warning), compactions (info), and a
    /// failed background compaction or a store that refuses commits (error).
    ///
    /// Defaults to a logger that discards everything, so nothing is printed unless the app passes
    /// its own. The journal adds the store directory to the metadata as `statejournal_store`.
    public var logger: Logger = .silent
    /// The factory metrics are created with; `nil` (the default) means the global `MetricsSystem`.
    /// Tests pass their own to read what one journal reported.
    package var metricsFactory: (any MetricsFactory)?
    /// The clock commits are stamped with. Tests set a fixed one to write reproducible bytes.
    package var clock: @Sendable () -> Date = { Date() }
    /// The identifier a new store gets. Tests set a fixed one to write reproducible bytes.
    package var newStoreID: (@Sendable () -> [UInt8])?

    /// Creates options; every parameter has a default.
    ///
    /// - Parameters:
    ///   - durability: When commits reach stable storage.
    ///   - recovery: What to do about damage before the end of the journal.
    ///   - segmentSizeLimit: The size at which a segment is sealed.
    ///   - compressionCacheLimit: The memory the latest state kept to compress new versions against
    ///     may take.
    ///   - retention: What history survives compaction.
    ///   - compaction: When compaction, or a checkpoint alone, runs by itself.
    ///   - logger: Where the journal logs; by default nothing is logged.
    public init(
        durability: Durability = .default,
        recovery: RecoveryMode = .stopAtDamage,
        segmentSizeLimit: Int = 64 << 20,
        compressionCacheLimit: Int = 64 << 20,
        retention: RetentionPolicy = RetentionPolicy(),
        compaction: CompactionPolicy = CompactionPolicy(),
        logger: Logger = Logger(label: "StateJournal", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.logger = logger
        self.retention = retention
        self.compaction = compaction
        self.durability = durability
        self.recovery = recovery
        self.segmentSizeLimit = segmentSizeLimit
        self.compressionCacheLimit = compressionCacheLimit
    }
}
