import Foundation
import Logging

/// A store opened for writing: the one writer of a journal of epochs.
///
/// Open it with ``open(at:options:)``, write an epoch with ``beginEpoch()`` and
/// ``EpochWriter/commit(metadata:)``, read the state back with ``state(through:)``, and call
/// ``close()`` when done. Only one writer can have a store open at a time, in any process; readers
/// use ``JournalReader`` beside it.
///
/// `Journal` is safe to use from several threads. Epochs are written one at a time:
/// ``beginEpoch()`` waits while another thread's epoch is open. Under ``Durability/everyCommit``,
/// commits from several threads share one `fdatasync` (group commit).
public final class Journal: @unchecked Sendable {
    // @unchecked Sendable: every mutable property below is read and written with `condition` locked.
    // The properties a commit touches are exempt from dynamic exclusivity checks (`@exclusivity(unchecked)`):
    // the lock already makes each access exclusive, and the checks cost a one-entry commit a fifth of its time.

    /// The store directory.
    public let directory: URL
    /// The options the journal was opened with.
    public let options: JournalOptions
    /// What opening found and repaired (the first open: ``reopen()`` returns its own report).
    public let recoveryReport: RecoveryReport
    /// The state as of the latest consistent epoch when the journal was opened (first opened, not
    /// reopened).
    public let recoveredState: JournalState

    let fileSystem: any FileSystem
    let store: StoreDirectory
    /// ``JournalOptions/logger`` with the store directory in its metadata.
    let logger: Logger
    let metrics: JournalMetrics
    let condition = NSCondition()
    /// What the interval sync thread waits on between syncs; guards ``syncTimerStopped``.
    let syncTimer = NSCondition()
    var syncTimerStopped = false
    /// Set, with ``syncTimer`` locked, to wake the sync thread for a roll (``handRollToSyncThread()``).
    var rollWake = false
    /// Whether the sync thread was asked to roll, or its last roll failed.
    var backgroundRoll = BackgroundRollRequest.idle
    let compressor = LZ4Compressor()
    /// Lent to the open epoch; see ``EpochBuffers``.
    let epochBuffers = EpochBuffers()
    var manifest: Manifest
    @exclusivity(unchecked) var segment: ActiveSegment
    /// The end of the last commit in the active segment.
    @exclusivity(unchecked) var committedSize: Int64
    var lock: StoreLock?
    @exclusivity(unchecked) var cache: StateCache
    @exclusivity(unchecked) var lastCommittedInfo: EpochInfo?
    var lastDurableInfo: EpochInfo?
    @exclusivity(unchecked) var nextEpoch: UInt64
    /// What the writer is doing: its life, the open epoch, a roll, a sync, a compaction (see
    /// ``WriterState``), changed only through its named transitions.
    @exclusivity(unchecked) var state = WriterState()
    /// Commits submitted epochs in submission order, on a thread of its own. Not guarded by
    /// `condition`: the committer holds that while it writes, and a submission must never wait for
    /// a write.
    let committer = CommitQueue()
    /// The segment the last roll sealed, still open until a sync has made its end durable.
    var sealedPredecessor: Int32?
    /// Serializes manifest writes, which run without `condition` locked; guards ``durableGeneration``.
    let manifestWriter = NSLock()
    /// The generation of the last manifest made durable.
    var durableGeneration: UInt64
    @exclusivity(unchecked) var written: JournalPosition
    @exclusivity(unchecked) var synced: JournalPosition
    /// Epochs committed since the last sync started, and how many the sync before covered: how
    /// many commits a sync waits for (see ``waitUntilDurable(_:)``).
    var commitsSinceSyncStart = 0
    var lastSyncBatch = 0
    /// Threads waiting, with the lock released, to begin an epoch (see ``EpochWaiter``), first first.
    var epochWaiters: [EpochWaiter] = []
    /// One-shot commits waiting to be written by the thread combining them (see
    /// ``commitCombined(_:metadata:)``), and whether a thread is combining.
    var combinedCommits: [CombinedCommit] = []
    var combining = false
    var combineGathering = false
    /// How many one-shot commits the last combining thread wrote.
    var lastCombinedBatch = 0
    /// Committers waiting, with the lock released, for the running sync (see ``DurabilityWaiter``).
    var durabilityWaiters: [DurabilityWaiter] = []
    /// How long the last sync took, which bounds how long a sync waits for commits to join it.
    var lastSyncNanoseconds: UInt64 = 0
    /// Bytes appended to segments since the current checkpoint, for the automatic trigger: those
    /// after the roll that sealed what the checkpoint folds, in every segment rolled since.
    @exclusivity(unchecked) var bytesSinceCheckpoint: Int64 = 0
    /// The current checkpoint's size on disk.
    var checkpointBytes: Int64 = 0
    var lastCompactionFailure: JournalError?
    /// The descriptor of the crash note file while a note is armed (``armCrashNote(_:)``).
    var armedCrashNote: (descriptor: Int32, slot: Int)?
    /// The epoch from which retention keeps history, whatever its policy (``holdHistory(from:)``).
    var heldHistory: UInt64?
    /// Whether the active segment's descriptor is closed: by ``close()``, or by a ``reopen()`` that
    /// failed after letting go of the poisoned writer's files.
    var filesReleased = false
    /// The checkpoints this journal checked, loaded at open or wrote: ``history()`` does not read them again.
    let checkedCheckpoints: CheckedCheckpoints

