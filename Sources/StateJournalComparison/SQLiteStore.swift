import CSQLite
import Foundation
import StateJournal

/// What a careful engineer would use instead of the journal: SQLite in WAL mode, one row per
/// restoration path, an upsert per changed path.
final class SQLiteStore {
    /// SQLite's `synchronous` setting: `NORMAL` syncs the WAL only at checkpoints, `FULL` at every commit.
    enum Synchronous: String, Sendable {
        case normal = "NORMAL"
        case full = "FULL"
    }

    let path: String
    private var database: OpaquePointer?
    private var upsert: OpaquePointer?

    /// Opens (creating) the database at `path` in WAL mode with the given `synchronous` setting.
    init(path: String, synchronous: Synchronous) throws {
        self.path = path
        guard
            sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
                == SQLITE_OK
        else {
            let message = database.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(database)
            throw Self.failure("open \(path)", message)
        }
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=\(synchronous.rawValue)")
        try execute("CREATE TABLE IF NOT EXISTS state (path TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID")
        upsert = try prepare(
            "INSERT INTO state (path, value) VALUES (?1, ?2) ON CONFLICT(path) DO UPDATE SET value = excluded.value")
    }

    deinit { close() }

    /// Finalizes the statement and closes the database.
    func close() {
        sqlite3_finalize(upsert)
        upsert = nil
        sqlite3_close(database)
        database = nil
    }

    /// Upserts every `(path, value)` pair in one transaction.
    func write(_ rows: [(path: String, value: [UInt8])]) throws {
        try execute("BEGIN")
        do {
            for row in rows { try put(row.path, row.value) }
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Upserts one row outside any explicit transaction, so that it is its own transaction.
    func put(_ path: String, _ value: [UInt8]) throws {
        // The bindings borrow the buffers (a nil destructor is SQLITE_STATIC), so step while they are valid.
        let result = path.withCString { text in
            value.withUnsafeBytes { bytes -> Int32 in
                sqlite3_bind_text(upsert, 1, text, -1, nil)
                sqlite3_bind_blob(upsert, 2, bytes.baseAddress, Int32(bytes.count), nil)
                let result = sqlite3_step(upsert)
                sqlite3_reset(upsert)
                sqlite3_clear_bindings(upsert)
                return result
            }
        }
        guard result == SQLITE_DONE else { throw Self.failure("upsert \(path)", lastMessage) }
    }

    /// Reads every row back, as a relaunched app does.
    func readAll() throws -> [String: [UInt8]] {
        let select = try prepare("SELECT path, value FROM state")
        defer { sqlite3_finalize(select) }
        var rows: [String: [UInt8]] = [:]
        while true {
            let result = sqlite3_step(select)
            if result == SQLITE_DONE { break }
            guard result == SQLITE_ROW else { throw Self.failure("read the state", lastMessage) }
            let path = String(cString: sqlite3_column_text(select, 0))
            let count = Int(sqlite3_column_bytes(select, 1))
            let value =
                count == 0 ? [] : [UInt8](UnsafeRawBufferPointer(start: sqlite3_column_blob(select, 1), count: count))
            rows[path] = value
        }
        return rows
    }

    /// Folds the WAL into the database and rebuilds it: SQLite's counterpart of compaction.
    func compact() throws {
        try execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try execute("VACUUM")
        try execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// The database, its WAL and its shared-memory index, in bytes.
    var bytesOnDisk: Int {
        [path, path + "-wal", path + "-shm"].reduce(0) { $0 + FileSizes.size(of: $1) }
    }

    private var lastMessage: String { database.map { String(cString: sqlite3_errmsg($0)) } ?? "closed" }

    private func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(database, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(message)
            throw Self.failure("run \(sql)", text)
        }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK else {
            throw Self.failure("prepare \(sql)", lastMessage)
        }
        return statement
    }

    private static func failure(_ doing: String, _ message: String) -> JournalError {
        JournalError(.ioFailure, "SQLite could not \(doing): \(message).")
    }
}

/// File sizes for the bytes-on-disk figures.
enum FileSizes {
    /// The size of the file at `path`, or 0 when it does not exist.
    static func size(of path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// The total size of the regular files directly in `directory`, leaving out `LOCK`.
    static func directorySize(_ directory: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0 != "LOCK" }.reduce(0) { $0 + size(of: directory + "/" + $1) }
    }
}
