import Foundation

/// What one compaction did.
public struct CompactionReport: Sendable, Hashable {
    /// The epoch the new checkpoint holds the state of.
    public var checkpointEpoch: UInt64
    /// The checkpoint's file name, relative to the store directory.
    public var checkpointFile: String
    /// The checkpoint's size on disk.
    public var checkpointBytes: Int64
    /// How many live paths the checkpoint holds.
    public var liveEntries: Int
    /// The checkpoints and segments that retention let go, deleted after the new manifest was durable.
    public var removedFiles: [String]
}

extension Journal {
    /// Folds the journal into a checkpoint of the state as of the latest committed epoch, then drops
    /// the history the retention policy does not keep.
    ///
    /// Writers are held up only while the current segment is sealed and a new one started, which
    /// writes two small records and waits for no sync; folding, writing the checkpoint and the
    /// manifest happen while commits continue. The new manifest is the commit point: a crash at any
    /// step leaves a store that opens to the same state, and files are deleted only after it is
    /// durable. Folding reads the journal, never the live objects.
    ///
    /// When nothing was committed since the newest checkpoint (written by ``checkpoint()``, or by
    /// the automatic checkpoints of a journal whose automatic compaction is off), there is nothing
    /// to fold: compaction then reads that checkpoint back whole and applies retention alone.
    ///
    /// - Returns: the report, or `nil` when there was nothing to fold and nothing to delete.
    /// - Throws: ``JournalError/Code/damaged`` when the journal to fold is damaged (nothing changes),
    ///   ``JournalError/Code/ioFailure`` when a file could not be written (the store keeps its
    ///   previous checkpoint), or ``JournalError/Code/storePoisoned`` when sealing the segment failed.
    @discardableResult
    public func compact() throws -> CompactionReport? {
        try compact(retention: options.retention, scheduled: false)
    }

    /// Writes a checkpoint of the state as of the latest committed epoch, and deletes no history.
    ///
    /// What the journal does by itself when automatic compaction is off (see
    /// ``CompactionPolicy/checkpointsAutomatically``): a restore then reads this checkpoint and
    /// replays only what comes after it, while every segment stays, so every epoch since the
    /// store's first (or since the oldest history an earlier compaction kept) stays readable. Of the
    /// older checkpoints, only the newest ``RetentionPolicy/checkpoints`` are kept; replay no longer
    /// needs the others. Writers are held up as briefly as by ``compact()``, and a crash at any step
    /// leaves a store that opens to the same state.
    ///
    /// - Returns: the report (whose ``CompactionReport/removedFiles`` are only checkpoints), or
    ///   `nil` when nothing was committed since the current checkpoint.
    /// - Throws: as ``compact()`` does.
    @discardableResult
    public func checkpoint() throws -> CompactionReport? {
        try compact(retention: Self.keepingHistory(options.retention), scheduled: false)
    }

    /// `retention`, deleting no segment: what ``checkpoint()`` applies.
    private static func keepingHistory(_ retention: RetentionPolicy) -> RetentionPolicy {
        var kept = retention
        kept.keepsAllHistory = true
        return kept
    }

