#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The files of one store directory: its manifest, its lock, its segments.
struct StoreDirectory {
    let fileSystem: any FileSystem
    let path: String

    func file(_ name: String) -> String { path + "/" + name }

    /// The directory that holds `path`'s entry: `.` for a relative name without a slash.
    static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    /// The directory's names, or `nil` when it does not exist.
    func names() throws -> [String]? {
        do {
            return try fileSystem.contentsOfDirectory(path)
        } catch let error as SystemError where error.errno == ENOENT {
            return nil
        } catch {
            throw JournalError(
                .ioFailure, "Could not list the store directory \(path).", cause: error as? SystemError, file: path)
        }
    }

    /// Reads and checks the manifest, with the segments that continue its last one (see
    /// ``followingSealedSegments(of:)``).
    ///
    /// - Throws: ``JournalError`` only: a failed system call becomes ``JournalError/Code/ioFailure``.
    func readManifest() throws -> Manifest {
        do {
            return try followingSealedSegments(of: try readManifestFile())
        } catch let error as SystemError {
            throw Journal.ioError(error, "read the manifest of the store at \(path)", file: file(FileNames.manifest))
        }
    }

    /// Reads and checks the manifest file alone, as it was last written.
    ///
    /// - Throws: ``JournalError`` only: a failed system call becomes ``JournalError/Code/ioFailure``.
    func readStoredManifest() throws -> Manifest {
        do {
            return try readManifestFile()
        } catch let error as SystemError {
            throw Journal.ioError(error, "read the manifest of the store at \(path)", file: file(FileNames.manifest))
        }
    }

    private func readManifestFile() throws -> Manifest {
        let descriptor: Int32
        do {
            descriptor = try fileSystem.open(file(FileNames.manifest), .read)
        } catch let error as SystemError where error.errno == ENOENT {
            throw JournalError(
                .notAStore, "\(path) is not a StateJournal store: it has no MANIFEST file.", cause: error, file: path)
        }
        defer { fileSystem.close(descriptor) }
        let size = try fileSystem.size(descriptor)
        guard size <= Int64(Manifest.maximumSize) else {
            throw JournalError(
                .damaged,
                "The manifest is \(size) bytes, larger than any valid manifest; the store cannot be read safely.",
                file: file(FileNames.manifest))
        }
        let bytes = try fileSystem.read(descriptor, count: Int(size), at: 0)
        do {
            return try bytes.withUnsafeBytes { buffer in try Manifest.decode(buffer) }
        } catch {
            let reason = (error as? FormatViolation)?.reason ?? "\(error)"
            let unsupported = (error as? FormatViolation)?.unsupportedVersion != nil
            throw JournalError(
                unsupported ? .unsupportedFormat : .damaged,
                unsupported
                    ? """
                    The store was written by another format version (\(reason)); open it with a matching StateJournal \
                    release.
                    """
                    : """
                    The manifest is damaged (\(reason)); the store cannot be opened. Restore it from a backup or start \
                    a new store.
                    """,
                cause: error, file: file(FileNames.manifest))
        }
    }

    /// Replaces the manifest atomically.
    ///
    /// - Throws: ``JournalError/Code/limitExceeded``, writing nothing, when the manifest would name
    ///   more checkpoints or segments than the format allows: a reader would refuse it, so the
    ///   store would no longer open.
    func writeManifest(_ manifest: Manifest) throws {
        guard manifest.checkpoints.count <= Manifest.maximumCheckpoints,
            manifest.segments.count <= Manifest.maximumSegments
        else {
            throw JournalError(
                .limitExceeded,
                """
                The manifest would name \(manifest.checkpoints.count) checkpoints and \(manifest.segments.count) \
                segments, more than the format allows (\(Manifest.maximumCheckpoints) and \(Manifest.maximumSegments)); \
                it was not written. Compact the store with a retention policy that lets older history go.
                """,
                file: file(FileNames.manifest))
        }
        try fileSystem.replaceAtomically(file(FileNames.manifest), in: path, with: manifest.encoded())
    }

    /// Creates an empty segment file, ahead of the roll that writes its header, and syncs the
    /// directory, so that the file's name is durable before anything is committed in it.
    func createEmptySegment(_ sequence: UInt64) throws -> Int32 {
        let descriptor = try fileSystem.open(file(FileNames.segment(sequence)), .createNew)
        do {
            try fileSystem.syncDirectory(path)
        } catch {
            fileSystem.close(descriptor)
            try? fileSystem.remove(file(FileNames.segment(sequence)))
            throw error
        }
        return descriptor
    }

    /// Creates a segment file holding only its header, synced, and syncs the directory.
    func createSegment(_ header: SegmentHeader) throws -> Int32 {
        let name = file(FileNames.segment(header.sequence))
        let descriptor = try fileSystem.open(name, .createNew)
        do {
            try fileSystem.writeAll(descriptor, header.encoded(), at: 0)
            try fileSystem.fullSync(descriptor)
            try fileSystem.syncDirectory(path)
        } catch {
            fileSystem.close(descriptor)
            throw error
        }
        return descriptor
    }

    /// Opens a file of the store for reading, or returns `nil` when it does not exist. Any other
    /// failure throws: a file that could not be read must not pass for one that is not there.
    func openIfPresent(_ name: String) throws -> Int32? {
        do {
            return try fileSystem.open(file(name), .read)
        } catch let error as SystemError where error.errno == ENOENT {
            return nil
        }
    }

