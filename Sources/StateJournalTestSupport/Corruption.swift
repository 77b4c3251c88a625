import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#endif

/// Damage done to a store's files on purpose, and the few facts about the on-disk layout a test
/// needs to aim it (file names, header size, record framing), taken from the format article.
public enum Corruption {
    /// The segment header's size in bytes.
    public static let segmentHeaderSize = 44
    /// The record header's size in segments of format versions 1 and 2:
    /// `crc32c u32 | length u32 | type u8`. From version 3 on the length is a varint of 1 to 4
    /// bytes, so the header is 6 to 9 bytes: see ``RecordSpan/headerLength``.
    public static let recordHeaderSize = 9
    /// The format version of the segments a writer creates.
    public static let currentFormatVersion: UInt16 = 3

    /// The whole content of the file at `path`.
    public static func readFile(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Replaces the file's content in place, without syncing: damage only needs to be visible to
    /// the next open, and tests write files thousands of times.
    public static func writeFile(_ path: String, _ bytes: [UInt8]) throws {
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SystemError(call: "open", errno: errno, path: path) }
        defer { Glibc.close(descriptor) }
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress! + done, bytes.count - done, off_t(done))
            }
            guard written > 0 else { throw SystemError(call: "pwrite", errno: errno, path: path) }
            done += written
        }
    }

    /// Cuts the file to its first `offset` bytes.
    public static func truncate(_ path: String, at offset: Int) throws {
        let bytes = try readFile(path)
        precondition(offset <= bytes.count)
        try writeFile(path, Array(bytes[..<offset]))
    }

    /// Inverts every bit of the byte at `offset`.
    public static func flipByte(_ path: String, at offset: Int, mask: UInt8 = 0xFF) throws {
        var bytes = try readFile(path)
        bytes[offset] ^= mask
        try writeFile(path, bytes)
    }

    /// Overwrites bytes at `offset`.
    public static func overwrite(_ path: String, at offset: Int, with replacement: [UInt8]) throws {
        var bytes = try readFile(path)
        bytes.replaceSubrange(offset..<offset + replacement.count, with: replacement)
        try writeFile(path, bytes)
    }

    /// Appends bytes to the end of the file.
    public static func append(_ path: String, _ extra: [UInt8]) throws {
        try writeFile(path, try readFile(path) + extra)
    }

    /// `count` zero bytes.
    public static func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }

    /// `count` random bytes, the same for the same `seed`.
    public static func garbage(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        return random.bytes(count)
    }

    /// The store's segment file names, oldest first.
    public static func segmentNames(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasPrefix("segment-") && $0.hasSuffix(".sjl") }.sorted()
    }

    /// The store's quarantine file names.
    public static func quarantineNames(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("damaged-") }.sorted()
    }

    /// One framed record of a segment, as the framing alone describes it.
    public struct RecordSpan: Sendable, Hashable {
        /// Where the record starts in the segment file: the offset of its header.
        public var offset: Int
        /// The record's size in bytes, header included.
        public var length: Int
        /// The record's type byte: ``batch``, ``commit``, ``seal`` or ``compactCommit``.
        public var type: UInt8
        /// The size of the record's header: 9 in segments of format versions 1 and 2, 6 to 9 after.
        public var headerLength: Int = Corruption.recordHeaderSize
        /// Where the record ends: the offset of the byte after it.
        public var end: Int { offset + length }
        /// The type bytes of the batch, commit, seal and compact commit records.
        public static let batch: UInt8 = 1, commit: UInt8 = 2, seal: UInt8 = 3, compactCommit: UInt8 = 4
    }

    /// Walks the record framing of an intact segment.
    public static func records(ofSegment bytes: [UInt8]) -> [RecordSpan] {
        var spans: [RecordSpan] = []
        guard bytes.count >= segmentHeaderSize else { return [] }
        let version = UInt16(bytes[4]) | UInt16(bytes[5]) << 8
        var offset = segmentHeaderSize
        while let (length, headerLength) = recordHeader(bytes, at: offset, version: version) {
            let end = offset + headerLength + length
            guard end <= bytes.count else { break }
            spans.append(
                RecordSpan(
                    offset: offset, length: headerLength + length, type: bytes[offset + headerLength - 1],
                    headerLength: headerLength))
            offset = end
        }
        return spans
    }

    /// The payload length and header size of the record header at `offset`, as a segment of format
    /// `version` frames it, or `nil` when the bytes end inside it.
    static func recordHeader(_ bytes: [UInt8], at offset: Int, version: UInt16) -> (length: Int, headerLength: Int)? {
        guard version >= 3 else {
            guard offset + recordHeaderSize <= bytes.count else { return nil }
            return (Int(littleEndianU32(bytes, at: offset + 4)), recordHeaderSize)
        }
        var length = 0
        var index = offset + 4
        while index < bytes.count && index < offset + 8 {
            length |= Int(bytes[index] & 0x7F) << (7 * (index - offset - 4))
            index += 1
            if bytes[index - 1] & 0x80 == 0 {
                return index < bytes.count ? (length, index + 1 - offset) : nil
            }
        }
        return nil
    }

    /// The little-endian `UInt32` at `offset` of `bytes`.
    public static func littleEndianU32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << UInt32(8 * $1) }
    }

    /// The four bytes of `value`, least significant first.
    public static func littleEndianBytes(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> UInt32(8 * $0)) }
    }

    /// Frames a record the way a segment of format `version` holds it, with a correct checksum: for
    /// crafting records whose framing is valid but whose content lies.
    public static func frame(type: UInt8, payload: [UInt8], version: UInt16 = currentFormatVersion) -> [UInt8] {
        let length = version >= 3 ? varint(UInt64(payload.count)) : littleEndianBytes(UInt32(payload.count))
        let covered = length + [type] + payload
        return littleEndianBytes(TestCRC32C.checksum(covered)) + covered
    }

    /// LEB128, as the format's varints.
    public static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value != 0 { byte |= 0x80 }
            bytes.append(byte)
        } while value != 0
        return bytes
    }
}

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), bitwise: the checksum of the format, for
/// tests that craft bytes with valid checksums.
public enum TestCRC32C {
    /// The CRC-32C of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }
}

/// Every file of a directory, held in memory, to put a store back exactly as it was between the
/// cases of a sweep.
public struct DirectorySnapshot: Sendable {
    /// The content of each file, by file name.
    public let files: [String: [UInt8]]

    /// Reads every file of `directory` (which holds no subdirectories).
    public init(of directory: String) throws {
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            files[name] = try Corruption.readFile(directory + "/" + name)
        }
        self.files = files
    }

    /// Makes `directory` hold exactly the snapshot's files.
    public func restore(to directory: String) throws {
        let manager = FileManager.default
        if manager.fileExists(atPath: directory) {
            for name in try manager.contentsOfDirectory(atPath: directory) where files[name] == nil {
                try manager.removeItem(atPath: directory + "/" + name)
            }
        } else {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        for (name, bytes) in files { try Corruption.writeFile(directory + "/" + name, bytes) }
    }
}