    /// Folds the journal into a checkpoint, then drops the history `retention` does not keep.
    /// `scheduled` is set for the compaction a commit scheduled (see ``startCompactionIfDue()``),
    /// which does nothing once `close()` has cancelled it.
    private func compact(retention: RetentionPolicy, scheduled: Bool) throws -> CompactionReport? {
        // Step 1: roll to a new segment, reserving the checkpoint's number. Writers wait only while the
        // roll switches segments, which makes no system call that waits for the disk.
        condition.lock()
        if scheduled {
            guard state.compaction == .scheduled else {
                condition.unlock()
                return nil
            }
        } else {
            while state.compaction != .idle && !isClosed { condition.wait() }
        }
        do {
            try checkWritable()
        } catch {
            if scheduled { cancelScheduledCompaction() }
            condition.unlock()
            throw error
        }
        guard let latest = lastCommittedInfo, latest.epoch > manifest.newestCheckpointEpoch else {
            // Nothing to fold: the newest checkpoint is as of the latest epoch (written by
            // `checkpoint()`, or by automatic checkpoints). Retention may still have history to drop.
            guard !manifest.checkpoints.isEmpty else {
                if scheduled { cancelScheduledCompaction() }
                condition.unlock()
                return nil
            }
            state.startCompaction(scheduled: scheduled)
            condition.unlock()
            defer {
                condition.lock()
                state.finishCompaction()
                condition.broadcast()
                condition.unlock()
            }
            return try applyRetentionAlone(retention)
        }
        state.startCompaction(scheduled: scheduled)
        claimRoll()
        // Sync what is written first (commits go on meanwhile), so that the sync after the roll has
        // little left to do.
        if poison == nil && !state.syncIsUnderWay && synced < written { try? syncWrittenBytes() }
        condition.unlock()
        var installed = false
        defer {
            condition.lock()
            state.finishCompaction()
            // What was written while this one folded may already be due: the next starts now, not at
            // a commit that may never come (a writer that has paused).
            if installed { startCompactionIfDue() }
            condition.broadcast()
            condition.unlock()
        }
        // The checkpoint is as of the last epoch of the segment the roll seals, so that checkpoints
        // always fall on segment boundaries.
        let roll = try performClaimedRoll(reservingCheckpoint: true)
        let sequence = roll.checkpointSequence!
        let sealed = roll.sealed
        guard let folded = roll.sealedThrough else { return nil }

        // Step 2, without the lock and at a lower priority: fold the sealed segments into a checkpoint.
        let (epoch, content, size) = try LowPriorityWork.run { [fileSystem, store, sealed] in
            try Self.fold(sealed, through: folded.epoch, into: sequence, fileSystem: fileSystem, store: store)
        }

        // Step 3: the new manifest is the commit point. Until it is durable, the files retention let go
        // stay: a crash now opens to the same state, from the previous manifest (which leaves the
        // checkpoint a leftover) or from this one. Step 4: delete what retention let go.
        let reference = Manifest.CheckpointReference(
            sequence: sequence, epoch: epoch.epoch, timestampMilliseconds: content.info.timestampMilliseconds)
        let dropped = try planRetirement(of: readPosition().0, adding: reference, retention)
        let removed = try install(
            adding: (reference, size, roll.bytesSinceCheckpointAtSeal), dropping: dropped,
            naming: "the checkpoint \(FileNames.checkpoint(sequence))")
        installed = true
        checkedCheckpoints.record(content)
        return recorded(
            CompactionReport(
                checkpointEpoch: epoch.epoch, checkpointFile: FileNames.checkpoint(sequence), checkpointBytes: size,
                liveEntries: content.entries.count, removedFiles: removed))
    }

    /// Cancels the scheduled compaction and wakes whoever waits for compaction to be idle. Called
    /// with `condition` locked.
    private func cancelScheduledCompaction() {
        state.cancelScheduledCompaction()
        condition.broadcast()
    }

    /// Drops the history `retention` does not keep when there is nothing to fold, after checking
    /// that the newest checkpoint, which replay then starts from, reads back whole. Called with the
    /// compaction claimed.
    private func applyRetentionAlone(_ retention: RetentionPolicy) throws -> CompactionReport? {
        let current = readPosition().0
        let dropped = try planRetirement(of: current, adding: nil, retention)
        guard let newest = current.checkpoints.last(where: { !dropped.checkpoints.contains($0.sequence) }),
            !dropped.checkpoints.isEmpty || !dropped.segments.isEmpty
        else { return nil }
        let content: CheckpointContent
        let size: Int64
        do {
            content = try CheckpointFile.load(newest, storeID: current.storeID, in: store)
            size = try store.fileSize(FileNames.checkpoint(newest.sequence))
        } catch {
            throw Self.ioError(
                error, "read the checkpoint \(FileNames.checkpoint(newest.sequence)) before dropping older history")
        }
        let removed = try install(adding: nil, dropping: dropped, naming: "what retention keeps")
        return recorded(
            CompactionReport(
                checkpointEpoch: newest.epoch, checkpointFile: FileNames.checkpoint(newest.sequence),
                checkpointBytes: size, liveEntries: content.entries.count, removedFiles: removed))
    }

    /// The checkpoints and segments a compaction drops.
    typealias Retired = (checkpoints: [UInt64], segments: [UInt64])

    /// What `retention` does not keep of `current` with `checkpoint` added, reading the files' sizes
    /// and epochs before the lock is taken (segments rolled meanwhile are newer than anything it
    /// drops). ``install(adding:dropping:naming:)`` applies it to the manifest under the lock.
    private func planRetirement(
        of current: Manifest, adding checkpoint: Manifest.CheckpointReference?, _ retention: RetentionPolicy
    ) throws -> Retired {
        do {
            let hold = condition.withLock { heldHistory }
            return try retirement(of: current, adding: checkpoint, now: options.clock(), policy: retention, hold: hold)
        } catch {
            throw Self.ioError(error, "read the sizes and epochs of the files retention chooses from")
        }
    }

