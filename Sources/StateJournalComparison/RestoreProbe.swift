import Foundation
import StateJournal

/// Measures the peak memory of one restore in a child process of its own, so that what the
/// benchmark itself holds does not count.
///
/// The child notes its resident set size (`VmRSS` in `/proc/self/status`) before restoring,
/// restores, and reads its peak resident set size (`VmHWM`, the high-water mark of its own address
/// space) while the restored state is still alive. (`getrusage`'s `ru_maxrss` would not do: Linux
/// carries it over from the parent through `fork` and `exec`.) The figure is the growth of the peak
/// over the resident size before: the memory that restoring took at its worst moment, decoded state
/// included.
public enum RestoreProbe {
    /// What to restore.
    public struct Target: Sendable, Codable {
        /// What kind of store `path` is.
        public var kind: Kind
        /// The path of the store: a journal's directory, or a snapshot's or SQLite database's file.
        public var path: String
    }

    /// The kinds of stores a child can restore.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case journal
        case jsonSnapshot = "json"
        case propertyListSnapshot = "plist"
        case sqlite
    }

    /// What a child measured.
    public struct Measurement: Sendable, Codable {
        /// Objects the child restored.
        public var objects: Int
        /// The child's resident set size before restoring (`VmRSS`), in bytes.
        public var residentBeforeBytes: Int
        /// The child's peak resident set size after restoring (`VmHWM`), in bytes.
        public var peakResidentBytes: Int
        /// How far restoring raised the peak over the resident size before, in bytes: the memory
        /// the restore took at its worst moment.
        public var peakGrowthBytes: Int { max(0, peakResidentBytes - residentBeforeBytes) }
    }

    /// In the child: restores `path` as `kind` and returns the measurement as one line of JSON.
    public static func runChild(kind: Kind, path: String) throws -> String {
        let before = statusField("VmRSS:")
        let objects: Int
        switch kind {
        case .journal:
            let state = try JournalReader(at: URL(fileURLWithPath: path)).state()
            objects = state.visitEveryEntry()
            withExtendedLifetime(state) {}
        case .jsonSnapshot, .propertyListSnapshot:
            let records = try SnapshotContender.load(
                kind == .jsonSnapshot ? .json : .propertyList, from: URL(fileURLWithPath: path))
            objects = records.count
            withExtendedLifetime(records) {}
        case .sqlite:
            let store = try SQLiteStore(path: path, synchronous: .normal)
            let rows = try store.readAll()
            objects = rows.count
            withExtendedLifetime(rows) {}
            store.close()
        }
        let measurement = Measurement(
            objects: objects, residentBeforeBytes: before, peakResidentBytes: statusField("VmHWM:"))
        return String(decoding: try JSONEncoder().encode(measurement), as: UTF8.self)
    }

    /// In the parent: runs `command` (the tool's own executable and the arguments that make it a
    /// probe child) for `target`, and returns the child's measurement.
    static func measure(_ target: Target, command: [String]) throws -> Measurement {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst()) + [target.kind.rawValue, target.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw JournalError(
                .ioFailure, "The restore probe for \(target.path) exited with status \(process.terminationStatus).")
        }
        return try JSONDecoder().decode(Measurement.self, from: data)
    }

    /// A memory field of `/proc/self/status`, in bytes.
    static func statusField(_ name: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name) }),
            let kilobytes = Int(
                line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}
