import Foundation

extension Journal {
    /// Waits until everything up to `target` is synced, syncing itself when no other thread is.
    ///
    /// Called with `condition` locked; unlocks it during the `fdatasync`, so that other commits can
    /// write meanwhile and share the next sync (group commit). A failed sync poisons the journal:
    /// it is never retried as if it had worked.
    func waitUntilDurable(_ target: JournalPosition) throws {
        while true {
            if let poison { throw poison }
            if synced >= target { return }
            if syncInProgress {
                condition.wait()
                continue
            }
            try syncWrittenBytes()
        }
    }

    /// Syncs the active segment up to what is written. Called with `condition` locked and no sync running.
    ///
    /// After a roll, the sealed segment is synced first (``sealedPredecessor``): nothing in the new
    /// segment counts as durable before the end of the old one, its seal included, is.
    ///
    /// - Parameter fully: sync the active segment with `fsync` rather than `fdatasync` (a roll's sync,
    ///   which makes a new segment's header durable).
    func syncWrittenBytes(fully: Bool = false) throws {
        syncInProgress = true
        let descriptor = segment.descriptor
        let predecessor = sealedPredecessor
        let upTo = written
        condition.unlock()
        var failure: (any Error)?
        do {
            if let predecessor { try fileSystem.fullSync(predecessor) }
            if fully { try fileSystem.fullSync(descriptor) } else { try fileSystem.dataSync(descriptor) }
        } catch { failure = error }
        condition.lock()
        syncInProgress = false
        defer { condition.broadcast() }
        if failure == nil, let predecessor, sealedPredecessor == predecessor {
            fileSystem.close(predecessor)
            sealedPredecessor = nil
        }
        if let failure {
            let error = JournalError(
                .storePoisoned,
                "Syncing the journal to disk failed, so recent commits may not be durable. The store refuses further commits; reopen it to continue from what reached the disk.",
                cause: failure as? SystemError, file: store.file(FileNames.segment(segment.header.sequence)))
            poison(with: error)
            throw error
        }
        if upTo > synced { synced = upTo }
    }

    /// Starts the background thread of ``Durability/interval(seconds:)``.
    func startIntervalSync(every seconds: Double) {
        let thread = Thread { [weak self] in
            while let journal = self, journal.intervalTick(seconds) {}
        }
        thread.name = "StateJournal.sync"
        thread.start()
    }

    /// Waits one interval and syncs when something is unsynced; returns `false` once closed.
    ///
    /// The wait is on ``syncTimer``, not on `condition`: commits broadcast `condition` at every epoch
    /// boundary, and waking this thread each time would cost every commit a context switch.
    private func intervalTick(_ seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        syncTimer.lock()
        while !syncTimerStopped && Date() < deadline { _ = syncTimer.wait(until: deadline) }
        let stopped = syncTimerStopped
        syncTimer.unlock()
        guard !stopped else { return false }
        condition.lock()
        defer { condition.unlock() }
        guard !isClosed else { return false }
        if poison == nil && !syncInProgress && synced < written { try? syncWrittenBytes() }
        return true
    }

    /// Stops the background sync thread of ``Durability/interval(seconds:)``.
    func stopIntervalSync() {
        syncTimer.lock()
        syncTimerStopped = true
        syncTimer.broadcast()
        syncTimer.unlock()
    }
}
