import Foundation

/// The files of a store's current generation, as its manifest names them: the retained
/// checkpoints (each one written by a compaction) and the segments, with their sizes.
public struct StoreFiles: Sendable, Hashable {
    /// One retained checkpoint: the state as of an epoch, folded by a compaction.
    public struct Checkpoint: Sendable, Hashable {
        /// The file's name, relative to the store directory.
        public var file: String
        /// The epoch whose state it holds.
        public var epoch: UInt64
        /// When that epoch was committed.
        public var epochTimestamp: Date
        /// The file's size in bytes (0 when it could not be read).
        public var bytes: Int64
        /// When the compaction wrote the file (its modification time), when known.
        public var written: Date?
    }

    /// One retained segment.
    public struct Segment: Sendable, Hashable {
        /// The file's name, relative to the store directory.
        public var file: String
        /// The file's size in bytes (0 when it could not be read).
        public var bytes: Int64
    }

    /// The manifest's generation: it grows with every change to the set of files.
    public var generation: UInt64
    /// The retained checkpoints, oldest first.
    public var checkpoints: [Checkpoint]
    /// The retained segments, oldest first.
    public var segments: [Segment]
    /// The size of the manifest, the checkpoints and the segments together, in bytes.
    public var totalBytes: Int64
}

extension StoreInspector {
    /// The files the store's manifest names now, with their sizes: what compaction left and what
    /// the journal holds. Reads the directory only; a file a writer removes meanwhile shows with
    /// 0 bytes.
    ///
    /// - Throws: ``JournalError/Code/notAStore`` or ``JournalError/Code/damaged`` when the manifest
    ///   cannot be read.
    public func files() throws -> StoreFiles {
        let path = reader.directory.path
        let manifest = try StoreDirectory(fileSystem: PosixFileSystem(), path: path).readManifest()
        func attributes(_ name: String) -> (bytes: Int64, modified: Date?) {
            let values = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
            return ((values?[.size] as? NSNumber)?.int64Value ?? 0, values?[.modificationDate] as? Date)
        }
        let checkpoints = manifest.checkpoints.map { reference in
            let name = FileNames.checkpoint(reference.sequence)
            let (bytes, modified) = attributes(name)
            return StoreFiles.Checkpoint(
                file: name, epoch: reference.epoch,
                epochTimestamp: Date(timeIntervalSince1970: Double(reference.timestampMilliseconds) / 1000),
                bytes: bytes, written: modified)
        }
        let segments = manifest.segments.map { sequence in
            let name = FileNames.segment(sequence)
            return StoreFiles.Segment(file: name, bytes: attributes(name).bytes)
        }
        let total =
            attributes(FileNames.manifest).bytes + checkpoints.reduce(0) { $0 + $1.bytes }
            + segments.reduce(0) { $0 + $1.bytes }
        return StoreFiles(
            generation: manifest.generation, checkpoints: checkpoints, segments: segments, totalBytes: total)
    }
}
