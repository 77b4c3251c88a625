/// Segments are written ahead with zeros, so that commits overwrite blocks the file already has.
///
/// `fdatasync` after an append must also make the file's new size durable: on ext4 a journal
/// commit, a second write to the device on every commit under ``Durability/everyCommit``. Writing
/// over zeros that an earlier sync made durable changes no size and no extent, so the sync writes
/// the data alone, as SQLite's reused WAL file does. `fallocate` would not do: its unwritten extents
/// need a metadata change on the first write into them.
///
/// The zeros are written in steps of ``preallocationStep``, when a record would pass the end of the
/// last step; the next sync makes them and the new size durable once per step. A sealed segment is
/// cut back to its seal and a closed journal's segment to its last record, so that stores at rest
/// hold no zeros. After a crash, the zeros after the last record are not a torn tail: the scanner
/// and the writer's recovery tell them apart (``FileWindowReader/isZero(from:)``) and cut them
/// without reporting them.
extension Journal {
    static let preallocationStep: Int64 = 1 << 20
    private static let zeros = [UInt8](repeating: 0, count: Int(preallocationStep))

    /// Writes zeros ahead of the active segment's end until the file holds at least `end` bytes.
    /// Called with `condition` locked.
    func preallocate(through end: Int64) throws {
        guard end > segment.allocated else { return }
        var position = segment.allocated
        let target = max(end, segment.allocated + Self.preallocationStep)
        while position < target {
            let count = Int(min(Int64(Self.zeros.count), target - position))
            if count == Self.zeros.count {
                try fileSystem.writeAll(segment.descriptor, Self.zeros, at: position)
            } else {
                try fileSystem.writeAll(segment.descriptor, Array(Self.zeros[0..<count]), at: position)
            }
            position += Int64(count)
            segment.allocated = position
        }
    }

    /// Cuts the zeros written ahead of a segment's last record. Called with `condition` locked.
    func cutPreallocation(of segment: inout ActiveSegment) throws {
        guard segment.allocated > segment.size else { return }
        try fileSystem.truncate(segment.descriptor, to: segment.size)
        segment.allocated = segment.size
    }
}
