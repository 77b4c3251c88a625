import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The files of one consistent generation of a store, described for copying them elsewhere (a
/// backup, object storage) without knowing their format: which files there are, which of them will
/// never change again, and how many bytes of each hold committed epochs.
///
/// Read it with ``JournalReader/fileSet()``. Copying the first ``File/length`` bytes of each file
/// into an empty directory, then calling ``assembleStore(in:through:)`` there, gives a store that
/// opens to the same epochs.
public struct StoreFileSet: Sendable, Hashable {
    /// What a file holds.
    public enum Kind: Sendable, Hashable {
        /// The state as of one epoch, written by compaction; never changes.
        case checkpoint
        /// Records of epochs, appended to until the segment is sealed.
        case segment
    }

    /// One file of the store.
    public struct File: Sendable, Hashable {
        /// The file's name in the store directory.
        public var name: String
        /// What it holds.
        public var kind: Kind
        /// Its sequence number: segments and checkpoints share one sequence, and a name is never reused.
        public var sequence: UInt64
        /// For a checkpoint, the epoch it holds; for a segment, the last epoch before its first.
        public var baseEpoch: UInt64
        /// For a checkpoint, the epoch it holds; for a segment, the last epoch committed in it as
        /// far as ``length`` (its base epoch when it holds none).
        public var lastEpoch: UInt64
        /// For a checkpoint, the time of its epoch, in milliseconds since 1970 UTC; 0 for segments.
        public var timestampMilliseconds: UInt64
        /// Whether the file will never change: a checkpoint, or a segment that ends with its seal.
        public var isSealed: Bool
        /// The bytes to copy, from the start of the file: all of a sealed file; for the live
        /// segment, up to the end of its last committed epoch.
        public var length: Int64

        /// Creates a description of one file.
        public init(
            name: String, kind: Kind, sequence: UInt64, baseEpoch: UInt64, lastEpoch: UInt64,
            timestampMilliseconds: UInt64, isSealed: Bool, length: Int64
        ) {
            self.name = name
            self.kind = kind
            self.sequence = sequence
            self.baseEpoch = baseEpoch
            self.lastEpoch = lastEpoch
            self.timestampMilliseconds = timestampMilliseconds
            self.isSealed = isSealed
            self.length = length
        }
    }

    /// The name a store gives the file of `kind` with `sequence`: the only names a copy of a store
    /// may use, so that a copier that derives names from validated fields never takes one from its
    /// input.
    public static func fileName(of kind: Kind, sequence: UInt64) -> String {
        switch kind {
        case .checkpoint: FileNames.checkpoint(sequence)
        case .segment: FileNames.segment(sequence)
        }
    }

    /// The names ``assembleStore(in:through:)`` may create in the directory besides the set's
    /// files: the manifest and its temporary file.
    public static let assembledFileNames = [FileNames.manifest, FileNames.manifest + FileNames.temporarySuffix]

    /// The store's id, in hex: the same in every file of the store.
    public var storeID: String
    /// The manifest's generation this set was read from.
    public var generation: UInt64
    /// The next file sequence number the store would give.
    public var nextFileSequence: UInt64
    /// The store's epoch floor (the next epoch committed is greater).
    public var epochFloor: UInt64
    /// The checkpoints, oldest first, then the segments, oldest first.
    public var files: [File]
    /// The last committed epoch in these files. When nothing is committed after the newest
    /// checkpoint it is the checkpoint's epoch and time, without its metadata, entry count and
    /// bytes (the checkpoint is not read).
    public var lastEpoch: EpochInfo?

    /// Creates a description of a set of files.
    public init(
        storeID: String, generation: UInt64, nextFileSequence: UInt64, epochFloor: UInt64, files: [File],
        lastEpoch: EpochInfo?
    ) {
        self.storeID = storeID
        self.generation = generation
        self.nextFileSequence = nextFileSequence
        self.epochFloor = epochFloor
        self.files = files
        self.lastEpoch = lastEpoch
    }
}

extension JournalReader {
    /// The files of the store's current generation, with the committed length of each: what a copy
    /// must hold to open to the latest epoch a read sees now.
    ///
    /// It reads the segments after the newest checkpoint, checking their framing and commit
    /// records, and does not decompress the checkpoint, so that a shipper can call it every second
    /// beside the app.
    ///
    /// - Throws: ``JournalError/Code/damaged`` when the files are damaged before their last commit
    ///   (a copy of them would be too), ``JournalError/Code/ioFailure``.
    public func fileSet() throws -> StoreFileSet {
        try JournalReading.consistently(
            fileSystem: fileSystem, directory: directory.path,
            { (try StoreDirectory(fileSystem: fileSystem, path: directory.path).readManifest(), nil) }
        ) { manifest, _, files in
            let store = StoreDirectory(fileSystem: files, path: directory.path)
            let scan: ScanResult
            do {
                scan = try JournalScanner(
                    fileSystem: files, directory: directory.path, manifest: manifest,
                    options: ScanOptions(decode: false, recovery: .stopAtDamage, skipsCheckpoint: true)
                ).run()
            } catch let error as SystemError {
                throw Journal.ioError(error, "read the journal in \(directory.path)")
            }
            if let damage = scan.damage {
                throw JournalError(
                    .damaged,
                    "The store is damaged in \(damage.file) at offset \(damage.offset) (\(damage.reason)); a copy would be too. Run `statejournal verify`.",
                    file: directory.path + "/" + damage.file, offset: damage.offset)
            }
            var result: [StoreFileSet.File] = manifest.checkpoints.map { checkpoint in
                let name = FileNames.checkpoint(checkpoint.sequence)
                return StoreFileSet.File(
                    name: name, kind: .checkpoint, sequence: checkpoint.sequence, baseEpoch: checkpoint.epoch,
                    lastEpoch: checkpoint.epoch, timestampMilliseconds: checkpoint.timestampMilliseconds,
                    isSealed: true, length: (try? store.fileSize(name)) ?? 0)
            }
            do {
                let bases = try manifest.segments.map { try store.segmentBase($0) }
                for (index, sequence) in manifest.segments.enumerated() {
                    let name = FileNames.segment(sequence)
                    let isLast = index == manifest.segments.count - 1
                    let tail = scan.tail.flatMap { $0.segmentIndex == index ? $0 : nil }
                    let sealed = !isLast || tail?.sealed == true
                    let length = sealed ? try store.fileSize(name) : tail?.committedEnd ?? Int64(SegmentHeader.size)
                    let last = isLast ? max(scan.lastEpoch?.epoch ?? bases[index], bases[index]) : bases[index + 1]
                    result.append(
                        StoreFileSet.File(
                            name: name, kind: .segment, sequence: sequence, baseEpoch: bases[index], lastEpoch: last,
                            timestampMilliseconds: 0, isSealed: sealed, length: length))
                }
            } catch let error as SystemError {
                throw Journal.ioError(error, "read the segments in \(directory.path)")
            }
            // With no commit after the newest checkpoint, the last epoch is the checkpoint's.
            let lastEpoch =
                scan.lastEpoch
                ?? manifest.checkpoints.last.map {
                    EpochInfo(
                        epoch: $0.epoch,
                        timestamp: Date(timeIntervalSince1970: Double($0.timestampMilliseconds) / 1000),
                        metadata: [:], entryCount: 0, bytes: 0)
                }
            return StoreFileSet(
                storeID: manifest.storeID.description, generation: manifest.generation,
                nextFileSequence: manifest.nextFileSequence, epochFloor: manifest.epochFloor, files: result,
                lastEpoch: lastEpoch)
        }
    }
}

extension StoreFileSet {
    /// Makes `directory`, which holds the first ``File/length`` bytes of each of this set's files
    /// under their names, a store: writes its manifest (synced), and when `epoch` is given, cuts
    /// the journal just after that epoch, so that it is the store's latest.
    ///
    /// - Returns: the store's latest epoch.
    /// - Throws: ``JournalError/Code/noSuchEpoch`` when `epoch` is not in the files,
    ///   ``JournalError/Code/invalidPath`` for a store id that is not 32 hex digits,
    ///   ``JournalError/Code/ioFailure``.
    @discardableResult
    public func assembleStore(in directory: URL, through epoch: UInt64? = nil) throws -> EpochInfo? {
        try assembleStore(in: directory, through: epoch, isCancelled: nil)
    }

    /// ``assembleStore(in:through:)``, which throws `CancellationError` within a read of
    /// `isCancelled` returning `true`: the scan that finds the latest epoch reads every file, and a
    /// forged one can make it long. With `findingLatest` false and no `epoch`, it writes the
    /// manifest alone, reads nothing and returns `nil`: for a caller that verifies the store next,
    /// which finds the latest epoch as it reads the files.
    @discardableResult
    package func assembleStore(
        in directory: URL, through epoch: UInt64? = nil, isCancelled: (@Sendable () -> Bool)?,
        findingLatest: Bool = true
    ) throws -> EpochInfo? {
        guard storeID.count == 32, let idBytes = Self.bytes(fromHex: storeID) else {
            throw JournalError(.invalidPath, "\(storeID) is not a store id (32 hex digits).")
        }
        let fileSystem: any FileSystem =
            isCancelled.map { CancellableFileSystem(base: PosixFileSystem(), isCancelled: $0) } ?? PosixFileSystem()
        let store = StoreDirectory(fileSystem: fileSystem, path: directory.path)
        var manifest = Manifest(
            storeID: StoreID(bytes: idBytes), generation: generation, nextFileSequence: nextFileSequence,
            epochFloor: epochFloor,
            checkpoints: files.filter { $0.kind == .checkpoint }.map {
                Manifest.CheckpointReference(
                    sequence: $0.sequence, epoch: $0.lastEpoch, timestampMilliseconds: $0.timestampMilliseconds)
            },
            segments: files.filter { $0.kind == .segment }.map(\.sequence))
        do {
            try store.writeManifest(manifest)
            // The framing and commits decide the latest epoch; the state is neither decoded nor held,
            // so that assembling a store takes the same memory whatever its size.
            guard let epoch else {
                guard findingLatest else { return nil }
                return try JournalReading.wrap(directory.path) {
                    try JournalScanner(
                        fileSystem: fileSystem, directory: directory.path, manifest: manifest,
                        options: ScanOptions(decode: false, recovery: .stopAtDamage, streamsCheckpoint: true)
                    ).run()
                }.lastEpoch
            }
            let scan = try JournalScanner(
                fileSystem: fileSystem, directory: directory.path, manifest: manifest,
                options: ScanOptions(through: epoch, decode: false, recovery: .stopAtDamage, streamsCheckpoint: true)
            ).run()
            guard let reached = scan.lastEpoch, reached.epoch == epoch else {
                throw JournalError(
                    .noSuchEpoch,
                    "Epoch \(epoch) is not in these files; they hold epochs up to \(scan.lastEpoch.map { String($0.epoch) } ?? "none")."
                )
            }
            // The segment that ends with the epoch's commit: where the scan stopped, or, when the
            // epoch is a checkpoint's, the segment that follows that checkpoint.
            var keptSegments = manifest.segments.count
            var cut: (sequence: UInt64, end: Int64)?
            if let tail = scan.tail {
                keptSegments = tail.segmentIndex + 1
                cut = (manifest.segments[tail.segmentIndex], tail.committedEnd)
            } else if let index = try manifest.segments.firstIndex(where: { try store.segmentBase($0) == epoch }) {
                keptSegments = index + 1
                cut = (manifest.segments[index], Int64(SegmentHeader.size))
            }
            let dropped = manifest.segments[keptSegments...]
            manifest.segments = Array(manifest.segments[..<keptSegments])
            let droppedCheckpoints = manifest.checkpoints.filter { $0.epoch > epoch }
            manifest.checkpoints.removeAll { $0.epoch > epoch }
            manifest.epochFloor = min(manifest.epochFloor, epoch)
            manifest.generation += 1
            if let cut {
                let descriptor = try fileSystem.open(store.file(FileNames.segment(cut.sequence)), .readWrite)
                defer { fileSystem.close(descriptor) }
                try fileSystem.truncate(descriptor, to: cut.end)
                try fileSystem.fullSync(descriptor)
            }
            try store.writeManifest(manifest)
            for sequence in dropped { try? fileSystem.remove(store.file(FileNames.segment(sequence))) }
            for checkpoint in droppedCheckpoints {
                try? fileSystem.remove(store.file(FileNames.checkpoint(checkpoint.sequence)))
            }
            try fileSystem.syncDirectory(directory.path)
            return reached
        } catch let error as SystemError {
            throw Journal.ioError(error, "assemble the store in \(directory.path)")
        }
    }

    static func bytes(fromHex text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) ?? text.endIndex
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
