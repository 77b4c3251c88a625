import Foundation
import StateJournal

/// Measures the journal's bytes on disk against what the reference `lz4 -1` makes of the same
/// entries written one after another into one file: the size a plain compressed log would take.
public enum CompressionComparison {
    /// One measured scenario.
    public struct Result: Sendable, Codable {
        /// What was written.
        public var scenario: String
        /// Entries written in all.
        public var entries: Int
        /// The entries' state bytes, uncompressed.
        public var rawStateBytes: Int
        /// The store's files (segments and manifest) after writing.
        public var journalBytes: Int
        /// `lz4 -1` of the concatenated state bytes.
        public var lz4Bytes: Int
        /// `lz4 -1` of the concatenated entries, each its path as text, a NUL byte, and its state.
        public var lz4EntryBytes: Int
        /// The epochs the store retains after writing: every pass, or the comparison would not be
        /// of the same history.
        public var epochsRetained: Int
        /// `journalBytes / lz4EntryBytes`.
        public var ratioToLZ4Entries: Double { Double(journalBytes) / Double(max(lz4EntryBytes, 1)) }
        /// `journalBytes / lz4Bytes`: at most 1 means the journal is no larger.
        public var ratioToLZ4: Double { Double(journalBytes) / Double(max(lz4Bytes, 1)) }
    }

    /// The scenarios: a first full pass over `objects` objects, then `passes` passes changing
    /// `changed` objects each (or always the same object, for `hotObject`).
    public struct Scenario: Sendable {
        /// The scenario in words, as the report names it.
        public var name: String
        /// Objects in the state, all written by the first pass.
        public var objects: Int
        /// Passes after the first.
        public var passes: Int
        /// Objects each pass changes.
        public var changed: Int
        /// Whether every pass changes the same object rather than objects chosen at random.
        public var hotObject: Bool

        /// Creates a scenario of `passes` passes changing `changed` of `objects` objects each.
        public init(name: String, objects: Int, passes: Int, changed: Int, hotObject: Bool = false) {
            self.name = name
            self.objects = objects
            self.passes = passes
            self.changed = changed
            self.hotObject = hotObject
        }
    }

    /// The scenarios the Performance article reports.
    public static let standardScenarios: [Scenario] = [
        Scenario(name: "10,000 objects, 1,000 passes, 1 changed", objects: 10_000, passes: 1_000, changed: 1),
        Scenario(name: "10,000 objects, 1,000 passes, 1% changed", objects: 10_000, passes: 1_000, changed: 100),
        Scenario(name: "1,000 objects, 1,000 passes, all changed", objects: 1_000, passes: 1_000, changed: 1_000),
        Scenario(name: "1 object saved 1,000 times", objects: 1, passes: 1_000, changed: 1, hotObject: true),
    ]

    /// Runs one scenario in a temporary directory, using the `lz4` tool found on `PATH`.
    public static func measure(_ scenario: Scenario) throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "statejournal-compression-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store")
        let rawFile = directory.appendingPathComponent("states.raw")
        let entryFile = directory.appendingPathComponent("entries.raw")
        _ = FileManager.default.createFile(atPath: rawFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: entryFile.path, contents: nil)
        let raw = try FileHandle(forWritingTo: rawFile)
        let rawEntries = try FileHandle(forWritingTo: entryFile)
        defer {
            try? raw.close()
            try? rawEntries.close()
        }

        var workload = AppStateWorkload(objectCount: scenario.objects)
        // Automatic compaction off: the bytes compared are the whole history, not what a compaction that
        // happened to finish during the run left.
        let journal = try Journal.open(
            at: store, options: JournalOptions(durability: .none, compaction: .manual))
        var entries = 0
        var rawBytes = 0
        var pending: [UInt8] = []
        var pendingEntries: [UInt8] = []
        func write(_ indices: [Int]) throws {
            let epoch = try journal.beginEpoch()
            for index in indices {
                let state = workload.state(index)
                try epoch.put(workload.path(index), state)
                pending.append(contentsOf: state)
                pendingEntries.append(contentsOf: Array(workload.path(index).description.utf8) + [0] + state)
                entries += 1
                rawBytes += state.count
            }
            _ = try epoch.commit(metadata: [
                "bundleVersion": "1.0 (42)", "idiom": "desktop", "systemVersion": "Debian 12",
            ])
            if pending.count > 1 << 20 {
                raw.write(Data(pending))
                rawEntries.write(Data(pendingEntries))
                pending.removeAll(keepingCapacity: true)
                pendingEntries.removeAll(keepingCapacity: true)
            }
        }
        try write(Array(0..<scenario.objects))
        for _ in 0..<scenario.passes {
            let changed = scenario.hotObject ? workload.touch(0) : workload.change(scenario.changed)
            try write(changed)
        }
        raw.write(Data(pending))
        rawEntries.write(Data(pendingEntries))
        try journal.close()
        let epochsRetained = try JournalReader(at: store).history().count

        let journalBytes = try FileManager.default.contentsOfDirectory(atPath: store.path)
            .filter { $0 != "LOCK" }
            .reduce(0) { total, name in
                total
                    + ((try? FileManager.default.attributesOfItem(atPath: store.appendingPathComponent(name).path)[
                        .size] as? Int) ?? 0)
            }
        return Result(
            scenario: scenario.name, entries: entries, rawStateBytes: rawBytes, journalBytes: journalBytes,
            lz4Bytes: try lz4Size(of: rawFile), lz4EntryBytes: try lz4Size(of: entryFile),
            epochsRetained: epochsRetained)
    }

    /// The size of `lz4 -1` applied to a file.
    static func lz4Size(of file: URL) throws -> Int {
        let output = file.appendingPathExtension("lz4")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["lz4", "-1", "-q", "-f", file.path, output.path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw JournalError(
                .ioFailure, "The lz4 tool failed or is missing; install Debian's lz4 package (bash .ci/deps).")
        }
        return (try FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0
    }
}