    /// Makes durable the manifest that names the new checkpoint, when one was written (with its
    /// size, and the count of bytes since the previous checkpoint that it folds), and no longer
    /// names `dropped`; then deletes `dropped` and returns the names deleted.
    private func install(
        adding checkpoint: (reference: Manifest.CheckpointReference, bytes: Int64, folded: Int64)?,
        dropping dropped: Retired, naming: String
    ) throws -> [String] {
        condition.lock()
        var next = manifest
        next.generation += 1
        if let checkpoint {
            next.checkpoints.append(checkpoint.reference)
            checkpointBytes = checkpoint.bytes
            // Everything written after the roll that sealed what the checkpoint folds stays counted:
            // every segment rolled meanwhile, not only the active one.
            bytesSinceCheckpoint = max(0, bytesSinceCheckpoint - checkpoint.folded)
        }
        next.checkpoints.removeAll { dropped.checkpoints.contains($0.sequence) }
        next.segments.removeAll { dropped.segments.contains($0) }
        manifest = next
        condition.unlock()
        try persistManifest(naming: naming)
        return removeRetired(dropped)
    }

    /// Counts and logs a compaction's report, and returns it.
    private func recorded(_ report: CompactionReport) -> CompactionReport {
        metrics.compactions.increment()
        logCompaction(report)
        return report
    }

    /// Deletes the files retention let go, which the durable manifest no longer names, and returns
    /// the names of those deleted.
    private func removeRetired(_ dropped: Retired) -> [String] {
        var removed: [String] = []
        for name in dropped.checkpoints.map(FileNames.checkpoint) + dropped.segments.map(FileNames.segment) {
            if (try? fileSystem.remove(store.file(name))) != nil { removed.append(name) }
        }
        if !removed.isEmpty { try? fileSystem.syncDirectory(store.path) }
        return removed
    }

    /// The generations of `current`, with `checkpoint` added, that the retention policy does not keep.
    ///
    /// Reads `current` and changes nothing in it: it is a snapshot that readers on other threads may
    /// hold, so a manifest built from it outside the lock could be written in place into storage they
    /// read, ordered only by reference counts (which ThreadSanitizer does not see). The new manifest
    /// is built under the lock, from the writer's (``install(adding:dropping:naming:)``).
    func retirement(
        of current: Manifest, adding checkpoint: Manifest.CheckpointReference?, now: Date, policy: RetentionPolicy,
        hold: UInt64? = nil
    ) throws -> Retired {
        var checkpoints: [Manifest.CheckpointReference] = []
        checkpoints.reserveCapacity(current.checkpoints.count + 1)
        checkpoints.append(contentsOf: current.checkpoints)
        if let checkpoint { checkpoints.append(checkpoint) }
        let segments = current.segments
        guard !checkpoints.isEmpty else { return ([], []) }
        // The format's limits come before any policy: a manifest naming more would not open.
        let formatFloor = max(0, checkpoints.count - Manifest.maximumCheckpoints)
        var keepFrom = max(formatFloor, checkpoints.count - policy.checkpoints)
        if policy.keepsAllHistory && segments.count <= Self.segmentsKeptAtMost {
            // Every segment stays, so replay reaches every epoch from the first without the older
            // checkpoints: they are only faster starting points, and the newest ones are kept.
            // A store whose older segments an earlier policy deleted keeps its oldest checkpoint,
            // where its history now starts.
            let first = try segmentsReachTheFirstEpoch(segments) ? 0 : min(1, keepFrom)
            return (checkpoints[first..<keepFrom].map(\.sequence).sorted(), [])
        }
        if let age = policy.maximumAge {
            let cutoff = UInt64(max(0, (now.timeIntervalSince1970 - age) * 1000))
            // The newest checkpoint at or before the cutoff covers every younger epoch.
            if let covering = checkpoints.lastIndex(where: { $0.timestampMilliseconds <= cutoff }) {
                keepFrom = min(keepFrom, covering)
            } else if formatFloor == 0 && segments.count <= Self.segmentsKeptAtMost {
                return ([], [])
            } else {
                keepFrom = formatFloor
            }
        }
        var bases: [UInt64: UInt64] = [:]
        for sequence in segments { bases[sequence] = try store.segmentBase(sequence) }
        if let budget = policy.byteBudget {
            var segmentSizes: [UInt64: Int64] = [:]
            for sequence in segments { segmentSizes[sequence] = try store.fileSize(FileNames.segment(sequence)) }
            let checkpointSizes = try checkpoints.map { try store.fileSize(FileNames.checkpoint($0.sequence)) }
            // The bytes kept when history starts at checkpoint `index`.
            func retainedBytes(from index: Int) -> Int64 {
                checkpointSizes[index...].reduce(0, +)
                    + segments.filter { bases[$0]! >= checkpoints[index].epoch }.reduce(0) {
                        $0 + segmentSizes[$1]!
                    }
            }
            while keepFrom < checkpoints.count - 1 && retainedBytes(from: keepFrom) > budget { keepFrom += 1 }
        }
        // A hold keeps the history from its epoch on: the newest checkpoint at or before it, and
        // the segments after that; without one, every segment, from the first epoch.
        if let hold {
            if let covering = checkpoints.lastIndex(where: { $0.epoch <= hold }) {
                keepFrom = min(keepFrom, covering)
            } else if formatFloor == 0 && segments.count <= Self.segmentsKeptAtMost {
                return ([], [])
            } else {
                keepFrom = formatFloor
            }
        }
        keepFrom = max(keepFrom, formatFloor)
        while keepFrom < checkpoints.count - 1,
            segments.count(where: { bases[$0]! >= checkpoints[keepFrom].epoch }) > Self.segmentsKeptAtMost
        {
            keepFrom += 1
        }
        let oldestKept = checkpoints[keepFrom].epoch
        let droppedCheckpoints = checkpoints[..<keepFrom].map(\.sequence)
        let droppedSegments = segments.filter { bases[$0]! < oldestKept }
        return (droppedCheckpoints, droppedSegments)
    }

