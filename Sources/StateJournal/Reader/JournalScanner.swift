import Foundation

/// What a scan of the store's segments found.
struct ScanResult {
    var state = StateTable()
    var lastEpoch: EpochInfo?
    var damage: DamageReport?
    var uncommittedTailBytes: Int64 = 0
    /// What a power cut kept of bytes that were never synced, beyond a gap where some did not reach
    /// the disk: not damage, and not replayed.
    var unsyncedTail: UnsyncedTail?
    /// The highest epoch number seen in any intact commit record, beyond damage too.
    var highestEpochSeen: UInt64 = 0
    /// Where the writer continues: the last segment read and how far it is consistent.
    var tail: TailPosition?
    /// Where damage starts, for the writer to set the rest aside.
    var damagePosition: DamagePosition?
    /// Checkpoints that could not be read, newest first, when replay fell back to an older one.
    var damagedCheckpoints: [(reference: Manifest.CheckpointReference, report: DamageReport)] = []
    /// The checkpoint replay started from, if any.
    var startCheckpoint: Manifest.CheckpointReference?
}

/// The consistent end of the last segment of a scan.
struct TailPosition {
    var segmentIndex: Int
    var header: SegmentHeader
    var committedEnd: Int64
    var fileSize: Int64
    var sealed: Bool
    /// The paths the segment defines, by number, for a writer that continues it.
    var segmentPaths: SegmentPaths?
    var lastMetadata: [String: String]?
    var lastTimestamp: UInt64?
    /// What the segment's last commit said, which a compact commit after it is written relative to.
    var previousCommit: CompactCommit.Previous?
}

/// The segment and offset where damage starts.
struct DamagePosition {
    var segmentIndex: Int
    var offset: Int64
}

/// What a scan should do.
struct ScanOptions {
    /// Stop after this epoch.
    var through: UInt64?
    /// Decode the entries and build the state (otherwise only framing and commits are checked).
    var decode = true
    /// Pass each epoch's changes to the visitor.
    var keepsChanges = false
    /// Read the last segment only up to here (a writer's committed end).
    var lastSegmentLimit: Int64?
    /// Start from the oldest retained checkpoint (to list history) instead of the newest one that
    /// precedes ``through``.
    var fromOldest = false
    var recovery: RecoveryMode = .stopAtDamage
    /// Start after the newest checkpoint without reading it, taking its epoch from the manifest:
    /// for scans that check only framing and commits (``decode`` off, no ``through``), such as the
    /// committed lengths ``JournalReader/fileSet()`` reports. The checkpoint is not checked.
    var skipsCheckpoint = false
    /// Check the checkpoint replay starts from with ``CheckpointFile/check(_:storeID:in:)``, a window
    /// at a time, instead of loading its state: for scans that do not ``decode``, whose memory then
    /// does not grow with the store.
    var streamsCheckpoint = false
    /// Checkpoints known to be intact: a scan that does not ``decode`` starts from one of them
    /// without reading it, and the scan records each checkpoint it checks or loads.
    var checkedCheckpoints: CheckedCheckpoints?
}

/// Reads the segments a manifest names, in order, epoch by epoch.
struct JournalScanner {
    let fileSystem: any FileSystem
    let directory: String
    let manifest: Manifest
    let options: ScanOptions
    /// What earlier scans of the same files counted beyond damage, for callers that scan a damaged
    /// store more than once (``StoreInspector/verify(_:)``): counting walks the rest of the segment
    /// byte by byte.
    var damageCounts: DamageCounts? = nil

    private struct Stop: Error {}