    init(
        directory: String, options: JournalOptions, fileSystem: any FileSystem, manifest: Manifest,
        segment: ActiveSegment,
        lock: StoreLock, recovered: JournalState, report: RecoveryReport, nextEpoch: UInt64,
        checkedCheckpoints: CheckedCheckpoints = CheckedCheckpoints()
    ) {
        self.checkedCheckpoints = checkedCheckpoints
        self.directory = URL(fileURLWithPath: directory)
        self.options = options
        var logger = options.logger
        logger[metadataKey: "statejournal_store"] = "\(directory)"
        self.logger = logger
        self.metrics = JournalMetrics(factory: options.metricsFactory)
        self.fileSystem = fileSystem
        self.store = StoreDirectory(fileSystem: fileSystem, path: directory)
        self.manifest = manifest
        self.durableGeneration = manifest.generation
        self.segment = segment
        self.committedSize = segment.size
        self.lock = lock
        self.recoveredState = recovered
        self.recoveryReport = report
        self.lastCommittedInfo = recovered.epoch
        // Opening syncs the segment it continues, so what it recovered is durable.
        self.lastDurableInfo = recovered.epoch
        self.nextEpoch = nextEpoch
        self.cache = StateCache(limit: options.compressionCacheLimit)
        let position = JournalPosition(segment: segment.header.sequence, offset: segment.size)
        self.written = position
        self.synced = position
        // The cache serves patches against the states of paths the active segment defines: a path
        // the segment has not defined is written whole when it is first put. So it starts with
        // those paths' states alone; filling it from the whole state cost opening a store of a
        // million paths 0.2 s and 67 MB for states no commit could use.
        for path in segment.pathOrder.paths {
            guard let value = recovered[path] else { continue }
            guard cache.set(path, value) else { break }
        }
    }

    deinit {
        if !isClosed { shutDown(syncing: options.durability != .none) }
    }

    /// The latest committed epoch, or `nil` when none was ever committed.
    ///
    /// An epoch counts as committed once its commit record is handed to the operating system, which
    /// is before it is on stable storage: a killed process loses none of it, a power cut may. Under
    /// ``Durability/everyCommit`` another thread can see an epoch here while its committer still
    /// waits for the sync. ``lastDurable`` is the newest epoch known to be on stable storage.
    public var lastCommitted: EpochInfo? {
        condition.lock()
        defer { condition.unlock() }
        return lastCommittedInfo
    }

    /// The newest epoch known to be on stable storage: synced, with everything before it.
    ///
    /// It follows ``lastCommitted`` at the pace of the durability policy: at once (when the commit
    /// returns) under ``Durability/everyCommit``, within the interval under
    /// ``Durability/interval(seconds:)``, and at ``sync()`` or ``close()`` under ``Durability/none``.
    /// After opening, it is the recovered epoch, which opening syncs. Acknowledge to a client only
    /// what this covers when the client must not lose it in a power cut.
    public var lastDurable: EpochInfo? {
        condition.lock()
        defer { condition.unlock() }
        return lastDurableInfo
    }