    /// The most segments retention keeps, whatever the policy: below the format's limit on what a
    /// manifest names by room for the segments rolls add between compactions. Past it, the oldest
    /// history goes, even under ``RetentionPolicy/allHistory``, rather than the store stopping.
    static let segmentsKeptAtMost = Manifest.maximumSegments - 4096

    /// Whether the manifest's first segment starts at the store's first epoch, so that replay can
    /// reach any retained epoch without a checkpoint.
    private func segmentsReachTheFirstEpoch(_ segments: [UInt64]) throws -> Bool {
        guard let first = segments.first else { return false }
        return try store.segmentBase(first) == 0
    }

    /// Folds the segments `sealed` names into the state as of `epoch` and writes it as the checkpoint
    /// `sequence`: the part of a compaction that takes time, and needs nothing from the writer.
    private static func fold(
        _ sealed: Manifest, through epoch: UInt64, into sequence: UInt64, fileSystem: any FileSystem,
        store: StoreDirectory
    ) throws -> (EpochInfo, CheckpointContent, Int64) {
        let scan: ScanResult
        do {
            scan = try JournalScanner(
                fileSystem: fileSystem, directory: store.path, manifest: sealed,
                options: ScanOptions(through: epoch, decode: true, recovery: .strict)
            ).run()
        } catch {
            throw Self.ioError(error, "read the journal to fold it into a checkpoint")
        }
        guard let last = scan.lastEpoch, last.epoch == epoch else {
            throw JournalError(.damaged, "The journal to fold ends before epoch \(epoch); nothing was compacted.")
        }
        let content = CheckpointContent(
            storeID: sealed.storeID, sequence: sequence,
            info: .init(
                epoch: last.epoch,
                timestampMilliseconds: UInt64(max(0, last.timestamp.timeIntervalSince1970 * 1000).rounded()),
                entryCount: last.entryCount, bytes: last.bytes, metadata: last.metadata),
            entries: scan.state)
        do {
            return (last, content, try CheckpointFile.write(content, in: store))
        } catch {
            throw Self.ioError(error, "write the checkpoint \(FileNames.checkpoint(sequence))")
        }
    }

    /// Waits until no compaction is scheduled or running: what a benchmark does, untimed, so that a
    /// background compaction does not run beside what it times next.
    package func waitForCompactions() {
        condition.lock()
        while state.compaction != .idle && !isClosed { condition.wait() }
        condition.unlock()
    }

    /// Starts a background compaction, or a checkpoint alone when automatic compaction is off, when
    /// the policy says one is due. Called with `condition` locked.
    func startCompactionIfDue() {
        let policy = options.compaction
        guard policy.startsAnything, state.compaction == .idle, poison == nil, !isClosed,
            bytesSinceCheckpoint >= max(policy.minimumJournalBytes, Int64(policy.growthRatio * Double(checkpointBytes)))
        else { return }
        // Until the thread begins, later commits must not start another.
        state.scheduleCompaction()
        let retention = policy.isAutomatic ? options.retention : Self.keepingHistory(options.retention)
        let thread = Thread { [weak self] in
            guard let journal = self else { return }
            do {
                try journal.compact(retention: retention, scheduled: true)
            } catch {
                let work = policy.isAutomatic ? "compaction" : "checkpoint"
                journal.logger.error(
                    "A background \(work) failed; what a restore replays keeps growing until one succeeds",
                    metadata: ["error": "\(error)"])
                journal.condition.lock()
                journal.lastCompactionFailure = error as? JournalError
                journal.condition.unlock()
            }
        }
        thread.name = "StateJournal.compaction"
        thread.start()
    }
}
