import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#endif

/// The real file system, except that writes fail with `ENOSPC` while armed.
final class FailingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    // @unchecked Sendable: `armed` is read and written with `lock` held.
    let base: any FileSystem = PosixFileSystem()
    private let lock = NSLock()
    private var armed = false

    var failsWrites: Bool {
        get { lock.withLock { armed } }
        set { lock.withLock { armed = newValue } }
    }

    func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        if failsWrites { throw SystemError(call: "pwrite", errno: ENOSPC) }
        return try base.write(descriptor, bytes, at: offset)
    }
}
