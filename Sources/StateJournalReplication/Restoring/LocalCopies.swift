import Crypto
import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The bytes a delta restore finds on the local disk instead of fetching them: in the file an
/// earlier, interrupted run left in the staging directory, or in the same file of the old copy.
///
/// Both are untrusted (a damaged disk, a copy someone edited): a byte range counts only when its
/// SHA-256 is the one the generation recorded for the object that holds it. Files are read through
/// descriptors (never following a symlink), a mebibyte at a time, so the memory taken does not grow
/// with the store, and no range is read past the size the file has.
final class LocalCopies {
    /// The old copy's directory, or -1 when there is none.
    private let directory: Int32
    private let path: String
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)

    /// Reads the old copy through `directory` (taken over, closed with this), or nothing when it is -1.
    init(directory: Int32, path: String) {
        self.directory = directory
        self.path = path
    }

    deinit { if directory >= 0 { _ = close(directory) } }

    /// For each of `objects` (a file's, in order from offset 0), whether its bytes are now in
    /// `staged`, the file `name` of the staging directory open for reading and writing: already
    /// there, or copied from the old copy and matching its SHA-256 as written.
    ///
    /// - Throws: ``ReplicationError/Code/store`` when the staging file cannot be written,
    ///   ``ReplicationError/Code/cancelled``. A copy that cannot be read is only not reused.
    func reuse(_ objects: [ReplicaGeneration.Object], in staged: Int32, name: String, staging: URL) throws -> [Bool] {
        let stagedSize = Self.size(of: staged) ?? 0
        var oldFile: Int32 = -1
        var oldSize: Int64 = 0
        if directory >= 0 {
            // O_NONBLOCK: a FIFO put in the old copy's place must not block the open (it is then
            // refused as not a regular file).
            oldFile = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            if oldFile >= 0 {
                if let size = Self.size(of: oldFile) {
                    oldSize = size
                } else {
                    _ = close(oldFile)
                    oldFile = -1
                }
            }
        }
        defer { if oldFile >= 0 { _ = close(oldFile) } }
        var result: [Bool] = []
        result.reserveCapacity(objects.count)
        for object in objects {
            if Task.isCancelled { throw ReplicationError(.cancelled, "The restore was cancelled.") }
            let range = object.start..<object.end
            if range.upperBound <= stagedSize,
                hash(staged, range, copyingTo: nil, name: name, staging: staging) == object.sha256
            {
                result.append(true)
            } else if oldFile >= 0, range.upperBound <= oldSize {
                let copied = try copy(oldFile, range, to: staged, name: name, staging: staging)
                result.append(copied == object.sha256)
            } else {
                result.append(false)
            }
        }
        return result
    }

    /// Copies bytes `range` of `source` to the same offsets of `staged`, and returns the SHA-256 of
    /// what it wrote; `nil` when `source` cannot be read that far.
    private func copy(_ source: Int32, _ range: Range<Int64>, to staged: Int32, name: String, staging: URL) throws
        -> String?
    {
        var error: ReplicationError?
        let digest = hash(source, range, copyingTo: staged, name: name, staging: staging, writeError: &error)
        if let error { throw error }
        return digest
    }

    private func hash(_ file: Int32, _ range: Range<Int64>, copyingTo staged: Int32?, name: String, staging: URL)
        -> String?
    {
        var ignored: ReplicationError?
        return hash(file, range, copyingTo: staged, name: name, staging: staging, writeError: &ignored)
    }

    /// The SHA-256 (hex) of bytes `range` of `file`, read a chunk at a time, each written to
    /// `staged` at its offset when given; `nil` when `file` is shorter or cannot be read, or when
    /// the task is cancelled (the caller checks), or a write failed (`writeError` says why).
    private func hash(
        _ file: Int32, _ range: Range<Int64>, copyingTo staged: Int32?, name: String, staging: URL,
        writeError: inout ReplicationError?
    ) -> String? {
        var sha = SHA256()
        var offset = range.lowerBound
        while offset < range.upperBound {
            if Task.isCancelled { return nil }
            let wanted = Int(min(Int64(buffer.count), range.upperBound - offset))
            let count = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress!, wanted, off_t(offset)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            if let staged {
                var written = 0
                while written < count {
                    let done = buffer.withUnsafeBytes {
                        pwrite(staged, $0.baseAddress! + written, count - written, off_t(offset) + off_t(written))
                    }
                    if done < 0 {
                        if errno == EINTR { continue }
                        writeError = FollowerDirectory.failure("write", staging.path + "/" + name, errno)
                        return nil
                    }
                    written += done
                }
            }
            buffer.withUnsafeBytes { sha.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            // count <= wanted <= range.upperBound - offset: no overflow.
            offset += Int64(count)
        }
        return SignatureV4.hex(sha.finalize())
    }

    /// The size of the regular file open as `file`, or `nil` for anything else.
    private static func size(of file: Int32) -> Int64? {
        var info = stat()
        guard fstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }
}
