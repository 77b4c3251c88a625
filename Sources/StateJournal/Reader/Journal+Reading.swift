extension Journal {
    /// The state as of the latest committed epoch, or as of `epoch`.
    ///
    /// Reads the journal's files up to the last commit; an epoch being written is not included.
    ///
    /// - Throws: ``JournalError/Code/noSuchEpoch`` when `epoch` is not retained,
    ///   ``JournalError/Code/damaged`` in strict mode, or ``JournalError/Code/ioFailure``.
    public func state(through epoch: UInt64? = nil) throws -> JournalState {
        let (manifest, limit) = readPosition()
        return try JournalReading.state(
            fileSystem: fileSystem, directory: store.path, manifest: manifest, through: epoch, lastSegmentLimit: limit,
            recovery: options.recovery)
    }

    /// Every retained epoch, oldest first.
    public func history() throws -> [EpochInfo] {
        let (manifest, limit) = readPosition()
        return try JournalReading.history(
            fileSystem: fileSystem, directory: store.path, manifest: manifest, lastSegmentLimit: limit, recovery: options.recovery)
    }

    /// Calls `body` with each retained epoch and its changes, oldest first, until it returns `false`.
    public func forEachEpoch(_ body: (EpochInfo, [JournalChange]) throws -> Bool) throws {
        let (manifest, limit) = readPosition()
        try JournalReading.forEachEpoch(
            fileSystem: fileSystem, directory: store.path, manifest: manifest, lastSegmentLimit: limit,
            recovery: options.recovery, body)
    }

    private func readPosition() -> (Manifest, Int64) {
        condition.lock()
        defer { condition.unlock() }
        return (manifest, committedSize)
    }
}

/// The read operations shared by ``Journal`` and ``JournalReader``.
enum JournalReading {
    static func state(
        fileSystem: any FileSystem, directory: String, manifest: Manifest, through epoch: UInt64?, lastSegmentLimit: Int64?,
        recovery: RecoveryMode
    ) throws -> JournalState {
        let scan = try wrap(directory) {
            try JournalScanner(
                fileSystem: fileSystem, directory: directory, manifest: manifest,
                options: ScanOptions(through: epoch, decode: true, lastSegmentLimit: lastSegmentLimit, recovery: recovery)
            ).run()
        }
        if let epoch, scan.lastEpoch?.epoch != epoch {
            throw JournalError(
                .noSuchEpoch,
                "Epoch \(epoch) is not in the store; the retained epochs end at \(scan.lastEpoch.map { String($0.epoch) } ?? "none"). List them with history().")
        }
        return JournalState(epoch: scan.lastEpoch, entries: scan.state, damage: scan.damage, uncommittedTailBytes: scan.uncommittedTailBytes)
    }

    static func history(
        fileSystem: any FileSystem, directory: String, manifest: Manifest, lastSegmentLimit: Int64?, recovery: RecoveryMode
    ) throws -> [EpochInfo] {
        var epochs: [EpochInfo] = []
        _ = try wrap(directory) {
            try JournalScanner(
                fileSystem: fileSystem, directory: directory, manifest: manifest,
                options: ScanOptions(decode: false, lastSegmentLimit: lastSegmentLimit, fromOldest: true, recovery: recovery)
            ).run { info, _ in
                epochs.append(info)
                return true
            }
        }
        return epochs
    }

    static func forEachEpoch(
        fileSystem: any FileSystem, directory: String, manifest: Manifest, lastSegmentLimit: Int64?, recovery: RecoveryMode,
        _ body: (EpochInfo, [JournalChange]) throws -> Bool
    ) throws {
        _ = try withoutActuallyEscaping(body) { visit in
            try wrap(directory) {
                try JournalScanner(
                    fileSystem: fileSystem, directory: directory, manifest: manifest,
                    options: ScanOptions(decode: true, keepsChanges: true, lastSegmentLimit: lastSegmentLimit, fromOldest: true, recovery: recovery)
                ).run(visit: visit)
            }
        }
    }

    private static func wrap<T>(_ directory: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as JournalError {
            throw error
        } catch {
            throw Journal.ioError(error, "read the journal in \(directory)")
        }
    }
}
