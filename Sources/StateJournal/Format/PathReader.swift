#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads restoration paths as checkpoints and batches store them: a component count, then each
/// component as a length and UTF-8 bytes.
///
/// Paths share most of their components (`Main/Window-1/List-7/…`), so the reader remembers the
/// last component it read at each depth, with where its bytes are, and reuses that string when the
/// next path has the same bytes at the same depth instead of validating and building it again.
///
/// The remembered byte ranges point into the buffer being read: a reader must not outlive the
/// buffer, nor be used with another one.
struct PathReader {
    private var lastComponents: [(bytes: UnsafeRawBufferPointer, string: String)] = []

    /// Reads one path, checking it against ``JournalLimits`` exactly as a component-by-component
    /// read does: the same limits, the same errors.
    mutating func read(from reader: inout ByteReader) throws(FormatViolation) -> RestorationPath {
        let depth = try reader.count(atMost: JournalLimits.maximumPathDepth, "path depth")
        guard depth > 0 else { throw FormatViolation("a path has no components") }
        var components: [String] = []
        components.reserveCapacity(depth)
        for level in 0..<depth {
            components.append(try component(at: level, from: &reader))
        }
        return RestorationPath(components)
    }

    /// Checks one path exactly as ``read(from:)`` does (the same limits, the same errors) without
    /// building it, and returns its stored bytes.
    mutating func check(from reader: inout ByteReader) throws(FormatViolation) -> UnsafeRawBufferPointer {
        let start = reader.position
        let depth = try reader.count(atMost: JournalLimits.maximumPathDepth, "path depth")
        guard depth > 0 else { throw FormatViolation("a path has no components") }
        for level in 0..<depth {
            let length = try reader.count(atMost: JournalLimits.maximumComponentLength, "path component length")
            let bytes = try reader.bytes(length)
            if EncodedPath.isASCII(bytes) { continue }
            if level < lastComponents.count, Self.equal(lastComponents[level].bytes, bytes) { continue }
            guard let string = ByteReader.validatedString(bytes) else {
                throw FormatViolation("path component is not valid UTF-8")
            }
            if level < lastComponents.count {
                lastComponents[level] = (bytes, string)
            } else {
                while lastComponents.count < level { lastComponents.append((UnsafeRawBufferPointer(start: nil, count: 0), "")) }
                lastComponents.append((bytes, string))
            }
        }
        return UnsafeRawBufferPointer(rebasing: reader.base[start..<reader.position])
    }

    /// Reads the component at depth `level`, reusing the last string read at that depth when the
    /// bytes are the same.
    @inline(__always)
    private mutating func component(at level: Int, from reader: inout ByteReader) throws(FormatViolation) -> String {
        let length = try reader.count(atMost: JournalLimits.maximumComponentLength, "path component length")
        let bytes = try reader.bytes(length)
        if level < lastComponents.count, Self.equal(lastComponents[level].bytes, bytes) {
            return lastComponents[level].string
        }
        guard let string = ByteReader.validatedString(bytes) else {
            throw FormatViolation("path component is not valid UTF-8")
        }
        if level < lastComponents.count {
            lastComponents[level] = (bytes, string)
        } else {
            lastComponents.append((bytes, string))
        }
        return string
    }

    private static func equal(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
        guard left.count == right.count else { return false }
        guard let leftStart = left.baseAddress, let rightStart = right.baseAddress else { return true }
        return memcmp(leftStart, rightStart, left.count) == 0
    }
}
