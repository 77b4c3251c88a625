/// How a file is opened through the ``FileSystem`` seam.
package enum FileOpenMode: Sendable {
    /// Read only. Fails when the file does not exist.
    case read
    /// Read and write an existing file.
    case readWrite
    /// Create a new file for reading and writing; fails when it exists.
    case createNew
    /// Create the file for reading and writing if it does not exist.
    case createOrOpen
}

/// Every system call the engine makes goes through this seam, so that tests can make any of them
/// fail (short writes, `EIO`, `ENOSPC`, failed syncs and renames) or lose what was never synced.
///
/// Every method throws ``SystemError``. Files are created with mode 0600 and directories with
/// 0700, and no store file is opened through a symbolic link.
package protocol FileSystem: Sendable {
    func open(_ path: String, _ mode: FileOpenMode) throws -> Int32
    func close(_ descriptor: Int32)
    /// Writes at `offset`; may write fewer bytes than given and returns how many it wrote.
    func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int
    /// Reads at `offset`; returns how many bytes it read, 0 at the end of the file.
    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int
    func size(_ descriptor: Int32) throws -> Int64
    func truncate(_ descriptor: Int32, to size: Int64) throws
    func dataSync(_ descriptor: Int32) throws
    func fullSync(_ descriptor: Int32) throws
    func rename(_ source: String, to destination: String) throws
    func remove(_ path: String) throws
    func makeDirectory(_ path: String) throws
    /// Names in the directory, without `.` and `..`; throws `ENOENT` when it does not exist.
    func contentsOfDirectory(_ path: String) throws -> [String]
    /// Takes an exclusive advisory lock without waiting; returns `false` when another holds it.
    func tryLock(_ descriptor: Int32) throws -> Bool
}

extension FileSystem {
    /// Writes all of `bytes` at `offset`, continuing after short writes.
    func writeAll(_ descriptor: Int32, _ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let written = try write(
                    descriptor, UnsafeRawBufferPointer(rebasing: buffer[done...]), at: offset + Int64(done))
                guard written > 0 else { throw SystemError(call: "write", errno: 5) }
                done += written
            }
        }
    }

    /// Reads exactly `count` bytes at `offset`, or fewer only at the end of the file.
    func read(_ descriptor: Int32, count: Int, at offset: Int64) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        try bytes.withUnsafeMutableBytes { buffer in
            while done < count {
                let got = try read(
                    descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: offset + Int64(done)
                )
                if got == 0 { break }
                done += got
            }
        }
        if done < count { bytes.removeLast(count - done) }
        return bytes
    }

    /// Writes `bytes` to `path` atomically: a temporary file, fsync, rename, fsync of the directory.
    func replaceAtomically(_ path: String, in directory: String, with bytes: [UInt8]) throws {
        let temporary = path + FileNames.temporarySuffix
        try? remove(temporary)
        let descriptor = try open(temporary, .createNew)
        do {
            try writeAll(descriptor, bytes, at: 0)
            try fullSync(descriptor)
        } catch {
            close(descriptor)
            try? remove(temporary)
            throw error
        }
        close(descriptor)
        try rename(temporary, to: path)
        try syncDirectory(directory)
    }

    /// Makes the directory's entries durable.
    func syncDirectory(_ directory: String) throws {
        let descriptor = try open(directory, .read)
        defer { close(descriptor) }
        try fullSync(descriptor)
    }
}