    /// Scans and calls `visit` for each committed epoch; `visit` returns `false` to stop early.
    func run(visit: ((EpochInfo, [JournalChange]) throws -> Bool)? = nil) throws -> ScanResult {
        var result = ScanResult()
        var assembler = EpochAssembler(keepsChanges: options.keepsChanges)
        result.highestEpochSeen = manifest.newestCheckpointEpoch
        let start: CheckpointContent?
        let startEpoch: UInt64
        if options.skipsCheckpoint, !options.decode, options.through == nil, !options.fromOldest,
            let newest = manifest.checkpoints.last
        {
            start = nil
            startEpoch = newest.epoch
            result.startCheckpoint = newest
        } else {
            start = try chooseStart(&result)
            startEpoch = start?.info.epoch ?? 0
        }
        var previousLastEpoch = startEpoch
        do {
            if let info = start?.info.epochInfo, let entries = start?.entries {
                var changes: [JournalChange] = []
                if visit != nil && options.keepsChanges {
                    changes = [.removeAll]
                    changes.reserveCapacity(entries.count + 1)
                    var paths = EncodedPathDecoder()
                    entries.withSlots { slots in
                        for slot in slots { changes.append(.put(paths.decode(slot.encodedPath), Array(slot.state))) }
                    }
                }
                assembler.load(entries)
                result.lastEpoch = info
                if let visit {
                    if try !visit(info, changes) { throw Stop() }
                }
                if let through = options.through, info.epoch >= through { throw Stop() }
            }
            for (index, sequence) in manifest.segments.enumerated() {
                let finished = try scanSegment(
                    index: index, sequence: sequence, startEpoch: startEpoch, expectedBase: previousLastEpoch,
                    result: &result, assembler: &assembler, visit: visit)
                previousLastEpoch = result.lastEpoch?.epoch ?? previousLastEpoch
                if finished { break }
            }
        } catch is Stop {}
        result.state = assembler.finish()
        return result
    }

    private func path(_ sequence: UInt64) -> String { directory + "/" + FileNames.segment(sequence) }

    /// The error for an intact file of a format version this library does not read: written by
    /// another release, it is neither damage to recover from nor a file to pass over.
    static func unsupported(_ violation: FormatViolation, file: String) -> JournalError {
        JournalError(
            .unsupportedFormat,
            """
            \((file as NSString).lastPathComponent) was written by another StateJournal release: \(violation.reason). \
            Open the store with a release that reads that version; nothing in it was changed.
            """,
            cause: violation, file: file)
    }

    private var store: StoreDirectory { StoreDirectory(fileSystem: fileSystem, path: directory) }

    /// The checkpoint replay starts from: the newest one at or before ``ScanOptions/through`` (or the
    /// oldest, for history), falling back to older ones when it is damaged. `nil` means "from the
    /// first epoch", which is possible only while the segments from epoch 0 are retained.
    private func chooseStart(_ result: inout ScanResult) throws -> CheckpointContent? {
        // History starts at epoch 1 for as long as the segments from the beginning are retained.
        if options.fromOldest, let first = manifest.segments.first, try segmentBase(first) == 0 { return nil }
        var candidates = manifest.checkpoints.filter { options.through == nil || $0.epoch <= options.through! }
        candidates = options.fromOldest ? candidates : candidates.reversed()
        for candidate in candidates {
            if !options.decode,
                let known = options.checkedCheckpoints?.content(of: candidate, storeID: manifest.storeID)
            {
                result.startCheckpoint = candidate
                return known
            }
            do {
                let content =
                    options.streamsCheckpoint && !options.decode
                    ? try CheckpointFile.check(candidate, storeID: manifest.storeID, in: store)
                    : try CheckpointFile.load(candidate, storeID: manifest.storeID, in: store)
                result.startCheckpoint = candidate
                options.checkedCheckpoints?.record(content)
                return content
            } catch let error as SystemError where error.errno != ENOENT {
                // A failed read is an I/O failure, not damage: never fall back past a good checkpoint for it.
                throw error
            } catch let violation as FormatViolation where violation.unsupportedVersion != nil {
                // Nor is a later release's checkpoint, whose epochs an older one would not have.
                throw Self.unsupported(violation, file: store.file(FileNames.checkpoint(candidate.sequence)))
            } catch {
                let name = FileNames.checkpoint(candidate.sequence)
                let reason = (error as? FormatViolation)?.reason ?? "\(error)"
                if options.recovery == .strict {
                    throw JournalError(
                        .damaged,
                        """
                        The checkpoint \(name) is damaged: \(reason). Open the store without strict mode to fall back \
                        to an older checkpoint.
                        """,
                        file: store.file(name))
                }
                result.damagedCheckpoints.append(
                    (
                        candidate,
                        DamageReport(
                            file: name, offset: 0, reason: reason, bytesDropped: 0, lastConsistentEpoch: nil,
                            epochsLost: 0)
                    ))
            }
        }
        guard let firstSegment = manifest.segments.first, try segmentBase(firstSegment) != 0 else { return nil }
        if result.damagedCheckpoints.isEmpty {
            throw JournalError(
                .noSuchEpoch,
                """
                Epoch \(options.through.map(String.init) ?? "0") is older than the history the store retains; list the \
                retained epochs with `statejournal log` (or `history()` in code).
                """
            )
        }
        let names = result.damagedCheckpoints.map { FileNames.checkpoint($0.reference.sequence) }.joined(
            separator: ", ")
        throw JournalError(
            .damaged,
            """
            Nothing consistent is left to replay: the checkpoints \(names) are damaged and the segments before them \
            were compacted away. Restore the store from a backup or start a new one.
            """,
            file: store.file(names))
    }

