import Foundation

/// What a roll to a new segment did.
struct SegmentRoll {
    /// The last epoch committed before the seal: the sealed segment's last, the new segment's base.
    var sealedThrough: EpochInfo?
    /// A file sequence number reserved for a checkpoint, when the roll was asked for one.
    var checkpointSequence: UInt64?
    /// The manifest as of the switch without the new segment: the segments the roll sealed, which a
    /// compaction folds. Built under the lock and never changed, so that nothing outside the lock
    /// writes into manifest storage that readers on other threads may hold.
    var sealed: Manifest
    /// The journal's count of bytes written since the current checkpoint as of the switch: what the
    /// sealed segments hold of it. A checkpoint folded from them leaves the rest counted (see
    /// ``Journal/bytesSinceCheckpoint``).
    var bytesSinceCheckpointAtSeal: Int64
}

extension Journal {
    /// Takes the right to roll to a new segment, waiting while another roll is under way. Called
    /// with `condition` locked.
    func claimRoll() {
        while state.roll != .none && !isClosed { condition.wait() }
        state.claimRoll()
    }

    /// Seals the active segment and continues in a new one. Called with the roll claimed
    /// (``claimRoll()``) and `condition` unlocked; releases the claim.
    ///
    /// Three steps, of which only the second holds writers up, and it makes no system call that
    /// waits for the disk:
    /// 1. Create the next segment file, empty, and sync the directory, so that its name is durable.
    /// 2. Under the lock, once the open epoch is committed: write the new segment's header, then a
    ///    seal record at the end of the current segment naming the new one, and switch to it.
    /// 3. Sync the sealed segment and the new one, then write the manifest naming the new segment.
    ///
    /// Between steps 2 and 3 the manifest does not name the new segment, and readers and the next
    /// open find it by following the seal (``StoreDirectory/followingSealedSegments(of:)``). Nothing
    /// committed in the new segment counts as durable before the sealed segment is synced
    /// (``syncWrittenBytes()``). A crash after step 1 leaves an empty file no seal names, which the
    /// next open removes.
    ///
    /// - Parameters:
    ///   - reservingCheckpoint: also reserve a file sequence number for a checkpoint.
    ///   - syncingEvery: for the sync thread's roll, the interval of its syncs: while step 2 waits
    ///     for an open epoch, it syncs what is written every interval, as it would have otherwise.
    /// - Throws: ``JournalError/Code/ioFailure`` when the new segment cannot be created (nothing
    ///   changed), or when the sealed segment or the manifest could not be written; a failed write
    ///   or sync of the segments poisons the journal.
    func performClaimedRoll(reservingCheckpoint: Bool, syncingEvery interval: Double? = nil) throws -> SegmentRoll {
        defer {
            condition.lock()
            state.releaseRoll()
            // A thread woken to begin an epoch may have rolled, failed and thrown before the switch,
            // which wakes the others: they look again, rather than sleep with no epoch open.
            wakeEpochWaiters(all: true)
            condition.broadcast()
            condition.unlock()
        }
        // Only rolls take file sequence numbers, and the claim keeps rolls one at a time.
        condition.lock()
        let sequence = manifest.nextFileSequence
        let storeID = manifest.storeID
        do {
            try checkWritable()
        } catch {
            condition.unlock()
            throw error
        }
        condition.unlock()
        let name = FileNames.segment(sequence)
        let descriptor: Int32
        do {
            descriptor = try store.createEmptySegment(sequence)
        } catch {
            throw Self.ioError(error, "create the segment \(name)")
        }
        // The new segment's tables grow a part at a time as it defines paths: none needs sizing.
        let next = ActiveSegment(
            descriptor: descriptor, header: SegmentHeader(storeID: storeID, sequence: sequence, baseEpoch: 0),
            size: Int64(SegmentHeader.size), paths: [], lastMetadata: nil)

        condition.lock()
        let roll: SegmentRoll
        let sealedSegment: ActiveSegment
        do {
            (roll, sealedSegment) = try switchSegment(
                to: next, reservingCheckpoint: reservingCheckpoint, syncingEvery: interval)
        } catch {
            condition.unlock()
            throw error
        }
        condition.unlock()
        // The sealed segment's path tables can hold a path per object of the app; freeing them takes
        // milliseconds (5 to 15 ms for 141,000 paths), which the commit that rolled must not wait
        // for: a background queue frees them.
        SealedTables.free(consume sealedSegment)

        try persistManifest(naming: "the segment \(name)")
        return roll
    }

