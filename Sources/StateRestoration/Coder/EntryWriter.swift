import Foundation
import StateJournal

/// Appends values in the entry encoding to a byte buffer.
struct EntryWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func writeHeader(kind: RestorableEntryKind, typeName: String, restorationClassName: String?) {
        bytes.append(EntryFormatVersion.current)
        bytes.append(kind.rawValue)
        writeString(typeName)
        writeString(restorationClassName ?? "")
    }

    mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func writeString(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            writeVarint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func writeFixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func writeDictionary(_ values: [String: RestorableValue]) {
        bytes.append(ValueTag.dictionary.rawValue)
        writeVarint(UInt64(values.count))
        if values.count == 1, let (key, value) = values.first {
            writeString(key)
            write(value)
            return
        }
        for key in values.keys.sorted(by: CoderValues.precedes) {
            writeString(key)
            write(values[key]!)
        }
    }

    /// Writes a coder's values as a dictionary, keys in ascending UTF-8 byte order.
    mutating func writeDictionary(_ values: CoderValues) {
        bytes.append(ValueTag.dictionary.rawValue)
        writeVarint(UInt64(values.count))
        values.forEachInKeyOrder { key, value in
            writeString(key)
            write(value)
        }
    }

    /// Empties the buffer, keeping its capacity, to write another entry.
    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
    }

    mutating func write(_ value: RestorableValue) {
        switch value {
        case .null: bytes.append(ValueTag.null.rawValue)
        case .bool(let value): bytes.append(value ? ValueTag.true.rawValue : ValueTag.false.rawValue)
        case .int(let value):
            bytes.append(ValueTag.int.rawValue)
            writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
        case .double(let value):
            bytes.append(ValueTag.double.rawValue)
            writeFixed64(value.bitPattern)
        case .string(let value):
            bytes.append(ValueTag.string.rawValue)
            writeString(value)
        case .data(let value):
            bytes.append(ValueTag.data.rawValue)
            writeVarint(UInt64(value.count))
            bytes.append(contentsOf: value)
        case .date(let value):
            bytes.append(ValueTag.date.rawValue)
            writeFixed64(value.timeIntervalSinceReferenceDate.bitPattern)
        case .array(let values):
            bytes.append(ValueTag.array.rawValue)
            writeVarint(UInt64(values.count))
            for value in values { write(value) }
        case .dictionary(let values):
            writeDictionary(values)
        case .reference(let path):
            bytes.append(ValueTag.reference.rawValue)
            writeVarint(UInt64(path.components.count))
            for component in path.components { writeString(component) }
        }
    }
}