    /// The base epoch in a segment's header, or 0 when it cannot be read (the scan reports that).
    private func segmentBase(_ sequence: UInt64) throws -> UInt64 {
        try store.header(of: sequence)?.baseEpoch ?? 0
    }

    /// Scans one segment; returns `true` when the scan must not continue to the next one.
    private func scanSegment(
        index: Int, sequence: UInt64, startEpoch: UInt64, expectedBase: UInt64, result: inout ScanResult,
        assembler: inout EpochAssembler, visit: ((EpochInfo, [JournalChange]) throws -> Bool)?
    ) throws -> Bool {
        let isLast = index == manifest.segments.count - 1
        let descriptor: Int32
        do {
            descriptor = try fileSystem.open(path(sequence), .read)
        } catch let error as SystemError where error.errno == ENOENT {
            try reportDamage(
                &result, index: index, offset: 0, committedEnd: 0, fileSize: 0,
                reason: "the segment named by the manifest is missing")
            return true
        }
        defer { fileSystem.close(descriptor) }
        let fileSize = try fileSystem.size(descriptor)
        let limit = isLast ? min(fileSize, options.lastSegmentLimit ?? fileSize) : fileSize
        var reader = FileWindowReader(fileSystem: fileSystem, descriptor: descriptor, limit: limit)

        let decodedHeader = try reader.withBytes(at: 0, count: SegmentHeader.size) { bytes in
            Result<SegmentHeader, FormatViolation> { () throws(FormatViolation) -> SegmentHeader in
                try SegmentHeader.decode(bytes)
            }
        }
        let header: SegmentHeader
        switch decodedHeader {
        case .success(let value)?: header = value
        case .failure(let violation)? where violation.unsupportedVersion != nil:
            throw Self.unsupported(violation, file: path(sequence))
        case .failure(let violation)?:
            try reportDamage(
                &result, index: index, offset: 0, committedEnd: 0, fileSize: fileSize, reason: violation.reason)
            return true
        case nil:
            try reportDamage(
                &result, index: index, offset: 0, committedEnd: 0, fileSize: fileSize,
                reason: "segment is shorter than its header")
            return true
        }
        guard header.storeID == manifest.storeID, header.sequence == sequence else {
            try reportDamage(
                &result, index: index, offset: 0, committedEnd: 0, fileSize: fileSize,
                reason: "segment belongs to another store or position")
            return true
        }
        if header.baseEpoch < startEpoch { return false }
        guard header.baseEpoch == expectedBase else {
            try reportDamage(
                &result, index: index, offset: 0, committedEnd: 0, fileSize: fileSize,
                reason:
                    """
                    segment continues epoch \(header.baseEpoch) but the journal before it ends at epoch \
                    \(expectedBase)
                    """
            )
            return true
        }

        // However the segment's scan ends, its committed changes reach the state before the next one.
        defer { assembler.endSegment() }
        var tail = TailPosition(
            segmentIndex: index, header: header, committedEnd: Int64(SegmentHeader.size), fileSize: fileSize,
            sealed: false,
            segmentPaths: nil, lastMetadata: nil)
        var decoder = BatchDecoder()
        // The paths the segment's committed epochs define. Batch records of an epoch that never
        // committed (a torn tail) define paths too, but they are cut off: a writer that went on
        // numbering after them would write later epochs against numbers no reader knows.
        var committedPathCount = 0

        /// Ends the segment's scan at its last commit: the tail a writer continues from holds only
        /// what committed epochs define.
        func endAtLastCommit() {
            decoder.paths.truncate(to: committedPathCount)
            tail.segmentPaths = decoder.paths
            result.tail = tail
        }
        var scanner = RecordScanner(reader: reader, offset: Int64(SegmentHeader.size), version: header.version)
        var batches = 0
        var entries = 0
        var bytes = 0
        var digest: UInt32 = 0
        var lastEpochInSegment = header.baseEpoch
        // The highest epoch of the commits kept, for when the rest turns out to be an unsynced tail.
        var highestKept = result.highestEpochSeen
        // Buffers of compact commits: the previous version a patch applies to, and what it makes.
        var patchPrevious: [UInt8] = []
        var patchOutput: [UInt8] = []

        /// Ends the scan at a record that is not valid where it is: damage, unless nothing after it
        /// says it had reached the disk (an unsynced tail).
        func damage(_ offset: Int64, _ reason: String) throws {
            assembler.discard()
            endAtLastCommit()
            if index >= manifest.wholeDurableSegments,
                let unsynced = try unsyncedTail(
                    index: index, header: header, at: offset, committedEnd: tail.committedEnd, fileSize: fileSize,
                    reason: reason, lastConsistentEpoch: result.lastEpoch?.epoch)
            {
                result.unsyncedTail = unsynced
                result.highestEpochSeen = highestKept
                return
            }
            try reportDamage(
                &result, index: index, offset: offset, committedEnd: tail.committedEnd, fileSize: fileSize,
                reason: reason)
        }

        /// Checks a decoded commit against what precedes it and commits its epoch; `false` when it
        /// does not match (the damage is then reported).
        func finishCommit(_ commit: CommitRecord, _ record: ScannedRecord, compactPath: UInt64? = nil) throws -> Bool {
            result.highestEpochSeen = max(result.highestEpochSeen, commit.epoch)
            guard commit.epoch > lastEpochInSegment else {
                try damage(record.offset, "epoch \(commit.epoch) does not follow epoch \(lastEpochInSegment)")
                return false
            }
            guard commit.batchCount == batches, commit.entryCount == entries, commit.digest == digest else {
                try damage(
                    record.offset, "commit of epoch \(commit.epoch) does not match the entries before it")
                return false
            }
            guard let metadata = commit.metadata ?? tail.lastMetadata else {
                try damage(record.offset, "commit refers to earlier metadata, but it is the segment's first")
                return false
            }
            tail.lastMetadata = metadata
            tail.lastTimestamp = commit.timestampMilliseconds
            tail.previousCommit = CompactCommit.Previous(
                epoch: commit.epoch, syncedEnd: commit.syncedEnd ?? 0,
                timestampMilliseconds: commit.timestampMilliseconds,
                compactPath: compactPath ?? tail.previousCommit?.compactPath, recordStart: record.offset)
            let changes = assembler.commit()
            let info = EpochInfo(
                epoch: commit.epoch,
                timestamp: Date(timeIntervalSince1970: Double(commit.timestampMilliseconds) / 1000),
                metadata: metadata, entryCount: commit.entryCount, bytes: bytes + record.framedLength)
            lastEpochInSegment = commit.epoch
            highestKept = max(highestKept, commit.epoch)
            result.lastEpoch = info
            tail.committedEnd = record.offset + Int64(record.framedLength)
            batches = 0
            entries = 0
            bytes = 0
            digest = 0
            decoder.startEpoch()
            committedPathCount = decoder.paths.count
            if let visit, try !visit(info, changes) { throw Stop() }
            if let through = options.through, commit.epoch >= through {
                endAtLastCommit()
                throw Stop()
            }
            return true
        }

        while true {
            let step = try scanner.next()
            switch step {
            case .end:
                if batches > 0 {
                    if isLast {
                        result.uncommittedTailBytes = limit - tail.committedEnd
                    } else {
                        try damage(tail.committedEnd, "sealed segment ends inside an epoch")
                        return true
                    }
                } else if !isLast && !tail.sealed {
                    try damage(tail.committedEnd, "segment ends without the seal record a sealed segment needs")
                    return true
                }
                assembler.discard()
                endAtLastCommit()
                return false
            case .invalid(let reason):
                let offset = scanner.offset
                if isLast {
                    // A writer appends over the zeros it wrote ahead while this scan reads, so what
                    // the window saw here may be older than what the reads after it see. Bytes that
                    // changed since the window read them are a record being written, not damage:
                    // this scan's view of the segment ends before them.
                    if try scanner.reader.changedSinceRead(at: offset) {
                        result.uncommittedTailBytes = offset - tail.committedEnd
                        assembler.discard()
                        endAtLastCommit()
                        return false
                    }
                    // Zeros a writer wrote ahead of its records end the segment cleanly: only an
                    // epoch begun before them and never committed is a tail.
                    var zeros = scanner.reader
                    if try zeros.isZero(from: offset) {
                        result.uncommittedTailBytes = offset - tail.committedEnd
                        assembler.discard()
                        endAtLastCommit()
                        return false
                    }
                    var budget = ResyncBudget(fileSize: limit)
                    var probe = scanner.reader
                    if try RecordScanner.resynchronize(
                        in: &probe, after: offset, version: header.version, budget: &budget)
                        == nil
                    {
                        // Up to the zeros written ahead, if any: they are not part of the tail.
                        result.uncommittedTailBytes = try zeros.lengthBeforeTrailingZeros(from: tail.committedEnd)
                        assembler.discard()
                        endAtLastCommit()
                        return false
                    }
                }
                try damage(offset, reason)
                return true
            case .record(let record):
                if tail.sealed {
                    try damage(record.offset, "a record follows the seal record")
                    return true
                }
                switch record.type {
                case .batch:
                    if options.decode {
                        do {
                            entries += try record.payload.withUnsafeBytes { payload in
                                try decoder.decode(payload, into: &assembler)
                            }
                        } catch {
                            try damage(record.offset, (error as? FormatViolation)?.reason ?? "\(error)")
                            return true
                        }
                    } else {
                        let count = record.payload.withUnsafeBytes { payload in
                            var reader = ByteReader(payload)
                            return (try? reader.count(atMost: JournalLimits.maximumBatchEntries, "entries")) ?? 0
                        }
                        entries += count
                    }
                    batches += 1
                    bytes += record.framedLength
                    digest = Self.extendDigest(digest, with: record.checksum)
                case .commit:
                    let commit: CommitRecord
                    do {
                        let previousTimestamp = tail.lastTimestamp
                        let decoded = try record.payload.withUnsafeBytes { payload in
                            let (commit, inlineStart) = try CommitRecord.decode(
                                payload, previousTimestamp: previousTimestamp, version: header.version)
                            let inline = UnsafeRawBufferPointer(rebasing: payload[inlineStart...])
                            var inlineCount = 0
                            if !inline.isEmpty {
                                if options.decode {
                                    inlineCount = try decoder.decode(inline, into: &assembler)
                                } else {
                                    var reader = ByteReader(inline)
                                    inlineCount = try reader.count(
                                        atMost: JournalLimits.maximumBatchEntries, "batch entry count")
                                }
                            }
                            return (commit, inlineCount)
                        }
                        commit = decoded.0
                        entries += decoded.1
                    } catch {
                        try damage(record.offset, (error as? FormatViolation)?.reason ?? "\(error)")
                        return true
                    }
                    guard try finishCommit(commit, record) else { return true }
                case .compactCommit:
                    guard batches == 0, let previous = tail.previousCommit, tail.lastMetadata != nil else {
                        try damage(record.offset, "a compact commit follows no commit or batch records of its epoch")
                        return true
                    }
                    let compact: CompactCommit
                    do {
                        compact = try record.payload.withUnsafeBytes { payload in
                            // Without decoding, batches define no paths: any path number passes.
                            let (compact, patchStart) = try CompactCommit.decode(
                                payload, previous: previous, pathCount: options.decode ? decoder.paths.count : .max,
                                at: record.offset)
                            guard options.decode else { return compact }
                            let index = Int(compact.path) - 1
                            switch compact.operation {
                            case .put:
                                patchPrevious.removeAll(keepingCapacity: true)
                                guard assembler.appendCurrentState(ofPath: index, to: &patchPrevious) else {
                                    throw FormatViolation("compact commit patches a path that has no previous version")
                                }
                                let patch = UnsafeRawBufferPointer(rebasing: payload[patchStart...])
                                try patchPrevious.withUnsafeBytes { old in
                                    try StatePatch.apply(patch, to: old, into: &patchOutput)
                                }
                                patchOutput.withUnsafeBytes { assembler.put(path: index, state: $0) }
                            case .remove: assembler.remove(path: index)
                            case .removeAll: break
                            }
                            return compact
                        }
                    } catch {
                        try damage(record.offset, (error as? FormatViolation)?.reason ?? "\(error)")
                        return true
                    }
                    entries = 1
                    let commit = CommitRecord(
                        epoch: compact.epoch, entryCount: 1, batchCount: 0, digest: 0, syncedEnd: compact.syncedEnd,
                        timestampMilliseconds: compact.timestampMilliseconds, metadata: nil)
                    guard try finishCommit(commit, record, compactPath: compact.path) else { return true }
                case .seal:
                    let seal = try? record.payload.withUnsafeBytes { payload in try SealRecord.decode(payload) }
                    guard let seal, batches == 0, seal.lastEpoch == lastEpochInSegment else {
                        try damage(record.offset, "seal record does not match the segment")
                        return true
                    }
                    tail.sealed = true
                    tail.committedEnd = record.offset + Int64(record.framedLength)
                }
            }
        }
    }

