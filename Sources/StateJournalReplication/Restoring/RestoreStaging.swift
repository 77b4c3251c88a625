import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where a delta restore builds the new store, and how it replaces the old copy with it.
///
/// The new store is written into `NAME.restoring`, beside the directory `NAME` the user named (the
/// names come from that path, never from the bucket), so that the old copy stays whole until the
/// new store is verified. Then the old copy is renamed to `NAME.replaced`, the new store to
/// `NAME`, and `NAME.replaced` is removed, the parent directory synced after each step. A run that
/// stops between the two renames leaves `NAME` missing: the next delta restore renames
/// `NAME.replaced` back first. One that stops after them leaves `NAME.replaced`, which the next
/// removes. A run that fails earlier leaves `NAME.restoring`, whose files the next run reuses where
/// their SHA-256 matches the generation's.
///
/// `NAME` may be missing, empty, or hold a store with the replica's store id; it is held with the
/// store's writer lock until it is replaced, so that no app or follower writes it meanwhile.
final class RestoreStaging {
    /// The directory the user named.
    let target: URL
    /// The directory the new store is built in.
    let output: RestoreDirectory
    /// The old copy, opened, when the target holds a store.
    let old: LocalCopies
    private let parent: Int32
    private let name: String
    private let targetIsStore: Bool
    /// The old copy's `LOCK`, held until it is replaced.
    private var lock: Int32 = -1

    static let stagingSuffix = ".restoring"
    static let replacedSuffix = ".replaced"

    /// Checks `target` for a delta restore of the replica of `storeID`, finishes the replacement a
    /// run that stopped left half done, and opens the staging directory.
    ///
    /// - Throws: ``ReplicationError/Code/otherStore`` when `target` holds another store,
    ///   ``ReplicationError/Code/targetNotEmpty`` when it holds something that is not a store (or
    ///   cannot be read), ``ReplicationError/Code/store`` when a writer holds it or a file system
    ///   call fails.
    init(target: URL, storeID: String) throws {
        let target = target.standardizedFileURL
        self.target = target
        let name = target.lastPathComponent
        guard !name.isEmpty, name != "/", name != ".", name != ".." else {
            throw ReplicationError(.invalidArgument, "\(target.path) cannot be restored into: name a directory.")
        }
        self.name = name
        let parentPath = target.deletingLastPathComponent().path
        let parent = open(parentPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard parent >= 0 else {
            throw ReplicationError(
                .targetNotEmpty,
                "The parent of \(target.path) cannot be opened (\(String(cString: strerror(errno)))); a restore creates the directory it is given, not its parents."
            )
        }
        self.parent = parent
        var opened: Int32 = -1
        var lock: Int32 = -1
        do {
            try Self.finishReplacement(parent: parent, name: name, path: target.path)
            opened = try Self.openTarget(parent: parent, name: name, path: target.path)
            let targetIsStore = opened >= 0 ? try Self.checkStore(opened, path: target.path, storeID: storeID) : false
            if targetIsStore { lock = try Self.lockStore(opened, path: target.path) }
            output = try RestoreDirectory(resuming: URL(fileURLWithPath: parentPath + "/" + name + Self.stagingSuffix))
            self.targetIsStore = targetIsStore
        } catch {
            if opened >= 0 { _ = close(opened) }
            if lock >= 0 { _ = close(lock) }
            _ = close(parent)
            throw error
        }
        self.lock = lock
        if targetIsStore {
            old = LocalCopies(directory: opened, path: target.path)
        } else {
            if opened >= 0 { _ = close(opened) }
            old = LocalCopies(directory: -1, path: target.path)
        }
    }

    deinit {
        if lock >= 0 { _ = close(lock) }
        _ = close(parent)
    }

    /// Replaces the target with the verified store of the staging directory, and removes the old copy.
    ///
    /// - Throws: ``ReplicationError/Code/store`` when a rename fails; the old copy is then back in place.
    func publish() throws {
        let staged = name + Self.stagingSuffix
        let replaced = name + Self.replacedSuffix
        if targetIsStore {
            guard renameat(parent, name, parent, replaced) == 0 else { throw failure("rename", name, errno) }
            try syncParent()
        }
        // rename(2) replaces a missing or empty directory in one step.
        guard renameat(parent, staged, parent, name) == 0 else {
            let code = errno
            if targetIsStore { _ = renameat(parent, replaced, parent, name) }
            _ = fsync(parent)
            throw failure("rename", staged, code)
        }
        try syncParent()
        if lock >= 0 {
            _ = close(lock)
            lock = -1
        }
        if targetIsStore { Self.removeOldCopy(parent: parent, name: replaced) }
        try syncParent()
    }

    /// Whether `name` is one a store gives its segments and checkpoints.
    static func isStoreFileName(_ name: String) -> Bool { FollowerDirectory.isStoreFileName(name) }

    /// Whether `name` may be in a store directory: its files, its manifest, its lock, the files it
    /// set aside as damaged, and the temporary files it (or a follower) renames into place.
    static func isStoreDirectoryName(_ name: String) -> Bool {
        if isStoreFileName(name) || name == "MANIFEST" || name == "LOCK" { return true }
        if StoreFileSet.assembledFileNames.contains(name) { return true }
        // A file renamed into place by the store (`.tmp`) or by a follower (`.following`).
        for suffix in [".tmp", FollowerDirectory.stagingSuffix] where name.hasSuffix(suffix) {
            if isStoreFileName(String(name.dropLast(suffix.count))) { return true }
        }
        // damaged-<16 hex>-at-<offset>.bin
        guard name.hasPrefix("damaged-"), name.hasSuffix(".bin") else { return false }
        let middle = name.dropFirst(8).dropLast(4)
        let parts = middle.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0].utf8.count == 16 && UInt64(parts[0], radix: 16) != nil
            && parts[1] == "at" && Int64(parts[2]) != nil
    }

