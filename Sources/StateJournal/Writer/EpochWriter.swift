import Foundation

/// One epoch being written: puts and removes stream into the journal as they are made, and
/// ``commit(metadata:)`` makes them count, all together.
///
/// Get one from ``Journal/beginEpoch()``. Until it is committed or aborted, no other epoch can
/// begin. An epoch that is neither committed nor aborted when this object goes away is aborted.
///
/// Entries are gathered into batches of about 32 KiB, each compressed with LZ4 against the
/// previous versions of its paths and the batch before it, and appended to the segment as soon as
/// it is full: an epoch over a large state is never held whole in memory.
public final class EpochWriter {
    /// The number this epoch gets when it commits.
    public let epoch: UInt64

    private let journal: Journal
    /// The journal's, lent to this epoch while it is open.
    private let buffers: EpochBuffers
    private let startOffset: Int64
    private let pathCountAtStart: Int
    private var pathCountAtBatchStart: Int
    private var clearedAll = false
    private var batches = 0
    private var entries = 0
    private var bytes = 0
    private var digest: UInt32 = 0
    private var finished = false

    static let batchTarget = 32 << 10

    init(journal: Journal, epoch: UInt64, startOffset: Int64, pathCount: Int) {
        self.journal = journal
        self.epoch = epoch
        self.startOffset = startOffset
        self.pathCountAtStart = pathCount
        self.pathCountAtBatchStart = pathCount
        self.buffers = journal.epochBuffers
        buffers.reset()
    }

    deinit { abort() }

    /// Sets the state of `path` in this epoch.
    ///
    /// - Throws: ``JournalError/Code/limitExceeded`` when the path or state exceeds ``JournalLimits``
    ///   (the epoch stays open and usable); ``JournalError/Code/ioFailure`` when writing fails (the
    ///   epoch is aborted).
    public func put(_ path: RestorationPath, _ state: [UInt8]) throws {
        try Self.validate(path, state: state)
        try withJournal {
            let (reference, isNew) = journal.segment.reference(for: path)
            var previous: [UInt8]?
            if !isNew && reference <= UInt64(pathCountAtBatchStart) && !buffers.touchedInBatch.contains(path) {
                previous = journal.cache.value(for: path)
            }
            state.withUnsafeBytes {
                buffers.builder.add(.put, path: path, reference: reference, state: $0, previous: previous)
            }
            journal.cache.set(path, state)
            touch(path)
            try flushIfFull()
        }
    }

    /// Removes `path` in this epoch: replay after the commit no longer has it (a tombstone).
    ///
    /// - Throws: as ``put(_:_:)``.
    public func remove(_ path: RestorationPath) throws {
        try Self.validate(path)
        try withJournal {
            let (reference, _) = journal.segment.reference(for: path)
            buffers.builder.add(.remove, path: path, reference: reference, state: nil, previous: nil)
            journal.cache.remove(path)
            touch(path)
            try flushIfFull()
        }
    }

    /// Removes every path in this epoch, for instance when the app discards its state.
    ///
    /// - Throws: as ``put(_:_:)``.
    public func removeAll() throws {
        try withJournal {
            buffers.builder.add(.removeAll, path: nil, reference: 0, state: nil, previous: nil)
            journal.cache.removeAll()
            clearedAll = true
            entries += 1
            try flushIfFull()
        }
    }

    /// Commits the epoch with `metadata` and returns its description.
    ///
    /// Under every durability policy the epoch has been handed to the operating system when this
    /// returns; under ``Durability/everyCommit`` it has also been synced.
    ///
    /// - Throws: ``JournalError/Code/limitExceeded`` for oversized metadata (the epoch stays open),
    ///   ``JournalError/Code/ioFailure`` when writing fails (the epoch is aborted), or
    ///   ``JournalError/Code/storePoisoned`` when the sync fails (the epoch may or may not survive
    ///   a crash, and the journal accepts no more commits until reopened).
    @discardableResult
    public func commit(metadata: [String: String] = [:]) throws -> EpochInfo {
        let start = JournalMetrics.now()
        let (info, end) = try commitWithoutWaiting(metadata: metadata)
        // Waited for with the lock released, so that the commits behind this one write meanwhile
        // and share the next sync.
        if journal.options.durability == .everyCommit { try journal.waitForDurability(of: end) }
        journal.metrics.recordCommit(bytes: info.bytes, since: start)
        return info
    }