    static func extendDigest(_ digest: UInt32, with checksum: UInt32) -> UInt32 {
        withUnsafeBytes(of: checksum.littleEndian) { CRC32C.checksum($0, continuing: digest) }
    }

    /// Records damage: throws in strict mode, otherwise fills in the report, counting what is lost.
    private func reportDamage(
        _ result: inout ScanResult, index: Int, offset: Int64, committedEnd: Int64, fileSize: Int64, reason: String
    ) throws {
        let name = FileNames.segment(manifest.segments[index])
        if options.recovery == .strict {
            throw JournalError(
                .damaged,
                """
                The journal is damaged: \(reason). Open it without strict mode to recover the last consistent epoch, \
                or restore the store from a backup.
                """,
                file: directory + "/" + name, offset: offset)
        }
        var lost = 0
        var dropped = fileSize - committedEnd
        var highest = result.highestEpochSeen
        try countIntactCommits(segmentIndex: index, after: offset, lost: &lost, highest: &highest)
        for later in manifest.segments.dropFirst(index + 1) {
            if let descriptor = try openIfPresent(later) {
                defer { fileSystem.close(descriptor) }
                dropped += try fileSystem.size(descriptor)
            }
            try countIntactCommits(
                segmentIndex: manifest.segments.firstIndex(of: later)!, after: Int64(SegmentHeader.size) - 1,
                lost: &lost, highest: &highest)
        }
        result.highestEpochSeen = highest
        result.damage = DamageReport(
            file: name, offset: offset, reason: reason, bytesDropped: dropped,
            lastConsistentEpoch: result.lastEpoch?.epoch,
            epochsLost: lost)
        result.damagePosition = DamagePosition(segmentIndex: index, offset: offset)
    }

