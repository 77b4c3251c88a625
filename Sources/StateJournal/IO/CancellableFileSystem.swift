/// A ``FileSystem`` whose reads throw `CancellationError` once `isCancelled` says so: a scan of
/// files that may be large or forged (a restore assembling what a bucket held) reads through it, and
/// every scan reads at least once a window (1 MiB) of work, so it ends within moments of a
/// cancellation instead of running to its end.
package struct CancellableFileSystem: ForwardingFileSystem {
    package let base: any FileSystem
    let isCancelled: @Sendable () -> Bool

    package init(base: any FileSystem, isCancelled: @escaping @Sendable () -> Bool) {
        self.base = base
        self.isCancelled = isCancelled
    }

    package func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        if isCancelled() { throw CancellationError() }
        return try base.read(descriptor, into: buffer, at: offset)
    }
}
