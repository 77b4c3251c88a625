import Foundation

/// What ``StoreFileSet/checkFiles(in:stagedNames:checksNewestCheckpoint:isCancelled:)`` found.
package struct StoreFileSetCheck: Sendable, Hashable {
    /// The last epoch committed in the files (the newest checkpoint's when nothing follows it).
    package var lastEpoch: UInt64?
    /// How far the last segment is consistent, and whether it ends with its seal.
    package var lastSegmentEnd: Int64?
    /// Whether the last segment ends with its seal.
    package var lastSegmentSealed: Bool
}

extension StoreFileSet {
    /// Checks, without writing anything, that the files in `directory` hold this set: the framing,
    /// record checksums and commits of every segment after the newest checkpoint (and, with
    /// `checksNewestCheckpoint`, that checkpoint itself, a window at a time). Files whose bytes are
    /// still under another name are read there: `stagedNames` maps a set's file name to it.
    ///
    /// The scan is the one ``JournalReader/fileSet()`` runs on every pass of a shipper: it reads
    /// the segments after the newest checkpoint, so its cost is bounded by compaction, not by the
    /// store's history.
    ///
    /// - Throws: ``JournalError/Code/damaged`` at the first damage, `CancellationError`,
    ///   ``JournalError/Code/ioFailure``.
    package func checkFiles(
        in directory: URL, stagedNames: [String: String] = [:], checksNewestCheckpoint: Bool,
        isCancelled: (@Sendable () -> Bool)? = nil
    ) throws -> StoreFileSetCheck {
        let manifest = try manifest()
        var fileSystem: any FileSystem = StagedNameFileSystem(
            base: PosixFileSystem(),
            paths: Dictionary(
                uniqueKeysWithValues: stagedNames.map {
                    (directory.path + "/" + $0.key, directory.path + "/" + $0.value)
                }
            ))
        if let isCancelled { fileSystem = CancellableFileSystem(base: fileSystem, isCancelled: isCancelled) }
        let scan = try JournalReading.wrap(directory.path) {
            try JournalScanner(
                fileSystem: fileSystem, directory: directory.path, manifest: manifest,
                options: ScanOptions(
                    decode: false, recovery: .stopAtDamage, skipsCheckpoint: !checksNewestCheckpoint,
                    streamsCheckpoint: checksNewestCheckpoint)
            ).run()
        }
        if let damage = scan.damage {
            throw JournalError(
                .damaged, "The files are damaged in \(damage.file) at offset \(damage.offset) (\(damage.reason)).",
                file: directory.path + "/" + damage.file, offset: damage.offset)
        }
        if !scan.damagedCheckpoints.isEmpty {
            let reason = scan.damagedCheckpoints.first.map { "\($0.report.reason)" } ?? ""
            throw JournalError(.damaged, "The newest checkpoint is damaged (\(reason)).")
        }
        return StoreFileSetCheck(
            lastEpoch: scan.lastEpoch?.epoch ?? manifest.checkpoints.last?.epoch,
            lastSegmentEnd: scan.tail?.committedEnd, lastSegmentSealed: scan.tail?.sealed ?? false)
    }

