/// A state written as the changes from the path's previous version, from format version 3 on.
///
/// ```
/// run*          until the end of the patch, each:
///   copy        varint: bytes of the previous version copied as they are
///   sizes       varint: (inserted count << 4) | d, where d < 15 is the count of bytes of the
///               previous version dropped, and d = 15 says that count − 15 follows:
///   dropped     varint, only when d = 15
///   inserted    that many bytes of the new state
/// ```
/// After the last run, the rest of the previous version is copied. A run that neither drops nor
/// inserts anything is a format violation (it would only copy, which the end does anyway), so a
/// patch has at most one run per two of its bytes, and the empty patch means "unchanged".
enum StatePatch {
    /// How many bytes ahead the encoder looks for the two versions to agree again after a change.
    private static let lookahead = 16
    /// How many equal bytes count as agreeing again.
    private static let resynchronizingMatch = 4

    /// Appends to `writer` the patch that turns `old` into `new`, and returns `true`; returns `false`
    /// (leaving `writer` with some of the patch appended) as soon as the patch exceeds `limit` bytes.
    static func encode(
        from old: UnsafeRawBufferPointer, to new: UnsafeRawBufferPointer, into writer: inout ByteWriter, limit: Int
    ) -> Bool {
        let patchStart = writer.bytes.count
        // The common suffix is copied by the end of the patch: runs only cover what is before it.
        var suffix = 0
        let shorter = min(old.count, new.count)
        while suffix < shorter && old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
        let oldEnd = old.count - suffix
        let newEnd = new.count - suffix
        var o = 0
        var w = 0
        while true {
            let copyStart = o
            while o < oldEnd && w < newEnd && old[o] == new[w] {
                o += 1
                w += 1
            }
            if o == oldEnd && w == newEnd { return true }
            // The fewest bytes dropped and inserted after which the two agree again.
            var dropped = oldEnd - o
            var inserted = newEnd - w
            search: for total in 1...(2 * lookahead) {
                for drop in 0...total {
                    let insert = total - drop
                    guard o + drop <= oldEnd, w + insert <= newEnd else { continue }
                    if o + drop == oldEnd && w + insert == newEnd {
                        dropped = drop
                        inserted = insert
                        break search
                    }
                    guard o + drop + resynchronizingMatch <= oldEnd, w + insert + resynchronizingMatch <= newEnd
                    else { continue }
                    var equal = true
                    for index in 0..<resynchronizingMatch where old[o + drop + index] != new[w + insert + index] {
                        equal = false
                        break
                    }
                    if equal {
                        dropped = drop
                        inserted = insert
                        break search
                    }
                }
            }
            writer.varint(o - copyStart)
            writer.varint(inserted << 4 | min(dropped, 15))
            if dropped >= 15 { writer.varint(dropped - 15) }
            writer.raw(UnsafeRawBufferPointer(rebasing: new[w..<w + inserted]))
            o += dropped
            w += inserted
            if writer.bytes.count - patchStart > limit { return false }
        }
    }

    /// Replaces `output` with the state `patch` makes of `old`.
    static func apply(
        _ patch: UnsafeRawBufferPointer, to old: UnsafeRawBufferPointer, into output: inout [UInt8]
    ) throws(FormatViolation) {
        output.removeAll(keepingCapacity: true)
        var reader = ByteReader(patch)
        var position = 0
        func append(_ bytes: UnsafeRawBufferPointer, into output: inout [UInt8]) throws(FormatViolation) {
            guard bytes.count <= JournalLimits.maximumStateSize - output.count else {
                throw FormatViolation("patched state exceeds the state size limit")
            }
            output.append(contentsOf: bytes)
        }
        while !reader.isAtEnd {
            let copy = try reader.count(atMost: old.count - position, "patch copy length")
            try append(UnsafeRawBufferPointer(rebasing: old[position..<position + copy]), into: &output)
            position += copy
            let sizes = try reader.varint()
            guard sizes >> 4 <= UInt64(JournalLimits.maximumStateSize) else {
                throw FormatViolation("patch inserts more than a state can hold")
            }
            let inserted = Int(sizes >> 4)
            var dropped = Int(sizes & 15)
            if dropped == 15 { dropped += try reader.count(atMost: old.count - position, "patch drop length") }
            guard dropped <= old.count - position else {
                throw FormatViolation("patch drops bytes beyond the previous version")
            }
            guard dropped + inserted > 0 else { throw FormatViolation("patch run changes nothing") }
            position += dropped
            try append(try reader.bytes(inserted), into: &output)
        }
        try append(UnsafeRawBufferPointer(rebasing: old[position...]), into: &output)
    }
}
