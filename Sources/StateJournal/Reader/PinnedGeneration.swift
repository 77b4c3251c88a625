#if canImport(Glibc)
    import Glibc
#endif

/// The files one manifest names, opened before a read uses any of them, so that the read sees that
/// generation whole even when a writer compacts meanwhile: an open descriptor outlives the unlink
/// of its file.
///
/// It is a ``FileSystem`` over another: opening a pinned file for reading returns the pinned
/// descriptor, and closing it does nothing until ``release()``. Every other call goes through.
final class PinnedGeneration: ForwardingFileSystem {
    let base: any FileSystem
    /// Pinned descriptors by path; written only by `init`.
    private let pinned: [String: Int32]
    private let descriptors: Set<Int32>

    /// Opens every segment and checkpoint `manifest` names that exists. A missing one is left to
    /// the read, which reports it as damage, unless the manifest changed meanwhile (the caller
    /// checks).
    ///
    /// - Throws: ``SystemError`` when opening an existing file fails.
    init(_ manifest: Manifest, in directory: String, fileSystem base: any FileSystem) throws {
        self.base = base
        let names =
            manifest.segments.map(FileNames.segment) + manifest.checkpoints.map { FileNames.checkpoint($0.sequence) }
        var pinned: [String: Int32] = [:]
        do {
            for name in names {
                let path = directory + "/" + name
                do {
                    pinned[path] = try base.open(path, .read)
                } catch let error as SystemError where error.errno == ENOENT {
                    continue
                }
            }
        } catch {
            for descriptor in pinned.values { base.close(descriptor) }
            throw error
        }
        self.pinned = pinned
        self.descriptors = Set(pinned.values)
    }

    /// Closes the pinned descriptors.
    func release() {
        for descriptor in pinned.values { base.close(descriptor) }
    }

    func open(_ path: String, _ mode: FileOpenMode) throws -> Int32 {
        if mode == .read, let descriptor = pinned[path] { return descriptor }
        return try base.open(path, mode)
    }

    func close(_ descriptor: Int32) {
        if !descriptors.contains(descriptor) { base.close(descriptor) }
    }
}
