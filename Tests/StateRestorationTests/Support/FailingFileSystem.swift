import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#endif

/// The real file system, except that writes fail with `ENOSPC` while armed.
final class FailingFileSystem: FileSystem, @unchecked Sendable {
    // @unchecked Sendable: `armed` is read and written with `lock` held.
    private let base = PosixFileSystem()
    private let lock = NSLock()
    private var armed = false

    var failsWrites: Bool {
        get { lock.withLock { armed } }
        set { lock.withLock { armed = newValue } }
    }

    func open(_ path: String, _ mode: FileOpenMode) throws -> Int32 { try base.open(path, mode) }
    func close(_ descriptor: Int32) { base.close(descriptor) }
    func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        if failsWrites { throw SystemError(call: "pwrite", errno: ENOSPC) }
        return try base.write(descriptor, bytes, at: offset)
    }
    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try base.read(descriptor, into: buffer, at: offset)
    }
    func size(_ descriptor: Int32) throws -> Int64 { try base.size(descriptor) }
    func truncate(_ descriptor: Int32, to size: Int64) throws { try base.truncate(descriptor, to: size) }
    func dataSync(_ descriptor: Int32) throws { try base.dataSync(descriptor) }
    func fullSync(_ descriptor: Int32) throws { try base.fullSync(descriptor) }
    func rename(_ source: String, to destination: String) throws { try base.rename(source, to: destination) }
    func remove(_ path: String) throws { try base.remove(path) }
    func makeDirectory(_ path: String) throws { try base.makeDirectory(path) }
    func contentsOfDirectory(_ path: String) throws -> [String] { try base.contentsOfDirectory(path) }
    func tryLock(_ descriptor: Int32) throws -> Bool { try base.tryLock(descriptor) }
}