    /// Opens a segment for reading, or returns `nil` when it does not exist. Any other failure throws:
    /// the epochs counted beyond damage decide which numbers are never used again, so a segment that
    /// could not be read must not pass for one without epochs.
    private func openIfPresent(_ sequence: UInt64) throws -> Int32? {
        try store.openIfPresent(FileNames.segment(sequence))
    }

    /// Counts intact commit records after `offset`, skipping over damage, to say what damage cost.
    private func countIntactCommits(segmentIndex: Int, after offset: Int64, lost: inout Int, highest: inout UInt64)
        throws
    {
        let sequence = manifest.segments[segmentIndex]
        if let known = damageCounts?.counts[DamageCounts.Key(sequence: sequence, offset: offset)] {
            lost += known.commits
            highest = max(highest, known.highestEpoch)
            return
        }
        let version = try store.header(of: sequence)?.version ?? FormatVersion.current
        var commits = 0
        var highestEpoch: UInt64 = 0
        try forEachIntactCommit(segmentIndex: segmentIndex, after: offset, version: version) { commit in
            commits += 1
            highestEpoch = max(highestEpoch, commit.epoch)
            return true
        }
        damageCounts?.counts[DamageCounts.Key(sequence: sequence, offset: offset)] = (commits, highestEpoch)
        lost += commits
        highest = max(highest, highestEpoch)
    }

