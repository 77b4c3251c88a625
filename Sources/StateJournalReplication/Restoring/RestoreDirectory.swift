import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The directory a restore writes into, held open: every file is created through its descriptor
/// (`openat` with `O_CREAT | O_EXCL | O_NOFOLLOW`), under a name the restore derived itself, so that
/// no symlink and no `..` can send a write elsewhere; and clean-up removes only what this restore
/// created.
///
/// A delta restore's staging directory (see ``RestoreStaging``) is opened with
/// ``init(resuming:)``: its files are kept when the restore fails, for the next run to reuse.
final class RestoreDirectory {
    /// The directory's path, as the user named it.
    let url: URL
    let descriptor: Int32
    /// The names this restore created, in order.
    private(set) var created: [String] = []
    /// Whether this restore created the directory itself.
    private var createdDirectory = false
    /// Whether files left by an earlier run are reopened and kept when the restore fails.
    let isResumable: Bool

    /// Opens `url` for a restore: creates it (mode 0700) when it is missing, and refuses it when it
    /// holds anything but the names in `ignoring` (a follower's `LOCK`), or cannot be read, or is
    /// not a directory.
    ///
    /// - Throws: ``ReplicationError/Code/targetNotEmpty`` or ``ReplicationError/Code/store``.
    init(preparing url: URL, ignoring: Set<String> = []) throws {
        self.url = url
        self.isResumable = false
        let path = url.path
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw Self.failure("read", path, errno) }
            // Only the directory named is made: a missing parent is the user's to create.
            guard mkdir(path, 0o700) == 0 else {
                let code = errno
                if code == ENOENT {
                    throw ReplicationError(
                        .targetNotEmpty,
                        "The parent of \(path) does not exist; a restore creates the directory it is given, not its parents."
                    )
                }
                throw Self.failure("create", path, code)
            }
            createdDirectory = true
            let parent = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if parent >= 0 {
                _ = fsync(parent)
                _ = close(parent)
            }
        }
        // The directory itself, not a symlink to one: the store's own code reaches it by this path.
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw ReplicationError(
                .targetNotEmpty,
                code == ENOTDIR || code == ELOOP
                    ? "\(path) is not a directory (or is a symbolic link); a restore writes a new store into a new or empty directory, named as it is."
                    : "\(path) cannot be read (\(String(cString: strerror(code)))), so a restore cannot tell that it is empty; choose a directory this user can read."
            )
        }
        // Fully initialized from here: when this throws, deinit closes the descriptor (closing it
        // here too would close whatever another thread opened under the same number meanwhile).
        self.descriptor = descriptor
        let names: [String]
        do {
            names = try Self.names(in: descriptor)
        } catch {
            throw ReplicationError(
                .targetNotEmpty,
                "\(path) cannot be read, so a restore cannot tell that it is empty; choose a directory this user can read.",
                cause: error as? ReplicationError)
        }
        guard names.allSatisfy(ignoring.contains) else {
            throw ReplicationError(
                .targetNotEmpty,
                "\(path) is not empty; a restore writes a new store, so choose a new or empty directory, or restore with delta (`--delta`) to update an older copy of the same store there."
            )
        }
    }

    /// Opens a delta restore's staging directory, creating it (mode 0700) when it is missing, and
    /// takes its lock (`flock` on the directory) so that two restores never write it at once. Only
    /// names a restore writes may be in it (store files, the manifest, a store's lock); anything
    /// else is refused.
    ///
    /// - Throws: ``ReplicationError/Code/targetNotEmpty`` or ``ReplicationError/Code/store``.
    init(resuming url: URL) throws {
        self.url = url
        self.isResumable = true
        let path = url.path
        if mkdir(path, 0o700) == 0 {
            createdDirectory = true
        } else if errno != EEXIST {
            throw Self.failure("create", path, errno)
        }
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw ReplicationError(
                .targetNotEmpty,
                "\(path), where a delta restore stages the new store, cannot be opened as a directory (\(String(cString: strerror(code)))); move it away."
            )
        }
        // Fully initialized from here: when this throws, deinit closes the descriptor.
        self.descriptor = descriptor
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            throw ReplicationError(
                .store, "Another restore is writing \(path); wait for it to finish, or stop it.",
                cause: SystemError(call: "flock", errno: code, path: path))
        }
        let names = try Self.names(in: descriptor)
        if let foreign = names.first(where: {
            !RestoreStaging.isStoreFileName($0) && $0 != "LOCK" && !StoreFileSet.assembledFileNames.contains($0)
        }) {
            throw ReplicationError(
                .targetNotEmpty,
                "\(path), where a delta restore stages the new store, holds \(printable(foreign)), which no restore writes; move it away."
            )
        }
        // Only a restore made it, and the names of the files it writes are its own: anything named
        // there is left by an earlier run, for ``LocalCopies`` to check byte range by byte range.
        created = names.filter(RestoreStaging.isStoreFileName)
    }

    deinit { _ = close(descriptor) }

    /// Creates the file `name` (a name of the store's own, never one read from a bucket), mode 0600;
    /// in a staging directory, opens the file an earlier run left there, or creates it.
    func create(_ name: String) throws -> Int32 {
        precondition(!name.contains("/") && name != "." && name != "..", "a derived file name")
        let flags =
            isResumable
            ? O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC : O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        let file = openat(descriptor, name, flags, 0o600)
        guard file >= 0 else { throw Self.failure("create", url.path + "/" + name, errno) }
        if !created.contains(name) { created.append(name) }
        return file
    }

    /// In a staging directory, removes the store files and the manifest an earlier run left that
    /// are not in `names`: files of another generation, or the rest of a segment list cut by damage.
    func removeAllBut(_ names: Set<String>) {
        guard isResumable else { return }
        for name in created where !names.contains(name) { _ = unlinkat(descriptor, name, 0) }
        created.removeAll { !names.contains($0) }
        for name in StoreFileSet.assembledFileNames { _ = unlinkat(descriptor, name, 0) }
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

    /// Cuts `file` to `length` bytes (what a damaged object left of a segment).
    func truncate(_ file: Int32, to length: Int64, name: String) throws {
        guard ftruncate(file, off_t(length)) == 0 else { throw Self.failure("truncate", url.path + "/" + name, errno) }
    }

    /// Syncs and closes `file`.
    func finish(_ file: Int32, name: String) throws {
        defer { _ = close(file) }
        guard fsync(file) == 0 else { throw Self.failure("sync", url.path + "/" + name, errno) }
    }

    /// Removes one file this restore created.
    func remove(_ name: String) {
        guard let index = created.firstIndex(of: name) else { return }
        _ = unlinkat(descriptor, name, 0)
        created.remove(at: index)
    }

    /// Removes every file this restore created, and the files a store assembly may have added
    /// (the manifest and its temporary file), leaving the directory as the restore found it.
    func removeEverythingCreated() {
        if isResumable {
            // What the next attempt needs is checked again by its SHA-256; the rest it removes.
            for name in StoreFileSet.assembledFileNames { _ = unlinkat(descriptor, name, 0) }
            return
        }
        for name in created + StoreFileSet.assembledFileNames { _ = unlinkat(descriptor, name, 0) }
        created = []
    }

    /// Undoes the restore: removes every file it created and the directory too when the restore
    /// made it (and it is empty). A staging directory keeps its files, for the next run to reuse.
    func abandon() {
        removeEverythingCreated()
        if createdDirectory && !isResumable { _ = rmdir(url.path) }
    }

    /// Makes the directory's entries durable.
    func sync() throws {
        guard fsync(descriptor) == 0 else { throw Self.failure("sync", url.path, errno) }
    }

    static func names(in descriptor: Int32) throws -> [String] {
        let copy = dup(descriptor)
        guard copy >= 0, let stream = fdopendir(copy) else {
            throw ReplicationError(.store, "Could not list the directory.")
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    private static func failure(_ action: String, _ path: String, _ code: Int32) -> ReplicationError {
        ReplicationError(
            .store, "Could not \(action) \(path): \(String(cString: strerror(code))).",
            cause: SystemError(call: action, errno: code, path: path))
    }
}
