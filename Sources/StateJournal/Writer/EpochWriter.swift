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
    private let startOffset: Int64
    private let pathCountAtStart: Int
    private var builder = BatchBuilder()
    private var pathCountAtBatchStart: Int
    private var touchedInBatch: Set<RestorationPath> = []
    private var touchedInEpoch: Set<RestorationPath> = []
    private var clearedAll = false
    private var previousBody: [UInt8] = []
    private var dictionary: [UInt8] = []
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
            if !isNew && reference <= UInt64(pathCountAtBatchStart) && !touchedInBatch.contains(path) {
                previous = journal.cache.value(for: path)
            }
            state.withUnsafeBytes { builder.add(.put, path: path, reference: reference, state: $0, previous: previous) }
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
            builder.add(.remove, path: path, reference: reference, state: nil, previous: nil)
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
            builder.add(.removeAll, path: nil, reference: 0, state: nil, previous: nil)
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
        try Self.validate(metadata)
        let start = JournalMetrics.now()
        let info = try withJournal {
            // The last batch travels inside the commit record.
            let inline = builder.isEmpty ? [] : makeBatchPayload()
            let now = UInt64(max(0, journal.options.clock().timeIntervalSince1970 * 1000))
            // What a sync confirmed of this segment so far: recovery trusts bytes before it as durable.
            let synced = journal.synced.segment == journal.segment.header.sequence ? journal.synced.offset : 0
            let record = CommitRecord(
                epoch: epoch, entryCount: entries, batchCount: batches, digest: digest,
                syncedEnd: UInt64(max(0, synced)), timestampMilliseconds: now,
                metadata: metadata == journal.segment.lastMetadata ? nil : metadata)
            let payload = record.encoded(previousTimestamp: journal.segment.lastTimestamp, inlineBatch: inline)
            let framed = RecordFraming.frame(.commit, payload: payload)
            try append(framed, doing: "write the commit of epoch \(epoch)")
            journal.segment.lastMetadata = metadata
            journal.segment.lastTimestamp = now
            journal.committedSize = journal.segment.size
            let info = EpochInfo(
                epoch: epoch, timestamp: Date(timeIntervalSince1970: Double(now) / 1000), metadata: metadata,
                entryCount: entries, bytes: bytes + framed.count)
            journal.lastCommittedInfo = info
            journal.nextEpoch = epoch + 1
            finish()
            journal.startCompactionIfDue()
            if journal.options.durability == .everyCommit { try journal.waitUntilDurable(journal.written) }
            return info
        }
        journal.metrics.recordCommit(bytes: info.bytes, since: start)
        return info
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
        touchedInBatch.insert(path)
        touchedInEpoch.insert(path)
        entries += 1
    }

    private func flushIfFull() throws {
        if builder.bodySize >= Self.batchTarget || builder.entryCount >= JournalLimits.maximumBatchEntries {
            try flushBatch()
        }
    }

    private func flushBatch() throws {
        let framed = RecordFraming.frame(.batch, payload: makeBatchPayload())
        try append(framed, doing: "write entries of epoch \(epoch)")
        digest = JournalScanner.extendDigest(digest, with: RecordFraming.storedChecksum(of: framed))
        batches += 1
        bytes += framed.count
    }

    /// Encodes the pending entries as a batch payload and starts the next batch.
    private func makeBatchPayload() -> [UInt8] {
        let (payload, body) = builder.encode(
            compressor: journal.compressor, previousBody: previousBody, dictionary: &dictionary)
        previousBody = body
        builder = BatchBuilder()
        touchedInBatch.removeAll(keepingCapacity: true)
        pathCountAtBatchStart = journal.segment.pathOrder.count
        return payload
    }

    private func append(_ framed: [UInt8], doing: String) throws {
        do {
            try journal.fileSystem.writeAll(journal.segment.descriptor, framed, at: journal.segment.size)
        } catch {
            abandon()
            throw Journal.ioError(
                error, doing, file: journal.store.file(FileNames.segment(journal.segment.header.sequence)))
        }
        journal.segment.size += Int64(framed.count)
        journal.bytesSinceCheckpoint += Int64(framed.count)
        journal.written = JournalPosition(segment: journal.segment.header.sequence, offset: journal.segment.size)
    }

    /// Cuts what the epoch wrote and forgets what it taught the writer's tables and cache.
    private func abandon() {
        journal.segment.rollBackPaths(to: pathCountAtStart)
        if clearedAll { journal.cache.removeAll() }
        for path in touchedInEpoch { journal.cache.remove(path) }
        if journal.segment.size > startOffset {
            do {
                try journal.fileSystem.truncate(journal.segment.descriptor, to: startOffset)
                journal.segment.size = startOffset
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
        journal.condition.broadcast()
    }

    static func validate(_ path: RestorationPath) throws {
        guard !path.components.isEmpty else {
            throw JournalError(.invalidPath, "A restoration path needs at least one component.")
        }
        guard path.components.count <= JournalLimits.maximumPathDepth else {
            throw JournalError(
                .limitExceeded,
                "The path \(path) has \(path.components.count) components; at most \(JournalLimits.maximumPathDepth) are allowed."
            )
        }
        for component in path.components where component.utf8.count > JournalLimits.maximumComponentLength {
            throw JournalError(
                .limitExceeded,
                "A component of \(path) is \(component.utf8.count) bytes; at most \(JournalLimits.maximumComponentLength) are allowed."
            )
        }
    }

    static func validate(_ path: RestorationPath, state: [UInt8]) throws {
        try validate(path)
        guard state.count <= JournalLimits.maximumStateSize else {
            throw JournalError(
                .limitExceeded,
                "The state for \(path) is \(state.count) bytes; an entry holds at most \(JournalLimits.maximumStateSize). Store large data elsewhere and keep a reference to it in the state."
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
