import Foundation
import StateJournal

/// Reads values in the entry encoding from untrusted bytes.
///
/// Every length and count is checked against the bytes that remain before anything is allocated,
/// and nesting is limited, so malformed input throws ``RestorationError/Code/corruptEntry`` and
/// never crashes, loops or allocates more than the input's size.
struct EntryReader {
    static let maximumDepth = 256

    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    func corrupt(_ what: String) -> RestorationError {
        RestorationError(.corruptEntry, "The entry is malformed at byte \(offset): \(what).")
    }

    mutating func readByte() throws -> UInt8 {
        guard offset < bytes.count else { throw corrupt("it ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readVarint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            if shift == 63 && byte > 1 { throw corrupt("a number is too large") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw corrupt("a number is too long") }
        }
    }

    /// Reads a length or count and checks that at least `minimumSize` bytes per item remain.
    mutating func readCount(minimumSize: Int) throws -> Int {
        let count = try readVarint()
        guard count <= UInt64(bytes.count - offset) / UInt64(max(minimumSize, 1)) else {
            throw corrupt("a length of \(count) exceeds the bytes that remain")
        }
        return Int(count)
    }

    mutating func readBytes(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count <= bytes.count - offset else { throw corrupt("it ends early") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func readString() throws -> String {
        let count = try readCount(minimumSize: 1)
        let slice = try readBytes(count)
        guard let string = String(validating: slice, as: UTF8.self) else { throw corrupt("a string is not UTF-8") }
        return string
    }

    mutating func readFixed64() throws -> UInt64 {
        let slice = try readBytes(8)
        var value: UInt64 = 0
        for (index, byte) in slice.enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
        return value
    }

    mutating func readValue(depth: Int = 0) throws -> RestorableValue {
        guard depth < Self.maximumDepth else { throw corrupt("values nest deeper than \(Self.maximumDepth)") }
        let tagByte = try readByte()
        guard let tag = ValueTag(rawValue: tagByte) else { throw corrupt("unknown value tag \(tagByte)") }
        switch tag {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int:
            let zigzag = try readVarint()
            return .int(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
        case .double: return .double(Double(bitPattern: try readFixed64()))
        case .string: return .string(try readString())
        case .data:
            let count = try readCount(minimumSize: 1)
            return .data(Data(try readBytes(count)))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try readFixed64())))
        case .array:
            let count = try readCount(minimumSize: 1)
            var values: [RestorableValue] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try readValue(depth: depth + 1)) }
            return .array(values)
        case .dictionary:
            return .dictionary(try readDictionaryBody(depth: depth))
        case .reference:
            let count = try readCount(minimumSize: 1)
            var components: [String] = []
            components.reserveCapacity(count)
            for _ in 0..<count { components.append(try readString()) }
            return .reference(RestorationPath(components))
        }
    }

    mutating func readDictionaryBody(depth: Int) throws -> [String: RestorableValue] {
        let count = try readCount(minimumSize: 2)
        var values: [String: RestorableValue] = [:]
        values.reserveCapacity(count)
        for _ in 0..<count {
            let key = try readString()
            guard values.updateValue(try readValue(depth: depth + 1), forKey: key) == nil else {
                throw corrupt("the key \"\(key)\" appears twice")
            }
        }
        return values
    }
}