    /// Starts writing the next epoch, waiting while another thread's epoch is open.
    ///
    /// Seals the current segment and starts a new one first when it has reached
    /// ``JournalOptions/segmentSizeLimit``. Under ``Durability/interval(seconds:)`` the background
    /// sync thread does that while commits go on in the full segment, as they do while a compaction
    /// rolls; once the segment is a quarter past its limit, they wait for the roll.
    ///
    /// - Throws: ``JournalError`` with code ``JournalError/Code/closed`` after ``close()``,
    ///   ``JournalError/Code/storePoisoned`` after a failed sync, or ``JournalError/Code/ioFailure``
    ///   when starting a new segment fails.
    public func beginEpoch() throws -> EpochWriter {
        try beginEpoch(inBackground: false)
    }

    /// ``beginEpoch()``, marking the epoch as the background committer's when `inBackground`.
    func beginEpoch(inBackground: Bool) throws -> EpochWriter {
        condition.lock()
        defer { condition.unlock() }
        while true {
            while !state.epochCanBegin && !isClosed {
                let waiter = EpochWaiter()
                epochWaiters.append(waiter)
                condition.unlock()
                waiter.wait()
                condition.lock()
            }
            try checkWritable()
            guard segment.size >= Int64(options.segmentSizeLimit) && segment.size > Int64(SegmentHeader.size)
            else { break }
            if state.roll != .none {
                // A roll under way (a compaction's, or the sync thread's) starts a new segment: commits
                // go on in this one meanwhile, until it is a quarter past its limit.
                guard segment.size >= Int64(options.segmentSizeLimit) + rollSlack else { break }
                condition.wait()
                continue
            }
            if handRollToSyncThread() { break }
            claimRoll()
            condition.unlock()
            let rolled = Result { try performClaimedRoll(reservingCheckpoint: false) }
            condition.lock()
            _ = try rolled.get()
        }
        state.beginEpoch(inBackground: inBackground)
        return EpochWriter(
            journal: self, epoch: nextEpoch, startOffset: segment.size, pathCount: segment.pathOrder.count)
    }

    /// Writes one epoch with the given changes and commits it: a convenience over ``beginEpoch()``.
    ///
    /// - Parameters:
    ///   - changes: The puts, removes and clears of the epoch, applied in order.
    ///   - metadata: The epoch's metadata.
    /// - Returns: The committed epoch.
    /// - Throws: as ``beginEpoch()``, ``EpochWriter/put(_:_:)`` and ``EpochWriter/commit(metadata:)``.
    ///
    /// Under ``Durability/everyCommit``, commits made at the same time from several threads are
    /// written by one of them and share one sync (see ``commitCombined(_:metadata:)``).
    @discardableResult
    public func commit(_ changes: [JournalChange], metadata: [String: String] = [:]) throws -> EpochInfo {
        if options.durability == .everyCommit { return try commitCombined(changes, metadata: metadata) }
        return try commit(changes, metadata: metadata, inBackground: false)
    }

    func commit(_ changes: [JournalChange], metadata: [String: String], inBackground: Bool) throws -> EpochInfo {
        let start = JournalMetrics.now()
        let (info, end) = try commitWithoutWaiting(changes, metadata: metadata, inBackground: inBackground)
        if options.durability == .everyCommit { try waitForDurability(of: end) }
        metrics.recordCommit(bytes: info.bytes, since: start)
        return info
    }

    /// Writes and commits an epoch, without waiting for a sync; returns where it ends.
    func commitWithoutWaiting(
        _ changes: [JournalChange], metadata: [String: String], inBackground: Bool
    ) throws -> (EpochInfo, JournalPosition) {
        let epoch = try beginEpoch(inBackground: inBackground)
        do {
            for change in changes {
                switch change {
                case .put(let path, let bytes): try epoch.put(path, bytes)
                case .remove(let path): try epoch.remove(path)
                case .removeAll: try epoch.removeAll()
                }
            }
            return try epoch.commitWithoutWaiting(metadata: metadata)
        } catch {
            epoch.abort()
            throw error
        }
    }

    /// Forces everything committed so far to stable storage, whatever the durability policy.
    public func sync() throws {
        condition.lock()
        defer { condition.unlock() }
        try checkWritable()
        try waitUntilDurable(written)
    }