    /// Calls `body` with each intact commit record after `offset` in a segment, skipping over
    /// anything that is not a valid record, until `body` returns `false`.
    private func forEachIntactCommit(
        segmentIndex: Int, after offset: Int64, version: UInt16, _ body: (CommitRecord) throws -> Bool
    ) throws {
        guard let descriptor = try openIfPresent(manifest.segments[segmentIndex]) else { return }
        defer { fileSystem.close(descriptor) }
        try Self.forEachIntactCommit(
            fileSystem: fileSystem, descriptor: descriptor, after: offset, version: version, body)
    }

    /// Calls `body` with each intact commit record after `offset` in an open segment file, skipping
    /// over anything that is not a valid record, until `body` returns `false`.
    static func forEachIntactCommit(
        fileSystem: any FileSystem, descriptor: Int32, after offset: Int64, version: UInt16,
        _ body: (CommitRecord) throws -> Bool
    ) throws {
        let size = try fileSystem.size(descriptor)
        var reader = FileWindowReader(fileSystem: fileSystem, descriptor: descriptor, limit: size)
        var budget = ResyncBudget(fileSize: size)
        var position = offset
        while let record = try RecordScanner.resynchronize(
            in: &reader, after: position, version: version, budget: &budget)
        {
            // After a gap nothing is known of the commit before: a compact commit that repeats its
            // synced end does not say how far the segment was synced (a commit that does not say
            // counts as vouching for everything, so damage is never taken for an unsynced tail).
            var previous: CompactCommit.Previous?
            var previousSyncedEndKnown = false
            var scanner = RecordScanner(reader: reader, offset: record.offset, version: version)
            scanLoop: while true {
                switch try scanner.next() {
                case .record(let next):
                    var decoded: CommitRecord?
                    if next.type == .commit {
                        decoded = try? next.payload.withUnsafeBytes { payload in
                            try CommitRecord.decode(payload, previousTimestamp: 0, version: version).record
                        }
                    } else if next.type == .compactCommit {
                        decoded = try? next.payload.withUnsafeBytes { payload in
                            let repeats = (payload.first ?? 0) & CompactCommit.sameSyncedEnd != 0
                            let before =
                                previous
                                ?? CompactCommit.Previous(
                                    epoch: 0, syncedEnd: 0, timestampMilliseconds: 0, compactPath: 1,
                                    recordStart: next.offset)
                            let compact = try CompactCommit.decode(
                                payload, previous: before, pathCount: Int.max, at: next.offset
                            ).record
                            return CommitRecord(
                                epoch: compact.epoch, entryCount: 1, batchCount: 0, digest: 0,
                                syncedEnd: repeats && !previousSyncedEndKnown ? nil : compact.syncedEnd,
                                timestampMilliseconds: compact.timestampMilliseconds, metadata: nil)
                        }
                    }
                    if let commit = decoded {
                        previous = CompactCommit.Previous(
                            epoch: commit.epoch, syncedEnd: commit.syncedEnd ?? 0,
                            timestampMilliseconds: commit.timestampMilliseconds, compactPath: 1,
                            recordStart: next.offset)
                        previousSyncedEndKnown = commit.syncedEnd != nil
                        if try !body(commit) { return }
                    } else if next.type == .commit || next.type == .compactCommit {
                        previous = nil
                        previousSyncedEndKnown = false
                    }
                case .end: return
                case .invalid: break scanLoop
                }
            }
            reader = scanner.reader
            position = scanner.offset
        }
    }