    /// Step 2 of a roll. Called with `condition` locked; waits for the open epoch to be committed.
    ///
    /// - Returns: what the roll did, and the sealed segment's tables, for the caller to free after
    ///   unlocking.
    private func switchSegment(
        to fresh: ActiveSegment, reservingCheckpoint: Bool, syncingEvery interval: Double?
    ) throws -> (SegmentRoll, ActiveSegment) {
        let descriptor = fresh.descriptor
        let sequence = fresh.header.sequence
        let name = FileNames.segment(sequence)
        state.startSwitchingSegments()
        defer {
            state.finishSwitchingSegments()
            wakeEpochWaiters(all: true)
            condition.broadcast()
        }
        func abandon() {
            fileSystem.close(descriptor)
            try? fileSystem.remove(store.file(name))
        }
        do {
            var nextSync = interval.map { Date(timeIntervalSinceNow: $0) }
            while state.epoch != .none && !isClosed {
                guard let interval, let deadline = nextSync else {
                    condition.wait()
                    continue
                }
                // The sync thread waits here: an epoch held open for long must not hold up its syncs.
                if !condition.wait(until: deadline) {
                    if poison == nil && !state.syncIsUnderWay && synced < written { try? syncWrittenBytes() }
                    nextSync = Date(timeIntervalSinceNow: interval)
                }
            }
            try checkWritable()
            // The previous roll's sealed segment is synced by the time that roll ends; only a failure
            // (which poisons the journal) leaves it pending, so this does nothing in practice.
            try syncSealedPredecessor()
        } catch {
            abandon()
            throw error
        }
        let sealedThrough = lastCommittedInfo
        let lastEpoch = sealedThrough?.epoch ?? manifest.newestCheckpointEpoch
        let header = SegmentHeader(storeID: manifest.storeID, sequence: sequence, baseEpoch: lastEpoch)
        do {
            try fileSystem.writeAll(descriptor, header.encoded(), at: 0)
        } catch {
            abandon()
            throw Self.ioError(error, "start the segment \(name)")
        }
        if !segment.isSealed {
            let seal = RecordFraming.frame(
                .seal, payload: SealRecord(lastEpoch: lastEpoch, nextSegment: sequence).encoded(),
                version: segment.header.version)
            do {
                try fileSystem.writeAll(segment.descriptor, seal, at: segment.size)
            } catch {
                // A part of the seal may be in the file: the segment's end is no longer known.
                let failure = Self.ioError(error, "seal \(FileNames.segment(segment.header.sequence))")
                poison(with: failure)
                abandon()
                throw failure
            }
            segment.size += Int64(seal.count)
            segment.isSealed = true
        }
        do {
            // A sealed segment ends with its seal: the zeros written ahead of it go before its sync.
            try cutPreallocation(of: &segment)
        } catch {
            let failure = Self.ioError(error, "cut \(FileNames.segment(segment.header.sequence)) to its seal")
            poison(with: failure)
            abandon()
            throw failure
        }
        var next = manifest
        next.nextFileSequence = sequence + (reservingCheckpoint ? 2 : 1)
        next.generation += 1
        next.epochFloor = max(next.epochFloor, lastEpoch)
        let sealed = next
        next.segments.append(sequence)
        manifest = next
        // A segment was started: the sync thread rolls the next one again.
        backgroundRoll = .idle
        sealedPredecessor = segment.descriptor
        let sealedSegment = segment
        segment = fresh
        segment.header = header
        committedSize = segment.size
        // `synced` stays behind `written`: neither the seal nor the new header is durable yet.
        written = JournalPosition(segment: sequence, offset: segment.size)
        return (
            SegmentRoll(
                sealedThrough: sealedThrough, checkpointSequence: reservingCheckpoint ? sequence + 1 : nil,
                sealed: sealed, bytesSinceCheckpointAtSeal: bytesSinceCheckpoint), sealedSegment
        )
    }

    /// Makes the manifest in memory durable, unless one as new already is. Called with `condition`
    /// unlocked; manifest writes run one at a time, and never hold writers up.
    ///
    /// A segment a roll sealed is synced first, with the new segment's header, so that a durable
    /// manifest never names a segment whose predecessor may still lose its end.
    ///
    /// A failed manifest write does not poison the journal: the manifest on disk, with the seals
    /// after it, still describes the store, and the next change writes the manifest again.
    ///
    /// - Parameter naming: what the new manifest names, for the error message.
    func persistManifest(naming: String) throws {
        manifestWriter.lock()
        defer { manifestWriter.unlock() }
        condition.lock()
        let current: Manifest
        do {
            try syncSealedPredecessor()
            if let poison { throw poison }
            current = manifest
        } catch {
            condition.unlock()
            throw error
        }
        condition.unlock()
        guard current.generation > durableGeneration else { return }
        do {
            try store.writeManifest(current)
        } catch {
            throw Self.ioError(error, "write the manifest naming \(naming)")
        }
        durableGeneration = current.generation
    }

    /// Waits until the segment the last roll sealed is synced, with the new segment's header,
    /// syncing it when no other thread is. Called with `condition` locked; throws once the journal is
    /// poisoned.
    private func syncSealedPredecessor() throws {
        while sealedPredecessor != nil {
            if let poison { throw poison }
            if state.syncIsUnderWay { condition.wait() } else { try syncWrittenBytes(fully: true) }
        }
    }
}

/// Frees a sealed segment's tables away from the thread that rolled.
private enum SealedTables {
    /// Holds the tables until the queue lets go of them; nothing reads them.
    private final class Holder: @unchecked Sendable {
        var segment: ActiveSegment?
        init(_ segment: ActiveSegment) { self.segment = segment }
    }

    static func free(_ segment: consuming ActiveSegment) {
        let holder = Holder(segment)
        DispatchQueue.global(qos: .utility).async { holder.segment = nil }
    }
}
