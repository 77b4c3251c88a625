import Foundation

extension Journal {
    /// Returns once everything up to `target` is synced: the wait of a commit under
    /// ``Durability/everyCommit``. Called with `condition` unlocked.
    ///
    /// With no sync running, the caller syncs (``waitUntilDurable(_:)``). Otherwise it waits on a
    /// ``DurabilityWaiter`` of its own until the running sync ends, which either covers its epoch
    /// or wakes it to lead the next sync.
    func waitForDurability(of target: JournalPosition) throws {
        condition.lock()
        if synced >= target {
            condition.unlock()
            return
        }
        if let poison {
            condition.unlock()
            throw poison
        }
        if !state.syncIsUnderWay {
            defer { condition.unlock() }
            try waitUntilDurable(target)
            return
        }
        let waiter = DurabilityWaiter(target: target)
        durabilityWaiters.append(waiter)
        condition.unlock()
        switch waiter.wait() {
        case .durable: return
        case .failed(let error): throw error
        case .lead:
            condition.lock()
            defer { condition.unlock() }
            try waitUntilDurable(target)
        }
    }

    /// Wakes the waiters a sync that just ended covered, or all of them with `failure`, and one of
    /// those left to lead the next sync. Called with `condition` locked.
    func releaseDurabilityWaiters(failure: JournalError?) {
        guard !durabilityWaiters.isEmpty else { return }
        var waiting: [DurabilityWaiter] = []
        for waiter in durabilityWaiters {
            if let failure {
                waiter.wake(.failed(failure))
            } else if waiter.target <= synced {
                waiter.wake(.durable)
            } else {
                waiting.append(waiter)
            }
        }
        if !waiting.isEmpty { waiting.removeFirst().wake(.lead) }
        durabilityWaiters = waiting
    }

    /// Waits until everything up to `target` is synced, syncing itself when no other thread is.
    ///
    /// Called with `condition` locked; unlocks it during the `fdatasync`, so that other commits can
    /// write meanwhile and share the next sync (group commit). A failed sync poisons the journal:
    /// it is never retried as if it had worked.
    ///
    /// Before it syncs, the thread gathers the commits that are about to come: when the last sync
    /// covered several commits, it waits until as many are written again (at most about as long as
    /// the last sync took), so that one sync covers them all. Without that, the committers a sync
    /// released would come back one by one, and the first of them would start the next sync alone:
    /// batches would alternate between nearly all the committers and one. A lone committer's last
    /// sync covered one commit, so it never waits.
    func waitUntilDurable(_ target: JournalPosition) throws {
        var gathered = false
        while true {
            if let poison { throw poison }
            if synced >= target { return }
            if state.syncIsUnderWay {
                condition.wait()
                continue
            }
            if !gathered && lastSyncBatch > 1 && commitsSinceSyncStart < lastSyncBatch && lastSyncNanoseconds > 0 {
                gatherCommitsBeforeSync()
                gathered = true
                continue
            }
            try syncWrittenBytes()
        }
    }

    /// Waits, with `condition` unlocked meanwhile, until as many commits wait for a sync as the last
    /// sync covered, or until about one sync's time has passed.
    private func gatherCommitsBeforeSync() {
        state.startGathering()
        defer {
            state.stopGathering()
            condition.broadcast()
        }
        let patience = min(lastSyncNanoseconds, Self.longestGathering)
        let deadline = Date(timeIntervalSinceNow: Double(patience) / 1e9)
        while commitsSinceSyncStart < lastSyncBatch && poison == nil && !isClosed {
            guard condition.wait(until: deadline) else { return }
        }
    }

    /// The longest a sync waits for commits to join it: 2 ms.
    static let longestGathering: UInt64 = 2_000_000