    /// Waits for the epochs submitted with ``submit(_:metadata:after:)`` to finish, syncs (unless
    /// the policy is ``Durability/none``), stops the background sync, waits for a compaction that is
    /// running to finish, and releases the lock.
    ///
    /// It starts no compaction, and cancels one scheduled that has not begun: a journal closed past
    /// the ``CompactionPolicy`` threshold starts one at the first commit after it is opened again.
    ///
    /// - Throws: ``JournalError/Code/epochInProgress`` while an epoch begun with ``beginEpoch()`` is
    ///   open, or the error of the final sync.
    public func close() throws {
        while true {
            condition.lock()
            let callerEpochOpen = state.callerEpochIsOpen
            condition.unlock()
            if callerEpochOpen {
                throw JournalError(
                    .epochInProgress, "An epoch is still open; commit or abort it before closing the journal.")
            }
            // A submitted epoch may wait for the caller's epoch, so the check above runs again now and then.
            if committer.waitUntilDrained(until: Date(timeIntervalSinceNow: 0.05)) { break }
        }
        if let failure = shutDown(syncing: options.durability != .none) { throw failure }
    }

    @discardableResult
    func shutDown(syncing: Bool) -> JournalError? {
        condition.lock()
        defer { condition.unlock() }
        guard !isClosed else { return nil }
        var failure: JournalError?
        if syncing && poison == nil && synced < written {
            do { try waitUntilDurable(written) } catch { failure = error as? JournalError }
        }
        // A compaction running in the background finishes first: it writes a checkpoint and a manifest,
        // which must not happen after the lock is released. One scheduled but not begun will not run,
        // nor one that the running compaction, or a commit from another thread, schedules meanwhile.
        while true {
            if state.compaction == .scheduled { state.cancelScheduledCompaction() }
            guard state.syncIsUnderWay || state.compaction != .idle || state.roll != .none else { break }
            condition.wait()
        }
        state.close()
        wakeEpochWaiters(all: true)
        stopIntervalSync()
        committer.stop()
        if let predecessor = sealedPredecessor {
            if syncing && poison == nil { try? fileSystem.fullSync(predecessor) }
            fileSystem.close(predecessor)
            sealedPredecessor = nil
        }
        if !filesReleased {
            // A closed store holds no zeros written ahead; if this cut does not reach the disk before a
            // crash, the next open cuts them.
            try? cutPreallocation(of: &segment)
            fileSystem.close(segment.descriptor)
            filesReleased = true
        }
        lock?.release(fileSystem)
        lock = nil
        condition.broadcast()
        return failure
    }

    /// Wakes the first thread waiting to begin an epoch, or all of them (after a roll, or when the
    /// journal closes). Called with `condition` locked.
    func wakeEpochWaiters(all: Bool) {
        guard !epochWaiters.isEmpty else { return }
        if all {
            for waiter in epochWaiters { waiter.wake() }
            epochWaiters.removeAll()
        } else {
            epochWaiters.removeFirst().wake()
        }
    }

    /// The failure that poisoned the journal, if one did.
    var poison: JournalError? { state.poison }

    var isClosed: Bool { state.isClosed }

    func checkWritable() throws {
        if isClosed { throw JournalError(.closed, "The journal is closed; open it again to write.") }
        if let poison { throw poison }
    }

    /// Turns a failed system call into a ``JournalError`` that says what was being done.
    static func ioError(_ error: any Error, _ doing: String, file: String? = nil) -> JournalError {
        if let error = error as? JournalError { return error }
        let system = error as? SystemError
        var message = "Could not \(doing)"
        if let system { message += ": \(String(cString: strerror(system.errno)))" }
        message += ". " + advice(for: system?.errno)
        return JournalError(.ioFailure, message, cause: system, file: file ?? system?.path)
    }

    /// What to do about a failed system call, by its `errno`.
    static func advice(for code: Int32?) -> String {
        switch code {
        case EMFILE?, ENFILE?:
            """
            The process or the system ran out of file descriptors: close files the app no longer needs or raise the \
            limit (ulimit -n), then try again.
            """
        case EACCES?, EPERM?:
            """
            Permission denied: check the owner and mode of the store directory and its files, and that the process \
            runs as the right user.
            """
        case EROFS?:
            "The file system is mounted read-only: remount it read-write, or open the store read-only to inspect it."
        case ENOSPC?, EDQUOT?:
            "The disk or the user's quota is full: free some space (compacting the store can help), then try again."
        case EIO?:
            """
            The device reported an I/O error: check the system log (dmesg) for the disk, and copy the store elsewhere \
            before it gets worse.
            """
        case ENOENT?, ENOTDIR?:
            "A path does not exist: check that the store directory was not moved or removed while in use."
        default:
            "Check that the disk is writable and has free space, then try again."
        }
    }
}