    /// Commits the epoch without waiting for a sync; returns its description and where it ends.
    func commitWithoutWaiting(metadata: [String: String]) throws -> (EpochInfo, JournalPosition) {
        try Self.validate(metadata)
        var segmentSequence: UInt64 = 0
        var endOffset: Int64 = 0
        let info = try withJournal {
            let now = UInt64(max(0, journal.options.clock().timeIntervalSince1970 * 1000))
            // What a sync confirmed of this segment so far: recovery trusts bytes before it as durable.
            let synced = journal.synced.segment == journal.segment.header.sequence ? journal.synced.offset : 0
            let record = CommitRecord(
                epoch: epoch, entryCount: entries, batchCount: batches, digest: digest,
                syncedEnd: UInt64(max(0, synced)), timestampMilliseconds: now,
                metadata: metadata == journal.segment.lastMetadata ? nil : metadata)
            buffers.record.bytes.removeAll(keepingCapacity: true)
            let start = RecordFraming.beginRecord(in: &buffers.record)
            record.encodeFields(into: &buffers.record, previousTimestamp: journal.segment.lastTimestamp)
            // The last batch travels inside the commit record.
            if !buffers.builder.isEmpty { appendBatchPayload() }
            RecordFraming.finishRecord(.commit, in: &buffers.record, from: start)
            let recordSize = buffers.record.bytes.count
            try appendRecord(doing: "write the commit of epoch")
            segmentSequence = journal.segment.header.sequence
            endOffset = journal.segment.size
            journal.segment.lastMetadata = metadata
            journal.segment.lastTimestamp = now
            journal.committedSize = journal.segment.size
            let info = EpochInfo(
                epoch: epoch, timestamp: Date(timeIntervalSince1970: Double(now) / 1000), metadata: metadata,
                entryCount: entries, bytes: bytes + recordSize)
            journal.lastCommittedInfo = info
            journal.nextEpoch = epoch + 1
            journal.commitsSinceSyncStart += 1
            finish()
            journal.startCompactionIfDue()
            return info
        }
        return (info, JournalPosition(segment: segmentSequence, offset: endOffset))
    }

    /// Abandons the epoch: what it wrote is cut from the segment and the next epoch reuses its number.
    public func abort() {
        journal.condition.lock()
        defer { journal.condition.unlock() }
        guard !finished else { return }
        abandon()
    }

    // MARK: - Internals (called with the journal's condition locked)

    private func withJournal<Result>(_ body: () throws -> Result) throws -> Result {
        journal.condition.lock()
        defer { journal.condition.unlock() }
        guard !finished else {
            throw JournalError(.closed, "Epoch \(epoch) was already committed or aborted; begin a new epoch.")
        }
        try journal.checkWritable()
        return try body()
    }

    private func touch(_ path: RestorationPath) {
        buffers.touchedInBatch.insert(path)
        buffers.touchedInEpoch.insert(path)
        entries += 1
    }

    private func flushIfFull() throws {
        if buffers.builder.bodySize >= Self.batchTarget
            || buffers.builder.entryCount >= JournalLimits.maximumBatchEntries
        {
            try flushBatch()
        }
    }

    private func flushBatch() throws {
        buffers.record.bytes.removeAll(keepingCapacity: true)
        let start = RecordFraming.beginRecord(in: &buffers.record)
        appendBatchPayload()
        let checksum = RecordFraming.finishRecord(.batch, in: &buffers.record, from: start)
        let recordSize = buffers.record.bytes.count
        try appendRecord(doing: "write entries of epoch")
        digest = JournalScanner.extendDigest(digest, with: checksum)
        batches += 1
        bytes += recordSize
    }

