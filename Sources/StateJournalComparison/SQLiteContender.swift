import Foundation

/// SQLite in WAL mode: one row per path, an upsert per changed path, one transaction per pass.
final class SQLiteContender: PreservationContender {
    let synchronous: SQLiteStore.Synchronous
    var name: String { "sqlite-wal-\(synchronous.rawValue.lowercased())" }
    private var store: SQLiteStore?

    init(synchronous: SQLiteStore.Synchronous) {
        self.synchronous = synchronous
    }

    func start(in directory: URL, with workload: AppStateWorkload) throws {
        store = try SQLiteStore(path: directory.appendingPathComponent("\(name).sqlite").path, synchronous: synchronous)
        try save(Array(0..<workload.objectCount), of: workload)
    }

    func save(_ changed: [Int], of workload: AppStateWorkload) throws {
        try store!.write(changed.map { (workload.path($0).description, workload.state($0)) })
    }

    /// Opens a second connection and reads every row, as a relaunched app does.
    func restore() throws -> Int {
        let reader = try SQLiteStore(path: store!.path, synchronous: synchronous)
        defer { reader.close() }
        return try reader.readAll().count
    }

    var bytesOnDisk: Int? { store?.bytesOnDisk }

    func compact() throws -> Bool {
        try store!.compact()
        return true
    }

    var probe: RestoreProbe.Target? { store.map { RestoreProbe.Target(kind: .sqlite, path: $0.path) } }

    func finish() {
        store?.close()
        store = nil
    }
}
