import Crypto
import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The store directory a follower keeps up to date, held open: every file is opened, created,
/// renamed and removed through the directory's descriptor (`openat`, `renameat`, `unlinkat`, never
/// following a symlink), under names the follower derived from validated fields, so that nothing a
/// bucket holds can send a write outside the directory.
final class FollowerDirectory: @unchecked Sendable {
    // @unchecked Sendable: its only state is set in init; a follower uses it from one task at a time.
    /// The directory's path, as the user named it.
    let url: URL
    private let descriptor: Int32

    /// The suffix of a file being downloaded before it is renamed into place.
    static let stagingSuffix = ".following"

    /// Opens `url`, creating it (mode 0700) when it is missing; refuses a symlink or a file.
    ///
    /// - Throws: ``ReplicationError/Code/targetNotEmpty`` or ``ReplicationError/Code/store``.
    init(opening url: URL) throws {
        self.url = url
        let path = url.path
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            let code = errno
            if code == ENOENT {
                throw ReplicationError(
                    .targetNotEmpty,
                    "The parent of \(path) does not exist; a follower creates the directory it is given, not its parents."
                )
            }
            throw Self.failure("create", path, code)
        }
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw ReplicationError(
                .targetNotEmpty,
                code == ENOTDIR || code == ELOOP
                    ? "\(path) is not a directory (or is a symbolic link); a follower keeps a store in a directory named as it is."
                    : "\(path) cannot be read (\(String(cString: strerror(code)))); choose a directory this user can read."
            )
        }
        self.descriptor = descriptor
    }

    deinit { _ = close(descriptor) }

    /// The names in the directory.
    func names() throws -> [String] {
        let copy = dup(descriptor)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { _ = close(copy) }
            throw Self.failure("list", url.path, errno)
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes files left staged by a follower that stopped in the middle of a generation, and a
    /// manifest it was replacing.
    func removeStaged() throws {
        let temporary = Set(StoreFileSet.assembledFileNames).subtracting(["MANIFEST"])
        for name in try names() where name.hasSuffix(Self.stagingSuffix) || temporary.contains(name) {
            _ = unlinkat(descriptor, name, 0)
        }
    }

    /// Whether `name` is one a store gives its segments and checkpoints.
    static func isStoreFileName(_ name: String) -> Bool {
        for (kind, prefix, suffix) in [
            (StoreFileSet.Kind.segment, "segment-", ".sjl"), (.checkpoint, "checkpoint-", ".lz4"),
        ] where name.hasPrefix(prefix) && name.hasSuffix(suffix) && name.count == prefix.count + 16 + suffix.count {
            if let sequence = UInt64(name.dropFirst(prefix.count).dropLast(suffix.count), radix: 16),
                StoreFileSet.fileName(of: kind, sequence: sequence) == name
            {
                return true
            }
        }
        return false
    }

    /// The size of the regular file `name`, or `nil` when there is none (a symlink is none).
    func size(of name: String) -> Int64? {
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return nil
        }
        return Int64(info.st_size)
    }

    /// Creates (replacing any leftover) the staged file for `name`, mode 0600.
    func createStaged(_ name: String) throws -> Int32 {
        let staged = Self.staged(name)
        _ = unlinkat(descriptor, staged, 0)
        let file = openat(descriptor, staged, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw Self.failure("create", url.path + "/" + staged, errno) }
        return file
    }

    /// Opens the existing file `name` for reading and appending.
    func openExisting(_ name: String) throws -> Int32 {
        Self.checkDerived(name)
        let file = openat(descriptor, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { throw Self.failure("open", url.path + "/" + name, errno) }
        return file
    }

    /// Writes all of `bytes` to `file` at `offset`.
    func write(_ bytes: [UInt8], to file: Int32, at offset: Int64, name: String) throws {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                pwrite(file, buffer.baseAddress! + written, buffer.count - written, off_t(offset) + off_t(written))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.failure("write", url.path + "/" + name, errno)
            }
            written += count
        }
    }

    /// Bytes `range` of `file` (fewer when it is shorter).
    func read(_ file: Int32, _ range: Range<Int64>, name: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int(range.count))
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(file, buffer.baseAddress! + done, buffer.count - done, off_t(range.lowerBound) + off_t(done))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.failure("read", url.path + "/" + name, errno)
            }
            if count == 0 { break }
            done += count
        }
        bytes.removeLast(bytes.count - done)
        return bytes
    }

    /// The SHA-256 (hex) of bytes `range` of `file`, read a mebibyte at a time; `nil` when the file
    /// is shorter.
    func sha256Hex(of file: Int32, _ range: Range<Int64>, name: String) throws -> String? {
        var hash = SHA256()
        var offset = range.lowerBound
        while offset < range.upperBound {
            let bytes = try read(file, offset..<min(offset + (1 << 20), range.upperBound), name: name)
            guard !bytes.isEmpty else { return nil }
            hash.update(data: bytes)
            offset += Int64(bytes.count)
        }
        return SignatureV4.hex(hash.finalize())
    }

    /// Cuts `file` to `length` bytes.
    func truncate(_ file: Int32, to length: Int64, name: String) throws {
        guard ftruncate(file, off_t(length)) == 0 else { throw Self.failure("truncate", url.path + "/" + name, errno) }
    }

    /// Syncs `file`.
    func sync(_ file: Int32, name: String) throws {
        guard fsync(file) == 0 else { throw Self.failure("sync", url.path + "/" + name, errno) }
    }

    /// Renames the staged file of `name` into place, replacing what was there.
    func publish(_ name: String) throws {
        Self.checkDerived(name)
        guard renameat(descriptor, Self.staged(name), descriptor, name) == 0 else {
            throw Self.failure("rename", url.path + "/" + Self.staged(name), errno)
        }
    }

    /// Removes `name` (a file the store no longer names, or a staged file).
    func remove(_ name: String) {
        Self.checkDerived(name)
        _ = unlinkat(descriptor, name, 0)
    }

    /// Removes the staged file of `name`.
    func removeStaged(_ name: String) { remove(Self.staged(name)) }

    /// Makes the directory's entries durable.
    func sync() throws {
        guard fsync(descriptor) == 0 else { throw Self.failure("sync", url.path, errno) }
    }

    static func staged(_ name: String) -> String { name + stagingSuffix }

    private static func checkDerived(_ name: String) {
        precondition(!name.contains("/") && name != "." && name != ".." && !name.isEmpty, "a derived file name")
    }

    static func failure(_ action: String, _ path: String, _ code: Int32) -> ReplicationError {
        ReplicationError(
            .store, "Could not \(action) \(path): \(String(cString: strerror(code))).",
            cause: SystemError(call: action, errno: code, path: path))
    }
}
