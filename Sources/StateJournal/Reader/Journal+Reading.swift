#if canImport(Glibc)
    import Glibc
#endif

extension Journal {
    /// The state as of the latest committed epoch, or as of `epoch`.
    ///
    /// Reads the journal's files up to the last commit; an epoch being written is not included.
    ///
    /// - Throws: ``JournalError/Code/noSuchEpoch`` when `epoch` is not retained,
    ///   ``JournalError/Code/damaged`` in strict mode, or ``JournalError/Code/ioFailure``.
    public func state(through epoch: UInt64? = nil) throws -> JournalState {
        try JournalReading.consistently(fileSystem: fileSystem, directory: store.path, readPosition) {
            manifest, limit, files in
            try JournalReading.state(
                fileSystem: files, directory: store.path, manifest: manifest, through: epoch, lastSegmentLimit: limit,
                recovery: options.recovery, checked: checkedCheckpoints)
        }
    }

    /// Every retained epoch, oldest first.
    ///
    /// Reads the segments' commit records, not the state. The oldest retained checkpoint is checked
    /// the first time (unless this journal wrote or loaded it), and not read again while the store
    /// keeps it.
    public func history() throws -> [EpochInfo] {
        try JournalReading.consistently(fileSystem: fileSystem, directory: store.path, readPosition) {
            manifest, limit, files in
            try JournalReading.history(
                fileSystem: files, directory: store.path, manifest: manifest, lastSegmentLimit: limit,
                recovery: options.recovery, checked: checkedCheckpoints)
        }
    }

    /// Calls `body` with each retained epoch and its changes, oldest first, until it returns `false`.
    public func forEachEpoch(_ body: (EpochInfo, [JournalChange]) throws -> Bool) throws {
        try JournalReading.consistently(fileSystem: fileSystem, directory: store.path, readPosition) {
            manifest, limit, files in
            try JournalReading.forEachEpoch(
                fileSystem: files, directory: store.path, manifest: manifest, lastSegmentLimit: limit,
                recovery: options.recovery, body)
        }
    }

    /// The manifest in memory and the end of the last commit, read together under the lock.
    func readPosition() -> (Manifest, Int64?) {
        condition.lock()
        defer { condition.unlock() }
        return (manifest, committedSize)
    }
}

/// The read operations shared by ``Journal`` and ``JournalReader``.
enum JournalReading {
    /// Runs `read` against one generation of the store: the files the current manifest names,
    /// opened before the read starts (``PinnedGeneration``), so that a writer rolling a segment or
    /// compacting meanwhile changes nothing the read sees.
    ///
    /// When the manifest changed while the files were opened, they may belong to two generations
    /// (or be gone): they are closed and the manifest is read again. A file missing under a
    /// manifest that did not change is damage, which the read reports. The bound only stops a writer
    /// that replaces the manifest faster than a reader can open its files from keeping a reader busy
    /// for ever.
    static func consistently<T>(
        fileSystem: any FileSystem, directory: String,
        _ position: () throws -> (Manifest, Int64?), _ read: (Manifest, Int64?, any FileSystem) throws -> T
    ) throws -> T {
        let attempts = 100
        var attempt = 0
        while true {
            attempt += 1
            let (manifest, limit) = try position()
            let generation = try wrap(directory) {
                try PinnedGeneration(manifest, in: directory, fileSystem: fileSystem)
            }
            defer { generation.release() }
            if attempt < attempts, (try? position().0) != manifest {
                if attempt > 10 { usleep(useconds_t(1_000 * min(attempt, 20))) }
                continue
            }
            return try read(manifest, limit, generation)
        }
    }

    static func state(
        fileSystem: any FileSystem, directory: String, manifest: Manifest, through epoch: UInt64?,
        lastSegmentLimit: Int64?,
        recovery: RecoveryMode, checked: CheckedCheckpoints? = nil
    ) throws -> JournalState {
        let scan = try wrap(directory) {
            try JournalScanner(
                fileSystem: fileSystem, directory: directory, manifest: manifest,
                options: ScanOptions(
                    through: epoch, decode: true, lastSegmentLimit: lastSegmentLimit, recovery: recovery,
                    checkedCheckpoints: checked)
            ).run()
        }
        if let epoch, scan.lastEpoch?.epoch != epoch {
            throw JournalError(
                .noSuchEpoch,
                """
                Epoch \(epoch) is not in the store; the retained epochs end at \
                \(scan.lastEpoch.map { String($0.epoch) } ?? "none"). List them with `statejournal log` (or \
                `history()` in code).
                """
            )
        }
        return JournalState(
            epoch: scan.lastEpoch, table: scan.state, damage: scan.damage,
            uncommittedTailBytes: scan.uncommittedTailBytes,
            unsyncedTail: scan.unsyncedTail)
    }

    /// Every retained epoch, from the oldest checkpoint's on. The checkpoint is checked without
    /// loading its state, unless `checked` says it was checked, loaded or written before.
    static func history(
        fileSystem: any FileSystem, directory: String, manifest: Manifest, lastSegmentLimit: Int64?,
        recovery: RecoveryMode, checked: CheckedCheckpoints? = nil
    ) throws -> [EpochInfo] {
        var epochs: [EpochInfo] = []
        checked?.keepOnly(manifest.checkpoints)
        _ = try wrap(directory) {
            try JournalScanner(
                fileSystem: fileSystem, directory: directory, manifest: manifest,
                options: ScanOptions(
                    decode: false, lastSegmentLimit: lastSegmentLimit, fromOldest: true, recovery: recovery,
                    streamsCheckpoint: true, checkedCheckpoints: checked)
            ).run { info, _ in
                epochs.append(info)
                return true
            }
        }
        return epochs
    }

    static func forEachEpoch(
        fileSystem: any FileSystem, directory: String, manifest: Manifest, lastSegmentLimit: Int64?,
        recovery: RecoveryMode,
        _ body: (EpochInfo, [JournalChange]) throws -> Bool
    ) throws {
        _ = try withoutActuallyEscaping(body) { visit in
            try wrap(directory) {
                try JournalScanner(
                    fileSystem: fileSystem, directory: directory, manifest: manifest,
                    options: ScanOptions(
                        decode: true, keepsChanges: true, lastSegmentLimit: lastSegmentLimit, fromOldest: true,
                        recovery: recovery)
                ).run(visit: visit)
            }
        }
    }

    static func wrap<T>(_ directory: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as JournalError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw Journal.ioError(error, "read the journal in \(directory)")
        }
    }
}
