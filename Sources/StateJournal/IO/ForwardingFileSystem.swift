/// A ``FileSystem`` that passes every call it does not implement itself on to ``base``: the seam's
/// wrappers (pinned descriptors, staged names, the tests' altered reads and failing writes) write
/// only the calls they change.
package protocol ForwardingFileSystem: FileSystem {
    /// The file system the calls go to.
    var base: any FileSystem { get }
}

extension ForwardingFileSystem {
    package func open(_ path: String, _ mode: FileOpenMode) throws -> Int32 { try base.open(path, mode) }
    package func close(_ descriptor: Int32) { base.close(descriptor) }
    package func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        try base.write(descriptor, bytes, at: offset)
    }
    package func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try base.read(descriptor, into: buffer, at: offset)
    }
    package func size(_ descriptor: Int32) throws -> Int64 { try base.size(descriptor) }
    package func truncate(_ descriptor: Int32, to size: Int64) throws { try base.truncate(descriptor, to: size) }
    package func dataSync(_ descriptor: Int32) throws { try base.dataSync(descriptor) }
    package func fullSync(_ descriptor: Int32) throws { try base.fullSync(descriptor) }
    package func rename(_ source: String, to destination: String) throws { try base.rename(source, to: destination) }
    package func remove(_ path: String) throws { try base.remove(path) }
    package func makeDirectory(_ path: String) throws { try base.makeDirectory(path) }
    package func contentsOfDirectory(_ path: String) throws -> [String] { try base.contentsOfDirectory(path) }
    package func tryLock(_ descriptor: Int32) throws -> Bool { try base.tryLock(descriptor) }
}