    /// Decides whether a bad record at `offset` in the segment at `index` (the last one whose start
    /// a manifest vouches for, or one after it found through the chain of seals) begins an unsynced
    /// tail, and describes it; `nil` means damage.
    ///
    /// The writer stores in every commit record how far a sync had confirmed the segment
    /// (``CommitRecord/syncedEnd``), and moves that into a new segment only after the one before it
    /// is synced whole. So the bad bytes had reached the disk, and are damage, exactly when an
    /// intact commit record after them in the segment has a synced end beyond `offset`, or one in a
    /// later segment of the chain has a synced end above 0. Otherwise nothing the writer knew
    /// durable is lost by cutting the journal at its last consistent commit: the rest was written
    /// after the last sync, and a power cut kept some of it and not the rest. Segments of format
    /// version 1 do not say, and keep the rule of that version: damage.
    private func unsyncedTail(
        index: Int, header: SegmentHeader, at offset: Int64, committedEnd: Int64, fileSize: Int64, reason: String,
        lastConsistentEpoch: UInt64?
    ) throws -> UnsyncedTail? {
        guard header.version >= FormatVersion.syncedEndInCommits else { return nil }
        var vouched = false
        var epochs = 0
        try forEachIntactCommit(segmentIndex: index, after: offset, version: header.version) { commit in
            if (commit.syncedEnd ?? .max) > UInt64(offset) { vouched = true }
            epochs += 1
            return !vouched
        }
        if vouched { return nil }
        var bytes = fileSize - committedEnd
        for later in (index + 1)..<manifest.segments.count {
            guard let laterHeader = try store.header(of: manifest.segments[later]),
                laterHeader.version >= FormatVersion.syncedEndInCommits
            else { return nil }
            let start = Int64(SegmentHeader.size) - 1
            try forEachIntactCommit(segmentIndex: later, after: start, version: laterHeader.version) { commit in
                if (commit.syncedEnd ?? .max) > 0 { vouched = true }
                epochs += 1
                return !vouched
            }
            if vouched { return nil }
            bytes += try store.fileSize(FileNames.segment(manifest.segments[later]))
        }
        return UnsyncedTail(
            file: FileNames.segment(manifest.segments[index]), offset: offset, reason: reason, bytesDropped: bytes,
            epochsDropped: epochs, lastConsistentEpoch: lastConsistentEpoch)
    }
}

/// The intact commits found after damage, by segment and offset, shared by the scans of one check
/// of a store whose files do not change meanwhile.
final class DamageCounts {
    struct Key: Hashable {
        var sequence: UInt64
        var offset: Int64
    }
    var counts: [Key: (commits: Int, highestEpoch: UInt64)] = [:]
}
