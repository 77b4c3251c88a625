import Foundation

/// Writes and reads checkpoint files: one LZ4 frame (with content checksum) around
/// ``CheckpointContent``, so that `lz4 -t` can test a checkpoint and `lz4 -d` can unpack it.
enum CheckpointFile {
    /// Writes the checkpoint, syncs it and its directory entry, and returns its size.
    static func write(_ content: CheckpointContent, in store: StoreDirectory) throws -> Int64 {
        let fileSystem = store.fileSystem
        let path = store.file(FileNames.checkpoint(content.sequence))
        let descriptor = try fileSystem.open(path, .createNew)
        var offset: Int64 = 0
        do {
            let compressor = try LZ4FrameCompressor()
            func emit(_ bytes: [UInt8]) throws {
                guard !bytes.isEmpty else { return }
                try fileSystem.writeAll(descriptor, bytes, at: offset)
                offset += Int64(bytes.count)
            }
            try emit(try compressor.begin())
            try content.serialize { try emit(try compressor.update($0)) }
            try emit(try compressor.end())
            try fileSystem.fullSync(descriptor)
        } catch {
            fileSystem.close(descriptor)
            try? fileSystem.remove(path)
            throw error
        }
        fileSystem.close(descriptor)
        try fileSystem.syncDirectory(store.path)
        return offset
    }

    /// Reads and checks the checkpoint a manifest names.
    ///
    /// Decompression stops at 255 times the file size (LZ4's largest ratio) plus a margin, so a
    /// damaged frame cannot make it allocate beyond what the file could hold. A large checkpoint is
    /// decoded on a second thread while it is decompressed (``loadPipelined(_:size:limit:fileSystem:)``)
    /// unless `pipelined` says otherwise; the result, or the error, is the same either way.
    static func load(
        _ reference: Manifest.CheckpointReference, storeID: StoreID, in store: StoreDirectory, pipelined: Bool? = nil
    ) throws -> CheckpointContent {
        let fileSystem = store.fileSystem
        let descriptor = try fileSystem.open(store.file(FileNames.checkpoint(reference.sequence)), .read)
        defer { fileSystem.close(descriptor) }
        let size = try fileSystem.size(descriptor)
        let limit = Int(min(Int64(Int32.max), size * 255 + (1 << 20)))
        var loaded: CheckpointContent?
        if pipelined ?? loadsPipelined(size: size) {
            loaded = try loadPipelined(descriptor, size: size, limit: limit, fileSystem: fileSystem)
        }
        let content = try loaded ?? loadSerially(descriptor, size: size, limit: limit, fileSystem: fileSystem)
        guard content.storeID == storeID, content.sequence == reference.sequence, content.info.epoch == reference.epoch
        else {
            throw FormatViolation("the checkpoint does not belong to this store or position")
        }
        return content
    }

    /// Decompresses the whole file, then checks and decodes its content, on the calling thread.
    private static func loadSerially(_ descriptor: Int32, size: Int64, limit: Int, fileSystem: any FileSystem)
        throws -> CheckpointContent
    {
        let decompressor = try LZ4FrameDecompressor(limit: limit)
        try readFrame(descriptor, size: size, fileSystem: fileSystem, decompressor: decompressor) {
            try decompressor.feed($0)
        }
        return try CheckpointContent.decode(decompressor.takeOutput())
    }

    /// Reads the file `descriptor`, `size` bytes, a MiB at a time, handing each read to `consume`,
    /// which decompresses it with `decompressor` and returns how many of its bytes the frame took;
    /// checks that the frame ends with the file, no sooner and no later.
    static func readFrame(
        _ descriptor: Int32, size: Int64, fileSystem: any FileSystem, decompressor: LZ4FrameDecompressor,
        consume: (UnsafeRawBufferPointer) throws -> Int
    ) throws {
        var offset: Int64 = 0
        while offset < size {
            let chunk = try fileSystem.read(descriptor, count: Int(min(Int64(1 << 20), size - offset)), at: offset)
            guard !chunk.isEmpty else { break }
            let consumed = try chunk.withUnsafeBytes { try consume($0) }
            offset += Int64(chunk.count)
            if decompressor.finished {
                guard consumed == chunk.count && offset == size else {
                    throw FormatViolation("bytes follow the checkpoint's LZ4 frame")
                }
            }
        }
        guard decompressor.finished else { throw FormatViolation("the checkpoint's LZ4 frame is cut short") }
    }
}

extension CheckpointContent.EpochInfoFields {
    var epochInfo: EpochInfo {
        EpochInfo(
            epoch: epoch, timestamp: Date(timeIntervalSince1970: Double(timestampMilliseconds) / 1000),
            metadata: metadata,
            entryCount: entryCount, bytes: bytes)
    }
}