    /// Puts back a copy a run left renamed aside, or removes one it left after the replacement.
    private static func finishReplacement(parent: Int32, name: String, path: String) throws {
        let replaced = name + replacedSuffix
        var info = stat()
        guard fstatat(parent, replaced, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw ReplicationError(
                .targetNotEmpty,
                "\(path)\(replacedSuffix) is in the way of a delta restore and is not a directory; move it away.")
        }
        if fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT {
            // Stopped between the renames: the old copy goes back, to be checked as any other.
            guard renameat(parent, replaced, parent, name) == 0 else {
                throw failure("rename", path + replacedSuffix, errno)
            }
            _ = fsync(parent)
            return
        }
        // Stopped after the renames: what is left is an old copy, unless it holds something else.
        let aside = openat(parent, replaced, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard aside >= 0 else { throw failure("open", path + replacedSuffix, errno) }
        defer { _ = close(aside) }
        let names = try RestoreDirectory.names(in: aside)
        guard names.allSatisfy(isStoreDirectoryName) else {
            throw ReplicationError(
                .targetNotEmpty,
                "\(path)\(replacedSuffix) holds files that are not a store's; a delta restore removes that directory once it replaced \(path), so move it away."
            )
        }
        removeOldCopy(parent: parent, name: replaced)
        _ = fsync(parent)
    }

    /// The target opened, or -1 when it is missing.
    private static func openTarget(parent: Int32, name: String, path: String) throws -> Int32 {
        var info = stat()
        if fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
            guard errno == ENOENT else { throw failure("read", path, errno) }
            return -1
        }
        let descriptor = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw ReplicationError(
                .targetNotEmpty,
                code == ENOTDIR || code == ELOOP
                    ? "\(path) is not a directory (or is a symbolic link); a delta restore replaces a store's directory, named as it is."
                    : "\(path) cannot be read (\(String(cString: strerror(code)))), so a restore cannot tell what it holds; choose a directory this user can read."
            )
        }
        return descriptor
    }

    /// Whether the target holds a store (false when it is empty); throws unless it is this replica's.
    private static func checkStore(_ descriptor: Int32, path: String, storeID: String) throws -> Bool {
        let names: [String]
        do {
            names = try RestoreDirectory.names(in: descriptor)
        } catch {
            throw ReplicationError(
                .targetNotEmpty, "\(path) cannot be read, so a restore cannot tell what it holds.",
                cause: error as? ReplicationError)
        }
        if names.isEmpty { return false }
        // Regular files only: a symlink could make the manifest read elsewhere, a FIFO block the read.
        func isRegularFile(_ name: String) -> Bool {
            var info = stat()
            return fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        }
        if let foreign = names.first(where: { !isStoreDirectoryName($0) || !isRegularFile($0) }) {
            throw ReplicationError(
                .targetNotEmpty,
                "\(path) holds \(printable(foreign)), which is not a file of a store; a delta restore replaces a store's directory whole, so it leaves this one alone."
            )
        }
        let stored: StoreFileSet
        do {
            stored = try StoreFileSet.storedFiles(in: URL(fileURLWithPath: path))
        } catch let error as JournalError {
            throw ReplicationError(
                .targetNotEmpty,
                "\(path) is not a store a delta restore can use (\(error.message)); restore into a new directory, or remove it.",
                cause: error)
        }
        guard stored.storeID.lowercased() == storeID.lowercased() else {
            throw ReplicationError(
                .otherStore,
                "\(path) holds another store (\(stored.storeID)) than the replica's (\(storeID)); a delta restore only updates a copy of the same store. Restore into a new directory."
            )
        }
        return true
    }

    /// The old copy's writer lock, taken as a store takes it, so that no app or follower writes it
    /// while it is read and replaced.
    private static func lockStore(_ directory: Int32, path: String) throws -> Int32 {
        let lock = openat(directory, "LOCK", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw failure("open", path + "/LOCK", errno) }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            _ = close(lock)
            throw ReplicationError(
                .store,
                "The store at \(path) is in use (an app or a follower holds its lock); stop it before restoring over it.",
                cause: SystemError(call: "flock", errno: code, path: path + "/LOCK"))
        }
        return lock
    }

    /// Removes an old copy renamed aside: its store's files, then the directory (left in place when
    /// something else appeared in it).
    private static func removeOldCopy(parent: Int32, name: String) {
        let aside = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard aside >= 0 else { return }
        for entry in (try? RestoreDirectory.names(in: aside)) ?? [] where isStoreDirectoryName(entry) {
            _ = unlinkat(aside, entry, 0)
        }
        _ = close(aside)
        _ = unlinkat(parent, name, AT_REMOVEDIR)
    }

    private func syncParent() throws {
        guard fsync(parent) == 0 else { throw failure("sync", "", errno) }
    }

    private func failure(_ action: String, _ entry: String, _ code: Int32) -> ReplicationError {
        Self.failure(action, target.deletingLastPathComponent().path + "/" + entry, code)
    }

    private static func failure(_ action: String, _ path: String, _ code: Int32) -> ReplicationError {
        FollowerDirectory.failure(action, path, code)
    }
}
