/// Checks restoration paths as checkpoints and batches store them (a component count, then each
/// component as a length and UTF-8 bytes) against ``JournalLimits``, and returns them in that stored
/// form, as ``EncodedPath`` reads them.
///
/// Paths share most of their components (`Main/Window-1/List-7/…`), so a component that is not
/// ASCII is validated as UTF-8 only when its bytes differ from the last one checked at its depth.
/// The remembered byte ranges point into the buffer being read: a reader must not outlive the
/// buffer, nor be used with another one.
struct PathReader {
    private var lastValidated: [UnsafeRawBufferPointer] = []

    /// Checks one path and returns its stored bytes.
    mutating func check(from reader: inout ByteReader) throws(FormatViolation) -> UnsafeRawBufferPointer {
        let start = reader.position
        let depth = try reader.count(atMost: JournalLimits.maximumPathDepth, "path depth")
        guard depth > 0 else { throw FormatViolation("a path has no components") }
        for level in 0..<depth {
            let length = try reader.count(atMost: JournalLimits.maximumComponentLength, "path component length")
            let bytes = try reader.bytes(length)
            if EncodedPath.isASCII(bytes) { continue }
            if level < lastValidated.count, EncodedPath.equal(lastValidated[level], bytes) { continue }
            guard String(validating: bytes, as: UTF8.self) != nil else {
                throw FormatViolation("path component is not valid UTF-8")
            }
            while lastValidated.count <= level { lastValidated.append(UnsafeRawBufferPointer(start: nil, count: 0)) }
            lastValidated[level] = bytes
        }
        return UnsafeRawBufferPointer(rebasing: reader.base[start..<reader.position])
    }
}
