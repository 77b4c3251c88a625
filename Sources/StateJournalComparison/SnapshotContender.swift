import Foundation

/// The whole snapshot: the app's whole model encoded with `JSONEncoder` or a binary
/// `PropertyListEncoder`, written to a temporary file, synced and renamed over the previous one,
/// and loaded back with the matching decoder.
final class SnapshotContender: PreservationContender {
    /// The snapshot's encoding.
    enum Format: String, Sendable {
        case json
        case propertyList = "plist"
    }

    let format: Format
    var name: String { "\(format.rawValue)-snapshot" }
    var rewritesWholeState: Bool { true }
    private var records: [ObjectRecord] = []
    private var file: URL?

    init(format: Format) {
        self.format = format
    }

    func start(in directory: URL, with workload: AppStateWorkload) throws {
        file = directory.appendingPathComponent("\(name).\(format.rawValue)")
        records = (0..<workload.objectCount).map(workload.record)
        try writeSnapshot()
    }

    func save(_ changed: [Int], of workload: AppStateWorkload) throws {
        skip(changed, of: workload)
        try writeSnapshot()
    }

    func skip(_ changed: [Int], of workload: AppStateWorkload) {
        for index in changed { records[index] = workload.record(index) }
    }

    func restore() throws -> Int {
        try Self.load(format, from: file!).count
    }

    var bytesOnDisk: Int? { file.map { FileSizes.size(of: $0.path) } }

    var probe: RestoreProbe.Target? {
        file.map { RestoreProbe.Target(kind: format == .json ? .jsonSnapshot : .propertyListSnapshot, path: $0.path) }
    }

    func finish() {}

    /// Reads and decodes a snapshot file.
    static func load(_ format: Format, from file: URL) throws -> [ObjectRecord] {
        let data = try Data(contentsOf: file)
        switch format {
        case .json: return try JSONDecoder().decode([ObjectRecord].self, from: data)
        case .propertyList: return try PropertyListDecoder().decode([ObjectRecord].self, from: data)
        }
    }

    private func writeSnapshot() throws {
        let data: Data
        switch format {
        case .json:
            data = try JSONEncoder().encode(records)
        case .propertyList:
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            data = try encoder.encode(records)
        }
        try AtomicFile.write(data, to: file!.path)
    }
}

/// The atomic replacement a careful app does: temporary file, `fsync`, `rename`.
enum AtomicFile {
    static func write(_ data: Data, to path: String) throws {
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw RawFile.failure("create \(temporary)") }
        defer { close(descriptor) }
        try data.withUnsafeBytes { try RawFile.writeAll(descriptor, $0) }
        guard fsync(descriptor) == 0 else { throw RawFile.failure("fsync \(temporary)") }
        guard rename(temporary, path) == 0 else { throw RawFile.failure("rename \(temporary)") }
    }
}