    /// Replaces the manifest in `directory` with one naming this set's files, atomically (temporary
    /// file, fsync, rename, fsync of the directory), without reading the files: for a copier that
    /// checked them with ``checkFiles(in:stagedNames:checksNewestCheckpoint:isCancelled:)`` first.
    ///
    /// - Throws: ``JournalError/Code/invalidPath`` for a store id that is not 32 hex digits,
    ///   ``JournalError/Code/limitExceeded``, ``JournalError/Code/ioFailure``.
    package func writeManifest(in directory: URL) throws {
        let manifest = try manifest()
        do {
            try StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path).writeManifest(manifest)
        } catch let error as SystemError {
            throw Journal.ioError(error, "write the manifest in \(directory.path)")
        }
    }

    /// The files the stored manifest of `directory` names, each with its whole size as its length,
    /// without reading them: for a copier comparing a damaged copy with the original, byte for byte.
    /// ``lastEpoch`` is `nil`, and a segment's last epoch is its base epoch.
    ///
    /// - Throws: ``JournalError/Code/notAStore``, ``JournalError/Code/damaged`` for a damaged
    ///   manifest, ``JournalError/Code/ioFailure``.
    package static func storedFiles(in directory: URL) throws -> StoreFileSet {
        let store = StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path)
        let manifest = try store.readStoredManifest()
        func size(_ name: String) -> Int64 { (try? store.fileSize(name)) ?? 0 }
        var files = manifest.checkpoints.map { checkpoint in
            let name = FileNames.checkpoint(checkpoint.sequence)
            return File(
                name: name, kind: .checkpoint, sequence: checkpoint.sequence, baseEpoch: checkpoint.epoch,
                lastEpoch: checkpoint.epoch, timestampMilliseconds: checkpoint.timestampMilliseconds, isSealed: true,
                length: size(name))
        }
        for (index, sequence) in manifest.segments.enumerated() {
            let name = FileNames.segment(sequence)
            let base = (try? store.segmentBase(sequence)) ?? 0
            files.append(
                File(
                    name: name, kind: .segment, sequence: sequence, baseEpoch: base, lastEpoch: base,
                    timestampMilliseconds: 0, isSealed: index < manifest.segments.count - 1, length: size(name)))
        }
        return StoreFileSet(
            storeID: manifest.storeID.description, generation: manifest.generation,
            nextFileSequence: manifest.nextFileSequence, epochFloor: manifest.epochFloor, files: files, lastEpoch: nil)
    }

    private func manifest() throws -> Manifest {
        guard storeID.count == 32, let bytes = Self.bytes(fromHex: storeID) else {
            throw JournalError(.invalidPath, "\(storeID) is not a store id (32 hex digits).")
        }
        return Manifest(
            storeID: StoreID(bytes: bytes), generation: generation, nextFileSequence: nextFileSequence,
            epochFloor: epochFloor,
            checkpoints: files.filter { $0.kind == .checkpoint }.map {
                Manifest.CheckpointReference(
                    sequence: $0.sequence, epoch: $0.lastEpoch, timestampMilliseconds: $0.timestampMilliseconds)
            },
            segments: files.filter { $0.kind == .segment }.map(\.sequence))
    }
}

/// The writer's lock on a store, held by something that changes the store's files without being
/// its ``Journal`` (a follower keeping a copy up to date): while it is held, no `Journal` opens the
/// store for writing (``JournalError/Code/storeLocked``), and read-only opens and readers work as
/// beside a writer.
package final class StoreWriterLock: @unchecked Sendable {
    // @unchecked Sendable: `lock` is set once in init and released once, under `mutex`.
    private var lock: StoreLock?
    private let mutex = NSLock()

    /// Takes the lock of the store in `directory`, which must exist.
    ///
    /// - Throws: ``JournalError/Code/storeLocked`` when a writer holds it,
    ///   ``JournalError/Code/ioFailure``.
    package init(directory: URL) throws {
        do {
            lock = try StoreLock.acquire(in: StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path))
        } catch let error as SystemError {
            throw Journal.ioError(error, "lock the store at \(directory.path)")
        }
    }

    /// Releases the lock (also on deinit).
    package func release() {
        mutex.withLock {
            lock?.release(PosixFileSystem())
            lock = nil
        }
    }

    deinit { release() }
}

/// A ``FileSystem`` that opens some paths under other names: a check of files that are staged under
/// temporary names before they are renamed into place.
private struct StagedNameFileSystem: ForwardingFileSystem {
    let base: any FileSystem
    let paths: [String: String]

    func open(_ path: String, _ mode: FileOpenMode) throws -> Int32 { try base.open(paths[path] ?? path, mode) }
}
