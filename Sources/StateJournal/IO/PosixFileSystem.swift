#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The real file system: plain POSIX calls, retried on `EINTR`.
package struct PosixFileSystem: FileSystem {
    package init() {}

    private func check(_ result: Int, _ call: String, _ path: String? = nil) throws -> Int {
        if result < 0 { throw SystemError(call: call, errno: errno, path: path) }
        return result
    }

    private func retrying(_ body: () -> Int) -> Int {
        while true {
            let result = body()
            if result < 0 && errno == EINTR { continue }
            return result
        }
    }

    package func open(_ path: String, _ mode: FileOpenMode) throws -> Int32 {
        var flags = O_CLOEXEC | O_NOFOLLOW
        switch mode {
        case .read: flags |= O_RDONLY
        case .readWrite: flags |= O_RDWR
        case .createNew: flags |= O_RDWR | O_CREAT | O_EXCL
        case .createOrOpen: flags |= O_RDWR | O_CREAT
        }
        let descriptor = retrying { Int(Glibc.open(path, flags, 0o600)) }
        return Int32(try check(descriptor, "open", path))
    }

    package func close(_ descriptor: Int32) { _ = Glibc.close(descriptor) }

    package func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        guard bytes.count > 0 else { return 0 }
        return try check(retrying { pwrite(descriptor, bytes.baseAddress, bytes.count, off_t(offset)) }, "pwrite")
    }

    package func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        return try check(retrying { pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }, "pread")
    }

    package func size(_ descriptor: Int32) throws -> Int64 {
        var info = stat()
        _ = try check(Int(fstat(descriptor, &info)), "fstat")
        return Int64(info.st_size)
    }

    package func truncate(_ descriptor: Int32, to size: Int64) throws {
        _ = try check(retrying { Int(ftruncate(descriptor, off_t(size))) }, "ftruncate")
    }

    package func dataSync(_ descriptor: Int32) throws {
        _ = try check(retrying { Int(fdatasync(descriptor)) }, "fdatasync")
    }

    package func fullSync(_ descriptor: Int32) throws {
        _ = try check(retrying { Int(fsync(descriptor)) }, "fsync")
    }

    package func rename(_ source: String, to destination: String) throws {
        _ = try check(Int(Glibc.rename(source, destination)), "rename", destination)
    }

    package func remove(_ path: String) throws {
        _ = try check(Int(unlink(path)), "unlink", path)
    }

    package func makeDirectory(_ path: String) throws {
        _ = try check(Int(mkdir(path, 0o700)), "mkdir", path)
    }

    package func contentsOfDirectory(_ path: String) throws -> [String] {
        guard let directory = opendir(path) else { throw SystemError(call: "opendir", errno: errno, path: path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    package func tryLock(_ descriptor: Int32) throws -> Bool {
        if retrying({ Int(flock(descriptor, LOCK_EX | LOCK_NB)) }) == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw SystemError(call: "flock", errno: errno)
    }
}
