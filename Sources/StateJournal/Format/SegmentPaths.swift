#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The paths a segment defines, in the order it defines them: what its path numbers refer to.
///
/// Paths stay in stored form, copied into blocks that never move, so that an ``EncodedPath`` of a
/// defined path stays valid as long as the table does. A hash index (with `RestorationPath`'s
/// equality) finds a path defined twice, which a segment never does.
final class SegmentPaths {
    private var blocks: [UnsafeMutableRawPointer] = []
    private var blockUsed = 0
    private var blockCapacity = 0
    private(set) var paths: [EncodedPath] = []
    private var index = PathHashIndex()

    deinit { for block in blocks { free(block) } }

    var count: Int { paths.count }

    subscript(number: Int) -> EncodedPath { paths[number] }

    /// The path hash (``EncodedPath/pathHashValue``) of the path numbered `number`.
    func pathHash(of number: Int) -> Int { index.hash(of: number) }

    /// Defines the path `bytes` hold (checked already) under the next number, or returns `false`
    /// without defining it when the segment already defines that path.
    func define(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let candidate = EncodedPath(start: bytes.baseAddress!, count: bytes.count)
        let found: Int?
        do {
            // Released at the end of this block, before the append below, which would otherwise copy.
            let paths = self.paths
            found = index.insert(hash: candidate.pathHashValue) { EncodedPath.same(paths[$0], candidate) }
        }
        guard found == nil else { return false }
        paths.append(store(bytes))
        return true
    }

    /// Forgets the paths numbered `count` and above: those of a batch found damaged.
    func truncate(to count: Int) {
        guard count < paths.count else { return }
        paths.removeLast(paths.count - count)
        let paths = self.paths
        index = PathHashIndex(count: count) { paths[$0].pathHashValue }
    }

    /// Every defined path as a `RestorationPath`, in number order.
    var restorationPaths: [RestorationPath] {
        var decoder = EncodedPathDecoder()
        return paths.map { decoder.decode($0) }
    }

    /// Copies `bytes` into a block and returns where they are.
    private func store(_ bytes: UnsafeRawBufferPointer) -> EncodedPath {
        if blockCapacity - blockUsed < bytes.count {
            blockCapacity = max(64 << 10, bytes.count)
            blocks.append(malloc(blockCapacity)!)
            blockUsed = 0
        }
        let destination = blocks[blocks.count - 1] + blockUsed
        destination.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        blockUsed += bytes.count
        return EncodedPath(start: UnsafeRawPointer(destination), count: bytes.count)
    }
}
