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
        try JournalReading.consistently(readPosition) { manifest, limit in
            try JournalReading.state(
                fileSystem: fileSystem, directory: store.path, manifest: manifest, through: epoch, lastSegmentLimit: limit,
                recovery: options.recovery)
        }
    }

    /// Every retained epoch, oldest first.
    public func history() throws -> [EpochInfo] {
        try JournalReading.consistently(readPosition) { manifest, limit in
            try JournalReading.history(
                fileSystem: fileSystem, directory: store.path, manifest: manifest, lastSegmentLimit: limit, recovery: options.recovery)
        }
    }

    /// Calls `body` with each retained epoch and its changes, oldest first, until it returns `false`.
    public func forEachEpoch(_ body: (EpochInfo, [JournalChange]) throws -> Bool) throws {
        try withoutActuallyEscaping(body) { body in
            var visitor = JournalReading.ResumingVisitor(body)
            try JournalReading.consistently(readPosition) { manifest, limit in
                try JournalReading.forEachEpoch(
                    fileSystem: fileSystem, directory: store.path, manifest: manifest, lastSegmentLimit: limit,
                    recovery: options.recovery) { try visitor.visit($0, $1) }
            }
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
    /// Runs `read` against the current manifest, and again when the manifest changed meanwhile.
    ///
    /// A writer that rolls a segment or compacts replaces the manifest, and may delete files the old
    /// one named, while a read is under way. A read counts only if the manifest did not change during
    /// it. The bound only stops a writer that replaces the manifest faster than a read can finish from
    /// keeping a reader busy for ever.
    static func consistently<T>(
        _ position: () throws -> (Manifest, Int64?), _ read: (Manifest, Int64?) throws -> T
    ) throws -> T {
        let attempts = 100
        var attempt = 0
        while true {
            let (manifest, limit) = try position()
            let outcome = Result { try read(manifest, limit) }
            attempt += 1
            if attempt == attempts || (try? position().0) == manifest { return try outcome.get() }
            if attempt > 10 { usleep(useconds_t(1_000 * min(attempt, 20))) }
        }
    }

    /// Passes each epoch to a visitor once, when a read is run again after the manifest changed:
    /// epochs are immutable, so a later attempt resumes after the last epoch already delivered.
    struct ResumingVisitor {
        let body: (EpochInfo, [JournalChange]) throws -> Bool
        var delivered: UInt64?

        init(_ body: @escaping (EpochInfo, [JournalChange]) throws -> Bool) { self.body = body }

        mutating func visit(_ info: EpochInfo, _ changes: [JournalChange]) throws -> Bool {
            if let delivered, info.epoch <= delivered { return true }
            delivered = info.epoch
            return try body(info, changes)
        }
    }

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
        return JournalState(epoch: scan.lastEpoch, table: scan.state, damage: scan.damage, uncommittedTailBytes: scan.uncommittedTailBytes)
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
