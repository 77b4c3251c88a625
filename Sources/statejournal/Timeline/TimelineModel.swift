import Foundation

/// What `statejournal timeline` embeds in its page, as JSON: the epochs as columns, the tree of
/// restoration paths with each path's changes, the launches with their restoration reports, the
/// markers and the compactions. The states themselves are in ``VersionArchive``'s chunks, which
/// the page decodes only when one is clicked.
///
/// Field names are short because the arrays are long; the page's script is their only reader.
struct TimelineModel: Codable {
    /// The model's format, for the page's script.
    var version = 1
    /// The store directory, as given.
    var store: String
    /// When the page was written, RFC 3339.
    var generated: String
    /// The names of the epoch kinds, indexed by ``Epochs/kind``.
    var kinds: [String] = EpochKind.allCases.map(\.rawValue)
    var epochs: Epochs
    var paths: Paths
    var launches: [Launch]
    var markers: [Marker]
    var compactions: [Compaction]
    var files: FilesSummary
    var archive: ArchiveSummary

    /// One column per field, one row per retained epoch, oldest first.
    struct Epochs: Codable {
        /// Epoch numbers.
        var n: [UInt64] = []
        /// Commit times, milliseconds since 1970 UTC.
        var t: [Int64] = []
        /// Bytes on disk.
        var b: [Int] = []
        /// Entry counts.
        var c: [Int] = []
        /// Kinds, indexes into ``TimelineModel/kinds``.
        var k: [Int] = []
        /// Metadata, indexes into ``metadata``.
        var m: [Int] = []
        /// The distinct metadata dictionaries.
        var metadata: [[String: String]] = []
    }

    /// The tree of every path any retained epoch wrote, in pre-order (a parent before its
    /// descendants, as paths sort), so that a subtree is the range of nodes `i..<end[i]`.
    struct Paths: Codable {
        /// Each node's last component.
        var name: [String] = []
        /// Each node's depth, 0 for a root component.
        var depth: [Int] = []
        /// The end of each node's subtree (exclusive).
        var end: [Int] = []
        /// Where each node's events start in ``events`` (one more element than nodes).
        var start: [Int] = [0]
        /// Events, per node in epoch order: the epoch's row times 2, plus 1 for a removal.
        var events: [Int] = []
        /// The index in the version archive of each node's first written state (versions of a node
        /// are consecutive, in the order of its non-removal events).
        var firstVersion: [Int] = []
    }

    /// One restoration: from its `restorationBegan` marker to its `restorationCompleted` one.
    struct Launch: Codable {
        /// The row of the `restorationBegan` epoch.
        var began: Int
        /// The row of the `restorationCompleted` epoch, or `nil` when it never completed.
        var completed: Int?
        /// The epoch whose state it restored.
        var restoring: UInt64?
        /// Unfinished earlier attempts of the same state, as the marker says.
        var unfinishedAttempts: Int?
        /// The report, or `nil` when the marker predates the recorded report (or there is none).
        var report: Report?
        /// The scene (window) restored, as its markers name it; `nil` for the default scene.
        var scene: String? = nil
    }

    /// A restoration report as the marker recorded it.
    struct Report: Codable {
        var epoch: UInt64?
        var reason: String?
        var restoredCount: Int
        var skippedCount: Int
        var diagnosticCount: Int
        /// `[path, type, source, decoded, migrated]`.
        var restored: [[String]]
        /// `[path, type, reason, detail]`.
        var skipped: [[String]]
        /// `[code, path, text]`.
        var diagnostics: [[String]]
        /// Set when the record could not be read.
        var error: String?
    }

    /// Something to flag on the time axis.
    struct Marker: Codable {
        /// `crashLoopFallback`, `recovered`, `unfinished`, `rewound`, `termBegan`, `unsyncedTail`,
        /// `uncommittedTail` or `damage`.
        var type: String
        /// The row it belongs to (the last row for the store's tail).
        var row: Int
        /// What it means, in a sentence.
        var text: String
    }

    /// One retained checkpoint.
    struct Compaction: Codable {
        var epoch: UInt64
        /// The row of its epoch, when retained.
        var row: Int?
        var file: String
        var bytes: Int64
        /// When it was written, milliseconds since 1970 UTC.
        var written: Int64?
    }

    struct FilesSummary: Codable {
        var totalBytes: Int64
        var segments: Int
        var segmentBytes: Int64
        var checkpointBytes: Int64
        var generation: UInt64
        var liveObjects: Int
    }

    struct ArchiveSummary: Codable {
        /// Versions in the archive (a version is one state one epoch wrote at one path).
        var versions: Int
        /// Versions whose text was left out to bound the page's size.
        var omitted: Int
        /// The index of the first version in each chunk, and the total as the last element.
        var chunkStarts: [Int]
        /// The uncompressed size of every chunk together.
        var rawBytes: Int
    }
}

/// What an epoch is, as the timeline colours it.
enum EpochKind: String, CaseIterable {
    /// A preservation pass.
    case pass
    /// An epoch without a `kind`: written by the engine directly.
    case commit
    /// The oldest retained epoch, read from a checkpoint.
    case checkpoint
    case restorationBegan
    case restorationCompleted
    /// The app discarded its state.
    case discard
    /// The first epoch of a store `statejournal rewind` wrote.
    case rewind
    /// The marker of a replication term's start on a promoted store.
    case term
}
