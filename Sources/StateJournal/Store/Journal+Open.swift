import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Journal {
    /// Opens the store in `directory` for writing, creating it when the directory is missing or empty.
    ///
    /// Only the store's own directory is created: its parent must exist.
    ///
    /// Opening takes the store's lock, removes files a crash left unnamed by the manifest, replays
    /// the journal to its latest consistent epoch (``recoveredState``), cuts off a torn tail, and in
    /// ``RecoveryMode/stopAtDamage`` mode moves damaged bytes aside so that new epochs follow the
    /// last consistent one. ``recoveryReport`` says what was done.
    ///
    /// - Throws: ``JournalError`` with code ``JournalError/Code/storeLocked`` when another writer has
    ///   the store open, ``JournalError/Code/notAStore`` when the directory holds other files,
    ///   ``JournalError/Code/damaged`` in strict mode when the journal is damaged,
    ///   ``JournalError/Code/unsupportedFormat`` or ``JournalError/Code/ioFailure``.
    public static func open(at directory: URL, options: JournalOptions = JournalOptions()) throws -> Journal {
        try open(path: directory.path, options: options, fileSystem: PosixFileSystem())
    }

    /// Opens a store through a given file system: the seam tests use to inject faults.
    package static func open(path: String, options: JournalOptions, fileSystem: any FileSystem) throws -> Journal {
        let journal = try openStore(path: path, options: options, fileSystem: fileSystem, creating: true)
        if let interval = journal.syncInterval { journal.startIntervalSync(every: interval) }
        return journal
    }

    /// Takes the lock and replays the store: what ``open(path:options:fileSystem:)`` and
    /// ``reopen()`` share. Starts no background thread.
    ///
    /// - Parameter creating: Whether a missing or empty directory becomes a new store; without it,
    ///   it is an ``JournalError/Code/ioFailure`` with `ENOENT` (a directory removed or not mounted
    ///   yet, which may come back).
    static func openStore(path: String, options: JournalOptions, fileSystem: any FileSystem, creating: Bool) throws
        -> Journal
    {
        let store = StoreDirectory(fileSystem: fileSystem, path: path)
        do {
            let names = try store.names()
            if !creating && !(names ?? []).contains(FileNames.manifest) {
                throw SystemError(call: "open", errno: ENOENT, path: store.file(FileNames.manifest))
            }
            if names == nil { try makeStoreDirectory(path, fileSystem: fileSystem) }
            let lock = try StoreLock.acquire(in: store)
            do {
                return try openLocked(store: store, lock: lock, options: options)
            } catch {
                lock.release(fileSystem)
                throw error
            }
        } catch {
            throw ioError(error, "open the store at \(path)")
        }
    }

    private static func openLocked(store: StoreDirectory, lock: StoreLock, options: JournalOptions) throws -> Journal {
        let fileSystem = store.fileSystem
        let names = try store.names() ?? []
        if !names.contains(FileNames.manifest) {
            try createStore(store, names: names, id: options.newStoreID.map { StoreID(bytes: $0()) } ?? .random())
        }
        let stored = try store.readStoredManifest()
        var manifest = try store.followingSealedSegments(of: stored)
        var report = RecoveryReport()
        let present = try store.names() ?? []
        // A file name is never used twice, not even the name of a leftover.
        if let highest = present.compactMap({ FileNames.segmentSequence($0) ?? FileNames.checkpointSequence($0) }).max()
        {
            manifest.nextFileSequence = max(manifest.nextFileSequence, highest + 1)
        }
        let unsyncedLeftovers: [(name: String, bytes: Int64, commits: Int)]
        (report.removedLeftovers, report.quarantinedFiles, unsyncedLeftovers) = try store.removeLeftovers(
            keeping: manifest, names: present)

        let replayStart = JournalMetrics.now()
        let checked = CheckedCheckpoints()
        let scan = try JournalScanner(
            fileSystem: fileSystem, directory: store.path, manifest: manifest,
            options: ScanOptions(decode: true, recovery: options.recovery, checkedCheckpoints: checked)
        ).run()
        let replayNanoseconds = JournalMetrics.now() &- replayStart
        var tail = scan.tail
        if manifest.chainedSegments > 0 {
            report.truncatedTailBytes = try adoptChainedSegments(&manifest, scan: scan, store: store)
        }
        report.unsyncedTail = scan.unsyncedTail
        for leftover in unsyncedLeftovers {
            report.unsyncedTail =
                report.unsyncedTail.map {
                    var merged = $0
                    merged.bytesDropped += leftover.bytes
                    merged.epochsDropped += leftover.commits
                    return merged
                }
                ?? UnsyncedTail(
                    file: leftover.name, offset: 0, reason: "a segment whose seal did not reach the disk",
                    bytesDropped: leftover.bytes, epochsDropped: leftover.commits,
                    lastConsistentEpoch: scan.lastEpoch?.epoch)
        }
        if !scan.damagedCheckpoints.isEmpty {
            let setAside: [String]
            (manifest, setAside) = try setAsideCheckpoints(
                scan.damagedCheckpoints.map(\.reference), manifest: manifest, store: store)
            report.quarantinedFiles += setAside
            report.damagedCheckpoints = scan.damagedCheckpoints.map(\.report)
        }
        if let damage = scan.damagePosition {
            report.damage = scan.damage
            var quarantined: [String]
            (manifest, tail, quarantined) = try setAside(
                damage, tail: tail, manifest: manifest, scan: scan, store: store)
            report.quarantinedFiles += quarantined
        }

        let segment: ActiveSegment
        if let tail {
            let sequence = manifest.segments[tail.segmentIndex]
            let descriptor = try fileSystem.open(store.file(FileNames.segment(sequence)), .readWrite)
            let size = try fileSystem.size(descriptor)
            // Zeros a writer wrote ahead of its records are cut without being reported as a tail.
            var tailReader = FileWindowReader(fileSystem: fileSystem, descriptor: descriptor, limit: size)
            let torn = size > tail.committedEnd ? try tailReader.lengthBeforeTrailingZeros(from: tail.committedEnd) : 0
            // New epochs follow only bytes this writer made durable itself: a previous process may
            // have died before syncing them, or after a failed sync whose pages the kernel dropped
            // while still showing them to readers. A sync that fails here fails the open.
            do {
                if size > tail.committedEnd { try fileSystem.truncate(descriptor, to: tail.committedEnd) }
                try fileSystem.fullSync(descriptor)
            } catch {
                fileSystem.close(descriptor)
                throw error
            }
            if torn > 0 { report.truncatedTailBytes = torn }
            var active = ActiveSegment(
                descriptor: descriptor, header: tail.header, size: tail.committedEnd,
                paths: tail.segmentPaths?.restorationPaths ?? [],
                lastMetadata: tail.lastMetadata)
            active.isSealed = tail.sealed
            active.lastTimestamp = tail.lastTimestamp
            active.previousCommit = tail.previousCommit
            segment = active
        } else {
            (manifest, segment) = try startFreshSegment(
                store: store, manifest: manifest, baseEpoch: scan.lastEpoch?.epoch ?? manifest.newestCheckpointEpoch)
        }

        let recovered = JournalState(
            epoch: scan.lastEpoch, table: scan.state, damage: scan.damage,
            uncommittedTailBytes: scan.uncommittedTailBytes,
            unsyncedTail: report.unsyncedTail)
        let next =
            max(scan.lastEpoch?.epoch ?? 0, manifest.epochFloor, scan.highestEpochSeen, manifest.newestCheckpointEpoch)
            + 1
        let journal = Journal(
            directory: store.path, options: options, fileSystem: fileSystem, manifest: manifest, segment: segment,
            lock: lock, recovered: recovered, report: report, nextEpoch: next, checkedCheckpoints: checked)
        do {
            journal.heldHistory = try store.readHistoryHold()
            journal.checkpointBytes =
                try manifest.checkpoints.last.map { try store.fileSize(FileNames.checkpoint($0.sequence)) } ?? 0
            for sequence in manifest.segments where try store.segmentBase(sequence) >= manifest.newestCheckpointEpoch {
                journal.bytesSinceCheckpoint +=
                    try store.fileSize(FileNames.segment(sequence)) - Int64(SegmentHeader.size)
            }
            // A segment of an older format version is sealed, and the journal goes on in a new one.
            if segment.isSealed || segment.header.version < FormatVersion.current {
                journal.condition.lock()
                journal.claimRoll()
                journal.condition.unlock()
                _ = try journal.performClaimedRoll(reservingCheckpoint: false)
            }
        } catch {
            // `open` releases the lock when this throws; the journal, going away, must not close it again.
            journal.condition.lock()
            journal.lock = nil
            journal.condition.unlock()
            throw error
        }
        journal.metrics.replayDuration.recordNanoseconds(replayNanoseconds)
        journal.logRecovery()
        return journal
    }

    /// Names in the manifest the segments a writer rolled to after its last manifest, found through
    /// the chain of seals, as far as the journal keeps them; returns the bytes cut off the segment
    /// it continues, when an unsynced tail ends the journal before the end of the chain.
    ///
    /// The writer that rolled may have stopped before syncing them, so they are synced first. When
    /// the journal ends in an unsynced tail, the segments after it held nothing durable: the
    /// segment that ends the journal is cut first (dropping the seal that led to them, and synced),
    /// then the manifest is written, then they are removed. A crash between these steps leaves
    /// segments that no seal leads to and no sync reached, which the next open removes.
    private static func adoptChainedSegments(
        _ manifest: inout Manifest, scan: ScanResult, store: StoreDirectory
    ) throws -> Int64 {
        let fileSystem = store.fileSystem
        var kept = manifest.segments.count - 1
        var cut: Int64 = 0
        if scan.damagePosition == nil, scan.unsyncedTail != nil, let tail = scan.tail, tail.segmentIndex < kept {
            kept = tail.segmentIndex
            let descriptor = try fileSystem.open(store.file(FileNames.segment(manifest.segments[kept])), .readWrite)
            defer { fileSystem.close(descriptor) }
            let size = try fileSystem.size(descriptor)
            if size > tail.committedEnd {
                try fileSystem.truncate(descriptor, to: tail.committedEnd)
                cut = size - tail.committedEnd
            }
            try fileSystem.fullSync(descriptor)
        }
        let firstChained = manifest.segments.count - manifest.chainedSegments
        for sequence in manifest.segments[(firstChained - 1)...kept] {
            let descriptor = try fileSystem.open(store.file(FileNames.segment(sequence)), .read)
            defer { fileSystem.close(descriptor) }
            try fileSystem.fullSync(descriptor)
        }
        let dropped = manifest.segments[(kept + 1)...]
        manifest.segments = Array(manifest.segments[...kept])
        manifest.chainedSegments = 0
        manifest.generation += 1
        try store.writeManifest(manifest)
        for sequence in dropped { try fileSystem.remove(store.file(FileNames.segment(sequence))) }
        if !dropped.isEmpty { try fileSystem.syncDirectory(store.path) }
        return cut
    }

    /// Writes the first segment and the first manifest of a new store.
    private static func createStore(_ store: StoreDirectory, names: [String], id: StoreID) throws {
        let foreign = names.filter { !StoreDirectory.isStoreFile($0) }
        guard foreign.isEmpty else {
            throw JournalError(
                .notAStore,
                """
                \(store.path) is not a StateJournal store and is not empty (it holds \
                \(foreign.prefix(3).joined(separator: ", "))). Choose an empty or new directory.
                """,
                file: store.path)
        }
        // A crash while creating the store can leave its first files without a manifest.
        for name in names where name != FileNames.lock { try store.fileSystem.remove(store.file(name)) }
        let descriptor = try store.createSegment(SegmentHeader(storeID: id, sequence: 1, baseEpoch: 0))
        store.fileSystem.close(descriptor)
        try store.writeManifest(
            Manifest(storeID: id, generation: 1, nextFileSequence: 2, epochFloor: 0, checkpoints: [], segments: [1]))
        // The store's own entry in its parent, whoever made the directory: without it a power cut
        // could lose the whole store after its first durable commit.
        try store.fileSystem.syncDirectory(StoreDirectory.parent(of: store.path))
    }

    /// Creates the store's directory, or accepts the one another process created at the same moment
    /// (the lock taken next decides who writes), and makes its entry durable in the parent directory.
    private static func makeStoreDirectory(_ path: String, fileSystem: any FileSystem) throws {
        do {
            try fileSystem.makeDirectory(path)
        } catch let error as SystemError where error.errno == EEXIST {
            return
        } catch let error as SystemError where error.errno == ENOENT {
            let parent = StoreDirectory.parent(of: path)
            throw JournalError(
                .ioFailure,
                """
                Could not create the store \(path): its parent directory \(parent) does not exist. A store creates \
                only its own directory: create \(parent) first (as the app's installation would), then open the store \
                again.
                """,
                cause: error, file: parent)
        }
        try fileSystem.syncDirectory(StoreDirectory.parent(of: path))
    }

    private static func startFreshSegment(store: StoreDirectory, manifest: Manifest, baseEpoch: UInt64) throws -> (
        Manifest, ActiveSegment
    ) {
        var next = manifest
        let sequence = next.nextFileSequence
        next.nextFileSequence += 1
        next.generation += 1
        next.segments.append(sequence)
        let header = SegmentHeader(storeID: manifest.storeID, sequence: sequence, baseEpoch: baseEpoch)
        let descriptor = try store.createSegment(header)
        do {
            try store.writeManifest(next)
        } catch {
            store.fileSystem.close(descriptor)
            throw error
        }
        return (
            next,
            ActiveSegment(
                descriptor: descriptor, header: header, size: Int64(SegmentHeader.size), paths: [], lastMetadata: nil)
        )
    }

    /// Moves damaged bytes and the segments after them aside, so that writing continues from the
    /// last consistent epoch without destroying the evidence.
    ///
    /// Order, so that a crash at any step opens to the same state: raise the manifest's epoch floor
    /// past every epoch seen (so lost numbers are never used again), copy the damaged bytes out
    /// (synced), move later segments aside, write the manifest without them, then cut the damaged
    /// segment.
    private static func setAside(
        _ damage: DamagePosition, tail: TailPosition?, manifest: Manifest, scan: ScanResult, store: StoreDirectory
    ) throws -> (Manifest, TailPosition?, [String]) {
        let fileSystem = store.fileSystem
        var quarantined: [String] = []
        var next = manifest
        // Raise the epoch floor first: once files are moved aside, the epochs in them are no longer
        // seen, and a crash before the final manifest must not let their numbers be used again.
        if scan.highestEpochSeen > next.epochFloor {
            next.epochFloor = scan.highestEpochSeen
            next.generation += 1
            try store.writeManifest(next)
        }
        let damagedSequence = manifest.segments[damage.segmentIndex]
        var keptTail = tail
        if let tail, tail.segmentIndex == damage.segmentIndex {
            let name = FileNames.quarantine(damagedSequence, offset: tail.committedEnd)
            let source = try fileSystem.open(store.file(FileNames.segment(damagedSequence)), .read)
            defer { fileSystem.close(source) }
            let size = try fileSystem.size(source)
            let target = try fileSystem.open(store.file(name), .createOrOpen)
            defer { fileSystem.close(target) }
            try fileSystem.truncate(target, to: 0)
            var offset = tail.committedEnd
            while offset < size {
                let chunk = try fileSystem.read(source, count: Int(min(Int64(1 << 20), size - offset)), at: offset)
                guard !chunk.isEmpty else { break }
                try fileSystem.writeAll(target, chunk, at: offset - tail.committedEnd)
                offset += Int64(chunk.count)
            }
            try fileSystem.fullSync(target)
            quarantined.append(name)
            next.segments = Array(manifest.segments[...damage.segmentIndex])
        } else {
            keptTail = nil
            let name = FileNames.quarantine(damagedSequence, offset: 0)
            try moveAside(FileNames.segment(damagedSequence), to: name, store: store)
            quarantined.append(name)
            next.segments = Array(manifest.segments[..<damage.segmentIndex])
        }
        for later in manifest.segments.dropFirst(damage.segmentIndex + 1) {
            let name = FileNames.quarantine(later, offset: 0)
            try moveAside(FileNames.segment(later), to: name, store: store)
            quarantined.append(name)
        }
        try fileSystem.syncDirectory(store.path)
        next.generation += 1
        next.epochFloor = max(next.epochFloor, scan.highestEpochSeen)
        if next.segments.isEmpty {
            let (withSegment, fresh) = try startFreshSegment(
                store: store, manifest: next, baseEpoch: scan.lastEpoch?.epoch ?? manifest.newestCheckpointEpoch)
            fileSystem.close(fresh.descriptor)
            next = withSegment
            keptTail = TailPosition(
                segmentIndex: 0, header: fresh.header, committedEnd: fresh.size, fileSize: fresh.size, sealed: false,
                segmentPaths: nil, lastMetadata: nil)
        } else {
            try store.writeManifest(next)
        }
        return (next, keptTail, quarantined)
    }

    /// Moves damaged checkpoints aside and drops them from the manifest, once replay fell back past them.
    private static func setAsideCheckpoints(
        _ damaged: [Manifest.CheckpointReference], manifest: Manifest, store: StoreDirectory
    ) throws -> (Manifest, [String]) {
        var next = manifest
        var quarantined: [String] = []
        for checkpoint in damaged {
            let name = "damaged-" + FileNames.checkpoint(checkpoint.sequence)
            try moveAside(FileNames.checkpoint(checkpoint.sequence), to: name, store: store)
            quarantined.append(name)
            next.checkpoints.removeAll { $0 == checkpoint }
        }
        next.generation += 1
        try store.fileSystem.syncDirectory(store.path)
        try store.writeManifest(next)
        return (next, quarantined)
    }

    private static func moveAside(_ name: String, to target: String, store: StoreDirectory) throws {
        do {
            try store.fileSystem.rename(store.file(name), to: store.file(target))
        } catch let error as SystemError where error.errno == ENOENT {
            return
        }
    }
}
