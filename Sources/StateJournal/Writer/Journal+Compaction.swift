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
    /// Writers are held up only while the current segment is sealed and a new one started; folding and
    /// writing the checkpoint happen while commits continue. The new manifest is the commit point: a
    /// crash at any step leaves a store that opens to the same state, and files deleted only after it
    /// is durable. Folding reads the journal, never the live objects.
    ///
    /// - Returns: the report, or `nil` when nothing was committed since the current checkpoint.
    /// - Throws: ``JournalError/Code/damaged`` when the journal to fold is damaged (nothing changes),
    ///   ``JournalError/Code/ioFailure``, or ``JournalError/Code/storePoisoned`` when the manifest could
    ///   not be made durable.
    @discardableResult
    public func compact() throws -> CompactionReport? {
        // Step 1, under the lock: the bounded pause. Seal the segment and reserve the checkpoint's number.
        condition.lock()
        while compacting && !isClosed { condition.wait() }
        do {
            try checkWritable()
        } catch {
            condition.unlock()
            throw error
        }
        guard let latest = lastCommittedInfo, latest.epoch > manifest.newestCheckpointEpoch else {
            condition.unlock()
            return nil
        }
        compacting = true
        // Sync what is written first, with the lock released during the sync (commits go on), so that
        // the fsync of the sealed segment inside the roll, which holds writers up, has little left to do.
        if poison == nil && !syncInProgress && synced < written { try? syncWrittenBytes() }
        while (epochOpen || rolling) && !isClosed { condition.wait() }
        let sequence: UInt64
        let snapshot: Manifest
        // The checkpoint is as of the last epoch of the segment being sealed, so that checkpoints always
        // fall on segment boundaries: read it only now, after waiting for the open epoch.
        let folded = lastCommittedInfo ?? latest
        do {
            try checkWritable()
            sequence = try rollSegment(reservingCheckpoint: true)!
            snapshot = manifest
        } catch {
            compacting = false
            condition.broadcast()
            condition.unlock()
            throw error
        }
        condition.unlock()
        defer {
            condition.lock()
            compacting = false
            condition.broadcast()
            condition.unlock()
        }

        // Step 2, without the lock: fold the sealed segments into a checkpoint.
        var sealed = snapshot
        sealed.segments.removeLast()
        let scan: ScanResult
        do {
            scan = try JournalScanner(
                fileSystem: fileSystem, directory: store.path, manifest: sealed,
                options: ScanOptions(through: folded.epoch, decode: true, recovery: .strict)
            ).run()
        } catch {
            throw Self.ioError(error, "read the journal to fold it into a checkpoint")
        }
        guard let epoch = scan.lastEpoch, epoch.epoch == folded.epoch else {
            throw JournalError(.damaged, "The journal to fold ends before epoch \(folded.epoch); nothing was compacted.")
        }
        let content = CheckpointContent(
            storeID: snapshot.storeID, sequence: sequence,
            info: .init(
                epoch: epoch.epoch, timestampMilliseconds: UInt64(max(0, epoch.timestamp.timeIntervalSince1970 * 1000).rounded()),
                entryCount: epoch.entryCount, bytes: epoch.bytes, metadata: epoch.metadata),
            entries: scan.state)
        let size: Int64
        do {
            size = try CheckpointFile.write(content, in: store)
        } catch {
            throw Self.ioError(error, "write the checkpoint \(FileNames.checkpoint(sequence))")
        }

        // Step 3, under the lock: the new manifest is the commit point.
        condition.lock()
        var next = manifest
        next.generation += 1
        next.checkpoints.append(
            Manifest.CheckpointReference(sequence: sequence, epoch: epoch.epoch, timestampMilliseconds: content.info.timestampMilliseconds))
        let dropped: (checkpoints: [UInt64], segments: [UInt64])
        do {
            dropped = try retire(from: &next, now: options.clock())
            try store.writeManifest(next)
        } catch {
            let failure = Self.ioError(error, "write the manifest naming the new checkpoint")
            if let system = error as? SystemError, system.call == "fsync" || system.call == "rename" { poison(with: failure) }
            condition.unlock()
            // The checkpoint stays: the manifest may have been renamed into place before the failure
            // (a failed directory sync), and then it names the checkpoint. When it does not, the next
            // open removes the checkpoint as a leftover.
            throw failure
        }
        manifest = next
        checkpointBytes = size
        bytesSinceCheckpoint = segment.size - Int64(SegmentHeader.size)
        condition.unlock()

        // Step 4: delete what retention let go; the durable manifest no longer names it.
        var removed: [String] = []
        for name in dropped.checkpoints.map(FileNames.checkpoint) + dropped.segments.map(FileNames.segment) {
            if (try? fileSystem.remove(store.file(name))) != nil { removed.append(name) }
        }
        if !removed.isEmpty { try? fileSystem.syncDirectory(store.path) }
        let report = CompactionReport(
            checkpointEpoch: epoch.epoch, checkpointFile: FileNames.checkpoint(sequence), checkpointBytes: size,
            liveEntries: content.entries.count, removedFiles: removed)
        metrics.compactions.increment()
        logCompaction(report)
        return report
    }

    /// Removes from `next` the generations the retention policy does not keep, and returns them.
    func retire(from next: inout Manifest, now: Date) throws -> (checkpoints: [UInt64], segments: [UInt64]) {
        let policy = options.retention
        let checkpoints = next.checkpoints
        guard !checkpoints.isEmpty else { return ([], []) }
        var keepFrom = max(0, checkpoints.count - policy.checkpoints)
        if let age = policy.maximumAge {
            let cutoff = UInt64(max(0, (now.timeIntervalSince1970 - age) * 1000))
            // The newest checkpoint at or before the cutoff covers every younger epoch.
            if let covering = checkpoints.lastIndex(where: { $0.timestampMilliseconds <= cutoff }) {
                keepFrom = min(keepFrom, covering)
            } else {
                return ([], [])
            }
        }
        var bases: [UInt64: UInt64] = [:]
        for sequence in next.segments { bases[sequence] = try store.segmentBase(sequence) }
        if let budget = policy.byteBudget {
            var segmentSizes: [UInt64: Int64] = [:]
            for sequence in next.segments { segmentSizes[sequence] = try store.fileSize(FileNames.segment(sequence)) }
            let checkpointSizes = try checkpoints.map { try store.fileSize(FileNames.checkpoint($0.sequence)) }
            // The bytes kept when history starts at checkpoint `index`.
            func retainedBytes(from index: Int) -> Int64 {
                checkpointSizes[index...].reduce(0, +)
                    + next.segments.filter { bases[$0]! >= checkpoints[index].epoch }.reduce(0) { $0 + segmentSizes[$1]! }
            }
            while keepFrom < checkpoints.count - 1 && retainedBytes(from: keepFrom) > budget { keepFrom += 1 }
        }
        let oldestKept = checkpoints[keepFrom].epoch
        let droppedCheckpoints = checkpoints[..<keepFrom].map(\.sequence)
        let droppedSegments = next.segments.filter { bases[$0]! < oldestKept }
        next.checkpoints.removeFirst(keepFrom)
        next.segments.removeAll { bases[$0]! < oldestKept }
        return (droppedCheckpoints, droppedSegments)
    }

    /// Starts a background compaction when the automatic policy says it is due. Called with
    /// `condition` locked.
    func startCompactionIfDue() {
        let policy = options.compaction
        guard policy.isAutomatic, !compacting, poison == nil, !isClosed,
            bytesSinceCheckpoint >= max(policy.minimumJournalBytes, Int64(policy.growthRatio * Double(checkpointBytes)))
        else { return }
        let thread = Thread { [weak self] in
            guard let journal = self else { return }
            do {
                try journal.compact()
            } catch {
                journal.logger.error(
                    "Background compaction failed; the journal keeps growing until one succeeds",
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
