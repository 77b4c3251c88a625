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
            let syncedEnd = UInt64(max(0, synced))
            let version = journal.segment.header.version
            let encoding = encodeCompactCommit(syncedEnd: syncedEnd, now: now, metadata: metadata)
            var compactPath: UInt64?
            if case .compact(let path) = encoding { compactPath = path }
            if case .none = encoding {
                let record = CommitRecord(
                    epoch: epoch, entryCount: entries, batchCount: batches, digest: digest,
                    syncedEnd: syncedEnd, timestampMilliseconds: now,
                    metadata: metadata == journal.segment.lastMetadata ? nil : metadata)
                buffers.record.bytes.removeAll(keepingCapacity: true)
                let start = RecordFraming.beginRecord(in: &buffers.record, version: version)
                record.encodeFields(into: &buffers.record, previousTimestamp: journal.segment.lastTimestamp)
                // The last batch travels inside the commit record.
                if !buffers.builder.isEmpty { appendBatchPayload() }
                RecordFraming.finishRecord(.commit, in: &buffers.record, from: start, version: version)
            }
            let recordSize = buffers.record.bytes.count
            try appendRecord(doing: "write the commit of epoch")
            segmentSequence = journal.segment.header.sequence
            endOffset = journal.segment.size
            journal.segment.lastMetadata = metadata
            journal.segment.lastTimestamp = now
            journal.segment.previousCommit = CompactCommit.Previous(
                epoch: epoch, syncedEnd: syncedEnd, timestampMilliseconds: now,
                compactPath: compactPath ?? journal.segment.previousCommit?.compactPath,
                recordStart: endOffset - Int64(recordSize))
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

    /// The largest patch a compact commit carries: beyond it, the LZ4 block of an ordinary commit
    /// record is about as small, and computing the patch would cost more than it saves.
    static let compactPatchLimit = 1024

    /// Encodes the epoch as a compact commit record into the record buffer, when it is one put (as
    /// a patch against the path's previous version) or remove of a path the segment defines, with
    /// the metadata of the segment's last commit, and the compact record is no larger than the
    /// ordinary one.
    private func encodeCompactCommit(syncedEnd: UInt64, now: UInt64, metadata: [String: String]) -> CommitEncoding {
        // Read in place: a copy of the builder would share its arrays, and resetting it then copies them.
        guard journal.segment.header.version >= FormatVersion.compactRecords, batches == 0, entries == 1,
            buffers.builder.entryCount == 1, buffers.builder.lastReference >= 1,
            metadata == journal.segment.lastMetadata,
            let previous = journal.segment.previousCommit, epoch > previous.epoch
        else { return .none }
        let operation = buffers.builder.lastOperation
        // A put offers its previous version only when the path has one: the patch applies to it.
        guard operation == .remove || (operation == .put && !buffers.builder.previousVersions.isEmpty) else {
            return .none
        }
        let compact = CompactCommit(
            epoch: epoch, syncedEnd: syncedEnd, timestampMilliseconds: now, operation: operation,
            path: buffers.builder.lastReference)
        let version = journal.segment.header.version
        buffers.record.bytes.removeAll(keepingCapacity: true)
        let start = RecordFraming.beginRecord(in: &buffers.record, version: version)
        compact.encodeFields(into: &buffers.record, previous: previous, at: journal.segment.size)
        if operation == .put {
            let fits = buffers.builder.previousVersions.withUnsafeBytes { old in
                buffers.builder.states.withUnsafeBytes { new in
                    StatePatch.encode(from: old, to: new, into: &buffers.record, limit: Self.compactPatchLimit)
                }
            }
            guard fits else { return .none }
        }
        let payload = buffers.record.bytes.count - start - RecordFraming.minimumHeaderSize
        // An ordinary commit record of one put against a previous version holds at least 6 bytes of
        // commit fields, 9 of batch fields (its body checksum among them) and a body of at least
        // 2 + n bytes raw or 6 as an LZ4 block: a compact payload within that is never larger.
        RecordFraming.finishRecord(.compactCommit, in: &buffers.record, from: start, version: version)
        if payload > 15 + min(6, 2 + buffers.builder.states.count) {
            let compactRecord = buffers.record.bytes
            let record = CommitRecord(
                epoch: epoch, entryCount: entries, batchCount: batches, digest: digest, syncedEnd: syncedEnd,
                timestampMilliseconds: now, metadata: nil)
            buffers.record.bytes.removeAll(keepingCapacity: true)
            let ordinaryStart = RecordFraming.beginRecord(in: &buffers.record, version: version)
            record.encodeFields(into: &buffers.record, previousTimestamp: journal.segment.lastTimestamp)
            appendBatchPayload()
            RecordFraming.finishRecord(.commit, in: &buffers.record, from: ordinaryStart, version: version)
            if buffers.record.bytes.count < compactRecord.count { return .ordinary }
            buffers.record.bytes = compactRecord
        }
        return .compact(path: compact.path)
    }

    /// What ``encodeCompactCommit(syncedEnd:now:metadata:)`` left in the record buffer.
    private enum CommitEncoding {
        /// Nothing: the ordinary commit record is to be encoded.
        case none
        /// The ordinary commit record, smaller than the compact one.
        case ordinary
        /// A compact commit record of the path numbered `path`.
        case compact(path: UInt64)
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
        let version = journal.segment.header.version
        let start = RecordFraming.beginRecord(in: &buffers.record, version: version)
        appendBatchPayload()
        let checksum = RecordFraming.finishRecord(.batch, in: &buffers.record, from: start, version: version)
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
        journal.state.endEpoch()
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