    /// A segment's header, or `nil` when the file is missing or its header is not intact.
    func header(of sequence: UInt64) throws -> SegmentHeader? {
        guard let descriptor = try openIfPresent(FileNames.segment(sequence)) else { return nil }
        defer { fileSystem.close(descriptor) }
        let bytes = try fileSystem.read(descriptor, count: SegmentHeader.size, at: 0)
        return try? bytes.withUnsafeBytes { try SegmentHeader.decode($0) }
    }

    /// The base epoch in a segment's header.
    func segmentBase(_ sequence: UInt64) throws -> UInt64 {
        let descriptor = try fileSystem.open(file(FileNames.segment(sequence)), .read)
        defer { fileSystem.close(descriptor) }
        let bytes = try fileSystem.read(descriptor, count: SegmentHeader.size, at: 0)
        do {
            return try bytes.withUnsafeBytes { try SegmentHeader.decode($0) }.baseEpoch
        } catch {
            throw JournalError(
                .damaged, "The header of \(FileNames.segment(sequence)) is damaged.", cause: error as? FormatViolation,
                file: file(FileNames.segment(sequence)))
        }
    }

    /// A file's size.
    func fileSize(_ name: String) throws -> Int64 {
        let descriptor = try fileSystem.open(file(name), .read)
        defer { fileSystem.close(descriptor) }
        return try fileSystem.size(descriptor)
    }

    /// Whether a segment file holds more than a header. A symbolic link planted under a segment's
    /// name is never opened (the open refuses to follow it) and holds nothing.
    private func holdsRecords(_ name: String) throws -> Bool {
        do {
            return try fileSize(name) > Int64(SegmentHeader.size)
        } catch let error as SystemError where error.errno == ELOOP {
            return false
        }
    }

    /// Whether a name is one this library writes (and so may delete as a leftover).
    static func isStoreFile(_ name: String) -> Bool {
        name == FileNames.manifest || name == FileNames.lock || name == FileNames.crashNote
            || name == FileNames.historyHold || name.hasSuffix(FileNames.temporarySuffix)
            || FileNames.segmentSequence(name) != nil || FileNames.checkpointSequence(name) != nil
            || name.hasPrefix("damaged-")
    }

    /// Removes segments, checkpoints and temporary files the manifest does not name: leftovers of a
    /// crash between writing a file and committing the manifest that names it.
    ///
    /// A segment newer than every segment the manifest names that holds more than its header is
    /// one a roll started. When none of its commit records says that a sync had reached it, the
    /// seal that led to it did not reach the disk before a power cut, so nothing in it was durable:
    /// it is an unsynced tail, and removed (``unsynced``). Otherwise it is set aside (renamed
    /// `damaged-…`): records that were synced, which no manifest and no seal leads to, mean damage,
    /// and the evidence is kept. An older unnamed segment is one that retention dropped, whose
    /// deletion did not happen.
    ///
    /// - Returns: the names removed, the names set aside, and the unsynced segments removed, with
    ///   their sizes and the commit records in them.
    func removeLeftovers(
        keeping manifest: Manifest, names: [String]
    ) throws -> (removed: [String], setAside: [String], unsynced: [(name: String, bytes: Int64, commits: Int)]) {
        var removed: [String] = []
        var setAside: [String] = []
        var unsynced: [(name: String, bytes: Int64, commits: Int)] = []
        for name in names {
            let isLeftover: Bool
            if name.hasSuffix(FileNames.temporarySuffix) {
                isLeftover = true
            } else if let sequence = FileNames.segmentSequence(name) {
                isLeftover = !manifest.segments.contains(sequence)
                if isLeftover, sequence > manifest.segments.max() ?? 0, try holdsRecords(name) {
                    if let commits = try unsyncedCommits(in: name) {
                        unsynced.append((name, try fileSize(name), commits))
                        try fileSystem.remove(file(name))
                        removed.append(name)
                        continue
                    }
                    let target = FileNames.quarantine(sequence, offset: 0)
                    try fileSystem.rename(file(name), to: file(target))
                    setAside.append(target)
                    continue
                }
            } else if let sequence = FileNames.checkpointSequence(name) {
                isLeftover = !manifest.checkpoints.contains { $0.sequence == sequence }
            } else {
                isLeftover = false
            }
            if isLeftover {
                try fileSystem.remove(file(name))
                removed.append(name)
            }
        }
        if !removed.isEmpty || !setAside.isEmpty { try fileSystem.syncDirectory(path) }
        return (removed, setAside, unsynced)
    }

    /// The number of commit records in a segment no manifest or seal names, when none of them says
    /// a sync had reached the segment; `nil` when one does, or when the segment is of format
    /// version 1, which does not say.
    private func unsyncedCommits(in name: String) throws -> Int? {
        let descriptor = try fileSystem.open(file(name), .read)
        defer { fileSystem.close(descriptor) }
        let bytes = try fileSystem.read(descriptor, count: SegmentHeader.size, at: 0)
        // A header that did not reach the disk is no reason to think the records did.
        let version = (try? bytes.withUnsafeBytes { try SegmentHeader.decode($0) })?.version ?? FormatVersion.current
        guard version >= FormatVersion.syncedEndInCommits else { return nil }
        var commits = 0
        var synced = false
        try JournalScanner.forEachIntactCommit(
            fileSystem: fileSystem, descriptor: descriptor, after: Int64(SegmentHeader.size) - 1, version: version
        ) { commit in
            commits += 1
            synced = (commit.syncedEnd ?? .max) > 0
            return !synced
        }
        return synced ? nil : commits
    }
}