    /// Syncs the active segment up to what is written. Called with `condition` locked and no sync running.
    ///
    /// After a roll, the sealed segment is synced first (``sealedPredecessor``): nothing in the new
    /// segment counts as durable before the end of the old one, its seal included, is.
    ///
    /// - Parameter fully: sync the active segment with `fsync` rather than `fdatasync` (a roll's sync,
    ///   which makes a new segment's header durable).
    func syncWrittenBytes(fully: Bool = false) throws {
        state.startSync()
        lastSyncBatch = commitsSinceSyncStart
        commitsSinceSyncStart = 0
        let descriptor = segment.descriptor
        let predecessor = sealedPredecessor
        let upTo = written
        // Every epoch committed so far ends at or before `upTo`.
        let committedThrough = lastCommittedInfo
        condition.unlock()
        var failure: (any Error)?
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            if let predecessor { try fileSystem.fullSync(predecessor) }
            if fully { try fileSystem.fullSync(descriptor) } else { try fileSystem.dataSync(descriptor) }
        } catch { failure = error }
        let duration = DispatchTime.now().uptimeNanoseconds &- started
        condition.lock()
        state.finishSync()
        lastSyncNanoseconds = duration
        defer { condition.broadcast() }
        if failure == nil, let predecessor, sealedPredecessor == predecessor {
            fileSystem.close(predecessor)
            sealedPredecessor = nil
        }
        if let failure {
            let system = failure as? SystemError
            let error = JournalError(
                .storePoisoned,
                "Syncing the journal to disk failed, so the commits after epoch \(lastDurableEpochDescription) "
                    + "may not be durable and were cut from the journal. The store refuses further commits; reopen "
                    + "it to continue from what reached the disk. "
                    + Self.advice(for: system?.errno),
                cause: system, file: store.file(FileNames.segment(segment.header.sequence)))
            poison(with: error)
            discardUndurableBytes()
            throw error
        }
        if upTo > synced { synced = upTo }
        if let committedThrough, committedThrough.epoch > (lastDurableInfo?.epoch ?? 0) {
            lastDurableInfo = committedThrough
        }
        releaseDurabilityWaiters(failure: nil)
    }

    /// Starts the background thread of ``Durability/interval(seconds:)``.
    /// After a failed sync, cuts the segments back to the last position known durable and syncs
    /// them. Called with `condition` locked, once the journal is poisoned.
    ///
    /// On Linux a failed writeback marks the pages it could not write clean: they stay readable from
    /// the page cache until evicted, and are gone after a remount. Left in the file, a reopened
    /// store would show epochs the disk does not hold, and new epochs would follow a hole that
    /// recovery stops at. Cutting them off drops those pages; the sync after the cut makes the new
    /// length durable. When the cut or its sync fails too, the device is failing: the error stays,
    /// and the next writer's open syncs the tail again before it appends (and fails if it cannot).
    func discardUndurableBytes() {
        let durable = synced
        var cuts: [(descriptor: Int32, length: Int64, name: String)] = []
        if durable.segment == segment.header.sequence {
            cuts.append((segment.descriptor, durable.offset, FileNames.segment(segment.header.sequence)))
        } else {
            // The last roll's seal and the new segment's header never became durable: the new
            // segment is emptied, and the sealed one cut back, so that recovery ends there.
            if let predecessor = sealedPredecessor {
                cuts.append((predecessor, durable.offset, FileNames.segment(durable.segment)))
            }
            cuts.append((segment.descriptor, 0, FileNames.segment(segment.header.sequence)))
        }
        for cut in cuts {
            do {
                try fileSystem.truncate(cut.descriptor, to: cut.length)
                try fileSystem.fullSync(cut.descriptor)
            } catch {
                logger.error(
                    "Cutting the journal back to its last durable position after a failed sync failed too",
                    metadata: ["file": "\(cut.name)", "offset": "\(cut.length)", "error": "\(error)"])
            }
        }
        if durable.segment == segment.header.sequence {
            segment.size = durable.offset
            segment.allocated = durable.offset
            committedSize = min(committedSize, durable.offset)
        }
        written = durable
    }

    private var lastDurableEpochDescription: String {
        lastDurableInfo.map { String($0.epoch) } ?? "none"
    }

    /// The interval of the background sync thread's syncs: that of ``Durability/interval(seconds:)``,
    /// at least a millisecond; `nil` under the other policies, which have no such thread.
    var syncInterval: Double? {
        if case .interval(let seconds) = options.durability { return max(seconds, 0.001) }
        return nil
    }

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
    ///
    /// A roll asked for meanwhile (``handRollToSyncThread()``) runs at once, and the wait goes on.
    private func intervalTick(_ seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            syncTimer.lock()
            while !syncTimerStopped && !rollWake && Date() < deadline { _ = syncTimer.wait(until: deadline) }
            let stopped = syncTimerStopped
            let roll = rollWake
            rollWake = false
            syncTimer.unlock()
            guard !stopped else { return false }
            guard roll else { break }
            performRequestedRoll()
        }
        condition.lock()
        defer { condition.unlock() }
        guard !isClosed else { return false }
        if poison == nil && !state.syncIsUnderWay && synced < written { try? syncWrittenBytes() }
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
