import Foundation

extension StoreInspector {
    /// The metadata key under which a rewound store records where its state came from.
    public static let rewoundFromKey = "statejournal.rewoundFrom"

    /// Writes a new store in `target` whose only epoch holds the state as of `epoch` of this store,
    /// with that epoch's metadata, so that an app can be started as it was then. This store is not
    /// touched.
    ///
    /// - Throws: ``JournalError/Code/noSuchEpoch`` when `epoch` is not retained, or
    ///   ``JournalError/Code/notAStore`` when `target` exists and is not empty.
    @discardableResult
    public func rewind(to epoch: UInt64, into target: URL) throws -> EpochInfo {
        try rewind(to: epoch, into: target, fileSystem: PosixFileSystem())
    }

    /// Rewinds through a given file system: the seam tests use to record and fail calls.
    package func rewind(to epoch: UInt64, into target: URL, fileSystem: any FileSystem) throws -> EpochInfo {
        let state = try reader.state(through: epoch)
        if let names = try? FileManager.default.contentsOfDirectory(atPath: target.path), !names.isEmpty {
            throw JournalError(
                .notAStore, "\(target.path) is not empty; rewind writes a new store, so choose a new directory.",
                file: target.path)
        }
        let journal = try Journal.open(
            path: target.path, options: JournalOptions(durability: .everyCommit), fileSystem: fileSystem)
        defer { try? journal.close() }
        var metadata = state.epoch?.metadata ?? [:]
        metadata[Self.rewoundFromKey] = "\(reader.directory.path)@\(epoch)"
        let writer = try journal.beginEpoch()
        for (path, bytes) in state { try writer.put(path, bytes) }
        let info = try writer.commit(metadata: metadata)
        try journal.close()
        return info
    }
}
