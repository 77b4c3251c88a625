/// One call that changes or syncs a file or a directory entry, as ``FaultInjectingFileSystem``
/// records it, or a mark a test put between calls.
package struct IOCallRecord: Sendable, Hashable, CustomStringConvertible {
    package enum Operation: Sendable, Hashable {
        /// A file was created (by an open that found no file).
        case create
        /// A file's content or length changed (write or truncate).
        case write
        /// `fsync` or `fdatasync` of a file or a directory.
        case sync
        case rename
        /// An unlink.
        case remove
        case makeDirectory
        /// A point the test marked, such as a commit returning.
        case mark(String)
    }

    package var operation: Operation
    package var path: String
    /// The new name, for a rename.
    package var destination: String?

    package init(_ operation: Operation, path: String, destination: String? = nil) {
        self.operation = operation
        self.path = path
        self.destination = destination
    }

    package var description: String {
        switch operation {
        case .mark(let label): "-- \(label)"
        case .rename: "rename \(path) -> \(destination ?? "?")"
        default: "\(operation) \(path)"
        }
    }
}

/// Checks a record of calls against the rules a crash-consistent store follows on Linux file
/// systems (the rules ALICE states):
///
/// 1. A file's content is synced before the file is renamed: otherwise a power cut can leave the
///    new name on an empty or partial file.
/// 2. Creating a file or a directory, and a rename, change the directory that holds the name. At
///    every point the test marks as acknowledged, each such change is followed by a sync of that
///    directory: otherwise a power cut can lose the name, and with it what the promise covers.
///
/// Unlinks are not required to be durable: a file that comes back after a power cut is a leftover
/// the store removes on its next open, never a name it relies on.
package enum DirectorySyncAudit {
    /// What breaks the rules, one sentence each; empty when the record follows them.
    ///
    /// - Parameter acknowledged: whether a mark is a point where the rules must hold (by default, every mark).
    package static func violations(
        in records: [IOCallRecord], acknowledged: (String) -> Bool = { _ in true }
    ) -> [String] {
        var unsyncedEntries: [String: [String]] = [:]
        var unsyncedFiles: Set<String> = []
        var violations: [String] = []
        for record in records {
            switch record.operation {
            case .create:
                unsyncedEntries[parent(of: record.path), default: []].append("created \(record.path)")
            case .makeDirectory:
                unsyncedEntries[parent(of: record.path), default: []].append("made directory \(record.path)")
            case .write:
                unsyncedFiles.insert(record.path)
            case .sync:
                unsyncedEntries[record.path] = nil
                unsyncedFiles.remove(record.path)
            case .rename:
                let destination = record.destination ?? ""
                if unsyncedFiles.contains(record.path) {
                    violations.append("\(record.path) was renamed to \(destination) before its content was synced")
                }
                unsyncedFiles.remove(record.path)
                unsyncedEntries[parent(of: destination), default: []].append("renamed \(record.path) to \(destination)")
            case .remove:
                unsyncedFiles.remove(record.path)
            case .mark(let label):
                guard acknowledged(label) else { continue }
                for (directory, changes) in unsyncedEntries.sorted(by: { $0.key < $1.key }) {
                    violations.append("\(label): \(directory) was not synced after: \(changes.joined(separator: ", "))")
                }
            }
        }
        return violations
    }

    /// The directory that holds `path`'s entry.
    package static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
