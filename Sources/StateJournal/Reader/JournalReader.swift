import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A store opened read-only, beside a live writer or not.
///
/// A reader takes no lock and writes nothing. It sees every epoch committed before each call; an
/// epoch the writer is still writing looks like an uncommitted tail and is left out.
public struct JournalReader: Sendable {
    /// The store directory.
    public let directory: URL
    /// What reading does on damage before the end of the journal.
    public let recovery: RecoveryMode
    let fileSystem: any FileSystem

    /// Opens the store in `directory` for reading.
    ///
    /// - Throws: ``JournalError/Code/notAStore`` when the directory holds no store, or
    ///   ``JournalError/Code/damaged`` when its manifest is unreadable.
    public init(at directory: URL, recovery: RecoveryMode = .stopAtDamage) throws {
        try self.init(path: directory.path, recovery: recovery, fileSystem: PosixFileSystem())
    }

    package init(path: String, recovery: RecoveryMode, fileSystem: any FileSystem) throws {
        self.directory = URL(fileURLWithPath: path)
        self.recovery = recovery
        self.fileSystem = fileSystem
        guard try store.names() != nil else {
            throw JournalError(.notAStore, "\(path) does not exist, so it holds no StateJournal store.", file: path)
        }
        _ = try store.readManifest()
    }

    private var store: StoreDirectory { StoreDirectory(fileSystem: fileSystem, path: directory.path) }

    /// The state as of the latest committed epoch, or as of `epoch`.
    ///
    /// - Throws: ``JournalError/Code/noSuchEpoch`` when `epoch` is not retained,
    ///   ``JournalError/Code/damaged`` in strict mode.
    public func state(through epoch: UInt64? = nil) throws -> JournalState {
        try retrying { manifest, files in
            try JournalReading.state(
                fileSystem: files, directory: directory.path, manifest: manifest, through: epoch, lastSegmentLimit: nil,
                recovery: recovery)
        }
    }

    /// Every retained epoch, oldest first.
    public func history() throws -> [EpochInfo] {
        try retrying { manifest, files in
            try JournalReading.history(
                fileSystem: files, directory: directory.path, manifest: manifest, lastSegmentLimit: nil,
                recovery: recovery)
        }
    }

    /// Calls `body` with each retained epoch and its changes, oldest first, until it returns `false`.
    public func forEachEpoch(_ body: (EpochInfo, [JournalChange]) throws -> Bool) throws {
        try retrying { manifest, files in
            try JournalReading.forEachEpoch(
                fileSystem: files, directory: directory.path, manifest: manifest, lastSegmentLimit: nil,
                recovery: recovery, body)
        }
    }

    private func retrying<T>(_ read: (Manifest, any FileSystem) throws -> T) throws -> T {
        try JournalReading.consistently(
            fileSystem: fileSystem, directory: directory.path, { (try store.readManifest(), nil) }
        ) {
            manifest, _, files in try read(manifest, files)
        }
    }
}
