import StateJournal
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A file system held in memory, so that each fuzz input builds a store without touching the disk.
///
/// Paths are plain strings; a directory is any path that files are named under. Descriptors are
/// numbers handed out in order. Only what the engine's seam needs is modelled.
final class MemoryFileSystem: FileSystem {
    private struct State {
        var files: [String: [UInt8]] = [:]
        var directories: Set<String> = []
        var open: [Int32: String] = [:]
        var nextDescriptor: Int32 = 3
    }

    private let state = Mutex(State())

    init(files: [String: [UInt8]] = [:], directories: Set<String> = []) {
        state.withLock {
            $0.files = files
            $0.directories = directories
        }
    }

    /// The files now in the file system.
    var files: [String: [UInt8]] { state.withLock { $0.files } }

    func open(_ path: String, _ mode: FileOpenMode) throws -> Int32 {
        try state.withLock { state in
            let exists = state.files[path] != nil || state.directories.contains(path)
            switch mode {
            case .read, .readWrite:
                guard exists else { throw SystemError(call: "open", errno: ENOENT, path: path) }
            case .createNew:
                guard !exists else { throw SystemError(call: "open", errno: EEXIST, path: path) }
                state.files[path] = []
            case .createOrOpen:
                if !exists { state.files[path] = [] }
            }
            let descriptor = state.nextDescriptor
            state.nextDescriptor += 1
            state.open[descriptor] = path
            return descriptor
        }
    }

    func close(_ descriptor: Int32) { _ = state.withLock { $0.open.removeValue(forKey: descriptor) } }

    private func path(of descriptor: Int32, in state: State, call: String) throws -> String {
        guard let path = state.open[descriptor] else { throw SystemError(call: call, errno: EBADF) }
        return path
    }

    func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        try state.withLock { state in
            let path = try path(of: descriptor, in: state, call: "pwrite")
            guard state.files[path] != nil else { throw SystemError(call: "pwrite", errno: EISDIR, path: path) }
            let start = Int(offset)
            if state.files[path]!.count < start + bytes.count {
                state.files[path]!.append(
                    contentsOf: repeatElement(0, count: start + bytes.count - state.files[path]!.count))
            }
            state.files[path]!.withUnsafeMutableBytes { file in
                for index in 0..<bytes.count { file[start + index] = bytes[index] }
            }
            return bytes.count
        }
    }

    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try state.withLock { state in
            let path = try path(of: descriptor, in: state, call: "pread")
            guard let file = state.files[path] else { throw SystemError(call: "pread", errno: EISDIR, path: path) }
            let start = Int(offset)
            guard start < file.count else { return 0 }
            let count = min(buffer.count, file.count - start)
            file.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(from: source.baseAddress! + start, byteCount: count)
            }
            return count
        }
    }

    func size(_ descriptor: Int32) throws -> Int64 {
        try state.withLock { state in
            let path = try path(of: descriptor, in: state, call: "fstat")
            return Int64(state.files[path]?.count ?? 0)
        }
    }

    func truncate(_ descriptor: Int32, to size: Int64) throws {
        try state.withLock { state in
            let path = try path(of: descriptor, in: state, call: "ftruncate")
            guard var file = state.files[path] else { throw SystemError(call: "ftruncate", errno: EISDIR, path: path) }
            let size = Int(size)
            if file.count > size {
                file.removeLast(file.count - size)
            } else {
                file.append(contentsOf: repeatElement(0, count: size - file.count))
            }
            state.files[path] = file
        }
    }

    func dataSync(_ descriptor: Int32) throws {}
    func fullSync(_ descriptor: Int32) throws {}

    func rename(_ source: String, to destination: String) throws {
        try state.withLock { state in
            guard let file = state.files.removeValue(forKey: source) else {
                throw SystemError(call: "rename", errno: ENOENT, path: source)
            }
            state.files[destination] = file
        }
    }

    func remove(_ path: String) throws {
        try state.withLock { state in
            guard state.files.removeValue(forKey: path) != nil else {
                throw SystemError(call: "unlink", errno: ENOENT, path: path)
            }
        }
    }

    func makeDirectory(_ path: String) throws {
        try state.withLock { state in
            guard !state.directories.contains(path) else { throw SystemError(call: "mkdir", errno: EEXIST, path: path) }
            state.directories.insert(path)
        }
    }

    func contentsOfDirectory(_ path: String) throws -> [String] {
        try state.withLock { state in
            guard state.directories.contains(path) else {
                throw SystemError(call: "opendir", errno: ENOENT, path: path)
            }
            let prefix = path.hasSuffix("/") ? path : path + "/"
            return state.files.keys.compactMap { name -> String? in
                guard name.hasPrefix(prefix) else { return nil }
                let rest = name.dropFirst(prefix.count)
                return rest.contains("/") ? nil : String(rest)
            }.sorted()
        }
    }

    func tryLock(_ descriptor: Int32) throws -> Bool { true }
}