    /// Appends the pending entries, as a batch payload, to the record being built, and starts the
    /// next batch.
    private func appendBatchPayload() {
        buffers.builder.encode(
            into: &buffers.record, compressor: journal.compressor, previousBody: buffers.previousBody,
            dictionary: &buffers.dictionary, body: &buffers.body)
        swap(&buffers.previousBody, &buffers.body)
        buffers.builder.reset()
        EpochBuffers.empty(&buffers.touchedInBatch)
        pathCountAtBatchStart = journal.segment.pathOrder.count
    }

    /// Writes the record built in the buffers at the end of the segment.
    private func appendRecord(doing: StaticString) throws {
        do {
            try journal.preallocate(through: journal.segment.size + Int64(buffers.record.bytes.count))
            try journal.fileSystem.writeAll(journal.segment.descriptor, buffers.record.bytes, at: journal.segment.size)
        } catch {
            abandon()
            throw Journal.ioError(
                error, "\(doing) \(epoch)", file: journal.store.file(FileNames.segment(journal.segment.header.sequence))
            )
        }
        let count = Int64(buffers.record.bytes.count)
        journal.segment.size += count
        journal.bytesSinceCheckpoint += count
        journal.written = JournalPosition(segment: journal.segment.header.sequence, offset: journal.segment.size)
    }

    /// Cuts what the epoch wrote and forgets what it taught the writer's tables and cache.
    private func abandon() {
        journal.segment.rollBackPaths(to: pathCountAtStart)
        if clearedAll { journal.cache.removeAll() }
        for path in buffers.touchedInEpoch { journal.cache.remove(path) }
        if journal.segment.size > startOffset {
            do {
                try journal.fileSystem.truncate(journal.segment.descriptor, to: startOffset)
                journal.segment.size = startOffset
                journal.segment.allocated = startOffset
                let position = JournalPosition(segment: journal.segment.header.sequence, offset: startOffset)
                journal.written = position
                if journal.synced > position { journal.synced = position }
            } catch {
                journal.poison(
                    with: Journal.ioError(
                        error, "cut an abandoned epoch from the journal; reopen the store to repair it"))
            }
        }
        finish()
    }

    private func finish() {
        finished = true
        journal.epochOpen = false
        journal.backgroundEpochOpen = false
        journal.wakeEpochWaiters(all: false)
        journal.condition.broadcast()
    }

    static func validate(_ path: RestorationPath) throws {
        guard !path.components.isEmpty else {
            throw JournalError(.invalidPath, "A restoration path needs at least one component.")
        }
        guard path.components.count <= JournalLimits.maximumPathDepth else {
            throw JournalError(
                .limitExceeded,
                """
                The path \(path) has \(path.components.count) components; at most \(JournalLimits.maximumPathDepth) \
                are allowed.
                """
            )
        }
        for component in path.components where component.utf8.count > JournalLimits.maximumComponentLength {
            throw JournalError(
                .limitExceeded,
                """
                A component of \(path) is \(component.utf8.count) bytes; at most \
                \(JournalLimits.maximumComponentLength) are allowed.
                """
            )
        }
    }

    static func validate(_ path: RestorationPath, state: [UInt8]) throws {
        try validate(path)
        guard state.count <= JournalLimits.maximumStateSize else {
            throw JournalError(
                .limitExceeded,
                """
                The state for \(path) is \(state.count) bytes; an entry holds at most \
                \(JournalLimits.maximumStateSize). Store large data elsewhere and keep a reference to it in the state.
                """
            )
        }
    }

    static func validate(_ metadata: [String: String]) throws {
        guard metadata.count <= JournalLimits.maximumMetadataCount else {
            throw JournalError(
                .limitExceeded,
                "An epoch carries at most \(JournalLimits.maximumMetadataCount) metadata items, not \(metadata.count).")
        }
        for (key, value) in metadata
        where key.utf8.count > JournalLimits.maximumMetadataItemLength
            || value.utf8.count > JournalLimits.maximumMetadataItemLength
        {
            throw JournalError(
                .limitExceeded,
                "The metadata item \"\(key.prefix(40))\" exceeds \(JournalLimits.maximumMetadataItemLength) bytes.")
        }
    }
}

@available(*, unavailable, message: "An EpochWriter belongs to the thread that began the epoch.")
extension EpochWriter: Sendable {}
