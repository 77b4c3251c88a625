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
    /// Per bucket: the high 32 bits of the path's hash, and its number plus one (0 when empty).
    private var index: [UInt64] = []

    deinit { for block in blocks { free(block) } }

    var count: Int { paths.count }

    subscript(number: Int) -> EncodedPath { paths[number] }

    /// Defines the path `bytes` hold (checked already) under the next number, or returns `false`
    /// without defining it when the segment already defines that path.
    func define(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if 2 * (paths.count + 1) > index.count {
            var capacity = 64
            while capacity < 4 * (paths.count + 1) { capacity *= 2 }
            rebuildIndex(capacity: capacity)
        }
        let candidate = EncodedPath(start: bytes.baseAddress!, count: bytes.count)
        let hash = candidate.pathHashValue
        let mask = index.count - 1
        let tag = UInt64(truncatingIfNeeded: hash) & 0xFFFF_FFFF_0000_0000
        var bucket = hash & mask
        while index[bucket] != 0 {
            let entry = index[bucket]
            if entry & 0xFFFF_FFFF_0000_0000 == tag, EncodedPath.compare(paths[Int(entry & 0xFFFF_FFFF) - 1], candidate) == 0 {
                return false
            }
            bucket = (bucket + 1) & mask
        }
        paths.append(store(bytes))
        index[bucket] = tag | UInt64(paths.count)
        return true
    }

    /// Forgets the paths numbered `count` and above: those of a batch found damaged.
    func truncate(to count: Int) {
        guard count < paths.count else { return }
        paths.removeLast(paths.count - count)
        rebuildIndex(capacity: index.count)
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

    /// Rebuilds the index with `capacity` buckets, a power of two.
    private func rebuildIndex(capacity: Int) {
        index = [UInt64](repeating: 0, count: capacity)
        let mask = capacity - 1
        for (number, path) in paths.enumerated() {
            let hash = path.pathHashValue
            var bucket = hash & mask
            while index[bucket] != 0 { bucket = (bucket + 1) & mask }
            index[bucket] = (UInt64(truncatingIfNeeded: hash) & 0xFFFF_FFFF_0000_0000) | UInt64(number + 1)
        }
    }
}
