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
    func syncWrittenBytes() throws {
        syncInProgress = true
        let descriptor = segment.descriptor
        let upTo = written
        condition.unlock()
        var failure: (any Error)?
        do { try fileSystem.dataSync(descriptor) } catch { failure = error }
        condition.lock()
        syncInProgress = false
        defer { condition.broadcast() }
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

    /// Seals the active segment and starts the next one. Called with `condition` locked, no epoch open.
    ///
    /// Order: seal record, fsync of the old segment, new segment with its header synced and its
    /// directory entry synced, then the manifest that names it. A crash before the manifest leaves a
    /// file no manifest names, which the next open removes.
    ///
    /// - Parameter reservingCheckpoint: also reserve a file sequence number for a checkpoint, and
    ///   return it; the manifest records the reservation so that the number is never used twice.
    @discardableResult
    func rollSegment(reservingCheckpoint: Bool = false) throws -> UInt64? {
        // Waiting for the sync unlocks `condition`: `rolling` keeps epochs from beginning meanwhile, so
        // that the segment is sealed after the epoch its caller saw last, and never under an open epoch.
        rolling = true
        defer {
            rolling = false
            condition.broadcast()
        }
        while syncInProgress { condition.wait() }
        let oldName = store.file(FileNames.segment(segment.header.sequence))
        let lastEpoch = lastCommittedInfo?.epoch ?? manifest.newestCheckpointEpoch
        var next = manifest
        let sequence = next.nextFileSequence
        next.nextFileSequence += reservingCheckpoint ? 2 : 1
        next.generation += 1
        next.segments.append(sequence)
        next.epochFloor = max(next.epochFloor, lastEpoch)
        let header = SegmentHeader(storeID: manifest.storeID, sequence: sequence, baseEpoch: lastEpoch)
        let descriptor: Int32
        do {
            if !segment.isSealed {
                let seal = RecordFraming.frame(.seal, payload: SealRecord(lastEpoch: lastEpoch, nextSegment: sequence).encoded())
                try fileSystem.writeAll(segment.descriptor, seal, at: segment.size)
                segment.size += Int64(seal.count)
                segment.isSealed = true
            }
            try fileSystem.fullSync(segment.descriptor)
            descriptor = try store.createSegment(header)
        } catch {
            let failure = Self.ioError(error, "start a new segment after \(oldName)")
            poison(with: failure)
            throw failure
        }
        do {
            try store.writeManifest(next)
        } catch {
            fileSystem.close(descriptor)
            let failure = Self.ioError(error, "write the manifest naming the new segment")
            poison(with: failure)
            throw failure
        }
        fileSystem.close(segment.descriptor)
        manifest = next
        segment = ActiveSegment(
            descriptor: descriptor, header: header, size: Int64(SegmentHeader.size), paths: [], lastMetadata: nil)
        committedSize = segment.size
        written = JournalPosition(segment: sequence, offset: segment.size)
        synced = written
        return reservingCheckpoint ? sequence + 1 : nil
    }
}
