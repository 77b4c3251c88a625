#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The advisory lock that makes a writer the only one: `flock` on the store's `LOCK` file, which
/// also holds the holder's process id for the error a second writer gets.
struct StoreLock {
    let descriptor: Int32

    static func acquire(in directory: StoreDirectory) throws -> StoreLock {
        let fileSystem = directory.fileSystem
        let path = directory.file(FileNames.lock)
        let descriptor = try fileSystem.open(path, .createOrOpen)
        var locked = false
        do {
            // A lock can be held for a moment by a process that is being forked from this one and has
            // not yet run exec (which closes the descriptor): try a few times over about 100 ms before
            // telling the caller that another writer holds the store.
            for attempt in 0..<20 {
                locked = try fileSystem.tryLock(descriptor)
                if locked { break }
                if attempt < 19 { usleep(5_000) }
            }
        } catch {
            fileSystem.close(descriptor)
            throw error
        }
        guard locked else {
            let holder = (try? fileSystem.read(descriptor, count: 32, at: 0)).flatMap {
                String(decoding: $0, as: UTF8.self).split(separator: "\n").first
            }
            fileSystem.close(descriptor)
            let who = holder.map { "process \($0)" } ?? "another writer"
            throw JournalError(
                .storeLocked,
                """
                The store at \(directory.path) is in use by \(who). Only one writer can open a store; open it \
                read-only to inspect it.
                """,
                file: path)
        }
        do {
            try fileSystem.truncate(descriptor, to: 0)
            try fileSystem.writeAll(descriptor, Array("\(getpid())\n".utf8), at: 0)
        } catch {
            fileSystem.close(descriptor)
            throw error
        }
        return StoreLock(descriptor: descriptor)
    }

    func release(_ fileSystem: any FileSystem) {
        fileSystem.close(descriptor)
    }
}
