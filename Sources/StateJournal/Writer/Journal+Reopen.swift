import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Journal {
    /// The failed write or sync that poisoned the journal, or `nil` while it accepts commits.
    ///
    /// A poisoned journal refuses every commit with this error until ``reopen()`` succeeds.
    /// ``JournalError/isTransient`` tells whether reopening later is worth trying.
    public var failure: JournalError? {
        condition.lock()
        defer { condition.unlock() }
        return poison
    }

    /// Opens the store again in place after a failed write or sync poisoned the journal, so that
    /// it accepts commits again without the app restarting.
    ///
    /// The journal stays the same object, so every reference to it stays valid. Reopening does what
    /// a new process opening the store would, without trusting what the failure left behind:
    ///
    /// 1. It checks that the directory still holds the same store (its manifest's store ID), then
    ///    cuts the segments back to the last position a sync confirmed, through their names (the
    ///    directory may have been remounted), and syncs them. What the failed sync did not confirm
    ///    is gone even where the page cache still shows it, and no new epoch follows it.
    /// 2. It lets go of the poisoned writer's files and lock.
    /// 3. It opens the store as ``open(at:options:)`` does, except that it never creates one:
    ///    a missing directory or manifest is an ``JournalError/Code/ioFailure`` with `ENOENT`, which
    ///    is transient (the directory may be mounted again).
    ///
    /// When a step fails, the journal stays poisoned and refuses commits, and `reopen()` can be
    /// called again later; nothing it did needs undoing. The epochs after the last durable one are
    /// not in the reopened journal: ``lastCommitted`` goes back to the last epoch that reached the
    /// disk. Epochs whose commit returned under ``Durability/interval(seconds:)`` or
    /// ``Durability/none`` but whose sync failed are among them, so an app that still holds their
    /// state should commit it again (the restoration layer's `RestorationManager` does this on its
    /// own with a full pass). ``recoveredState`` and ``recoveryReport`` keep describing the first
    /// open; the report of this one is returned.
    ///
    /// Reopening a journal that is not poisoned does nothing.
    ///
    /// ```swift
    /// import StateJournal
    ///
    /// func commitHealing(_ journal: Journal, _ changes: [JournalChange]) throws -> EpochInfo {
    ///     if let failure = journal.failure, failure.isTransient { _ = try journal.reopen() }
    ///     return try journal.commit(changes)
    /// }
    /// ```
    ///
    /// - Returns: What opening the store again found and repaired.
    /// - Throws: ``JournalError`` with code ``JournalError/Code/closed`` after ``close()``,
    ///   ``JournalError/Code/epochInProgress`` while an epoch begun with ``beginEpoch()`` is open,
    ///   ``JournalError/Code/storeReplaced`` when the directory now holds another store, or any
    ///   error of ``open(at:options:)``. Each leaves the journal poisoned; see
    ///   ``JournalError/isTransient`` for which are worth another try.
    @discardableResult
    public func reopen() throws -> RecoveryReport {
        condition.lock()
        defer { condition.unlock() }
        if isClosed { throw JournalError(.closed, "The journal is closed; open it again to write.") }
        guard let failure = poison else { return RecoveryReport() }
        if state.callerEpochIsOpen {
            throw JournalError(
                .epochInProgress, "An epoch is still open; commit or abort it before reopening the journal.")
        }
        while state.epoch != .none || state.syncIsUnderWay || state.compaction != .idle || state.roll != .none {
            condition.wait()
        }
        let storeID = manifest.storeID
        // Nothing is cut or opened in a directory that holds another store now.
        guard try readManifestToReopen().storeID == storeID else { throw storeReplacedError() }
        if !filesReleased { try cutUndurableTail() }
        releaseFilesForReopen()
        let fresh = try Journal.openStore(path: store.path, options: options, fileSystem: fileSystem, creating: false)
        guard fresh.manifest.storeID == storeID else {
            fresh.shutDown(syncing: false)
            throw storeReplacedError()
        }
        adopt(fresh)
        state.reopen()
        wakeEpochWaiters(all: true)
        condition.broadcast()
        logger.notice(
            "Reopened the journal after a failure",
            metadata: [
                "epoch": "\(lastCommittedInfo.map { String($0.epoch) } ?? "none")", "failure": "\(failure.code)",
                "errno": "\(failure.errno.map(String.init) ?? "none")",
            ])
        return fresh.recoveryReport
    }

    /// The manifest in the store directory; a missing one is a transient ``JournalError/Code/ioFailure``
    /// (the directory was removed or is not mounted now), not ``JournalError/Code/notAStore``.
    private func readManifestToReopen() throws -> Manifest {
        do {
            return try store.readStoredManifest()
        } catch let error as JournalError where error.errno == ENOENT || error.errno == ENOTDIR {
            throw JournalError(
                .ioFailure,
                """
                The store directory \(store.path) or its manifest is missing: it was removed, moved or unmounted. \
                Reopening succeeds once it is back.
                """,
                cause: SystemError(call: "open", errno: error.errno ?? ENOENT, path: store.file(FileNames.manifest)))
        }
    }

    private func storeReplacedError() -> JournalError {
        JournalError(
            .storeReplaced,
            """
            The directory \(store.path) holds another store than the one this journal opened: it was replaced while \
            the journal was open. The journal will not write into it; open the new store explicitly if that is what \
            you want.
            """)
    }

    /// Cuts the segments back to the last synced position through their names, and syncs them:
    /// what ``discardUndurableBytes()`` tried through the descriptors, again, where it must
    /// succeed. Called with `condition` locked.
    private func cutUndurableTail() throws {
        let durable = synced
        var cuts: [(name: String, length: Int64)] = [(FileNames.segment(durable.segment), durable.offset)]
        if durable.segment != segment.header.sequence {
            cuts.append((FileNames.segment(segment.header.sequence), 0))
        }
        for cut in cuts {
            let file = store.file(cut.name)
            do {
                let descriptor: Int32
                do {
                    descriptor = try fileSystem.open(file, .readWrite)
                } catch let error as SystemError where error.errno == ENOENT && cut.length == 0 {
                    continue
                }
                defer { fileSystem.close(descriptor) }
                if try fileSystem.size(descriptor) > cut.length { try fileSystem.truncate(descriptor, to: cut.length) }
                try fileSystem.fullSync(descriptor)
            } catch {
                throw Self.ioError(error, "cut the journal back to its last durable position to reopen it", file: file)
            }
        }
    }

    /// Closes the poisoned writer's segments and releases its lock, once. Called with `condition`
    /// locked.
    private func releaseFilesForReopen() {
        if let predecessor = sealedPredecessor {
            fileSystem.close(predecessor)
            sealedPredecessor = nil
        }
        if !filesReleased {
            fileSystem.close(segment.descriptor)
            segment.descriptor = -1
            filesReleased = true
        }
        lock?.release(fileSystem)
        lock = nil
    }

    /// Takes over the writer state of a journal just opened on the same store, which lets go of
    /// its files. Called with `condition` locked.
    private func adopt(_ fresh: Journal) {
        manifest = fresh.manifest
        segment = fresh.segment
        committedSize = fresh.committedSize
        lock = fresh.lock
        cache = fresh.cache
        backgroundRoll = .idle
        lastCommittedInfo = fresh.lastCommittedInfo
        lastDurableInfo = fresh.lastDurableInfo
        nextEpoch = fresh.nextEpoch
        sealedPredecessor = fresh.sealedPredecessor
        manifestWriter.withLock { durableGeneration = fresh.durableGeneration }
        written = fresh.written
        synced = fresh.synced
        commitsSinceSyncStart = 0
        lastSyncBatch = 0
        lastSyncNanoseconds = 0
        bytesSinceCheckpoint = fresh.bytesSinceCheckpoint
        checkpointBytes = fresh.checkpointBytes
        lastCompactionFailure = nil
        filesReleased = false
        fresh.condition.withLock {
            fresh.lock = nil
            fresh.sealedPredecessor = nil
            fresh.filesReleased = true
            fresh.state.close()
        }
    }
}
