import Foundation
import StateJournal

/// A type the coder stores as a ``RestorableValue`` of its own, without going through `Codable`:
/// the coder's fast paths, in both directions and at any depth of a `Codable` value.
///
/// Each mapping gives the same value its `Codable` form gives through the tree encoder, except
/// `URL`, whose `Codable` form is a dictionary and which is stored as its absolute string (the
/// dictionary form is still read).
protocol DirectlyStored {
    /// The value as it is stored.
    func storedValue(_ context: ValueEncoding.Context) throws -> RestorableValue
    /// Reads a stored value back, or throws a ``RestorationError`` naming the path, the key and
    /// the coding path.
    static func fromStored(
        _ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context
    ) throws -> Self
}

extension Bool: DirectlyStored {
    func storedValue(_ context: ValueEncoding.Context) -> RestorableValue { .bool(self) }
    static func fromStored(_ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context)
        throws -> Bool
    {
        guard case .bool(let bool) = value else { throw context.mismatch("bool", value, at: codingPath) }
        return bool
    }
}

extension String: DirectlyStored {
    func storedValue(_ context: ValueEncoding.Context) -> RestorableValue { .string(self) }
    static func fromStored(_ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context)
        throws -> String
    {
        guard case .string(let string) = value else { throw context.mismatch("string", value, at: codingPath) }
        return string
    }
}

extension Double: DirectlyStored {
    func storedValue(_ context: ValueEncoding.Context) -> RestorableValue { .double(self) }
    /// Accepts an integer too, converted.
    static func fromStored(_ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context)
        throws -> Double
    {
        switch value {
        case .double(let double): return double
        case .int(let int): return Double(int)
        default: throw context.mismatch("double", value, at: codingPath)
        }
    }
}

extension Float: DirectlyStored {
    func storedValue(_ context: ValueEncoding.Context) -> RestorableValue { .double(Double(self)) }
    static func fromStored(_ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context)
        throws -> Float
    {
        Float(try Double.fromStored(value, codingPath: codingPath, context: context))
    }
}

extension Data: DirectlyStored {
    func storedValue(_ context: ValueEncoding.Context) -> RestorableValue { .data(self) }
    static func fromStored(_ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context)
        throws -> Data
    {
        guard case .data(let data) = value else { throw context.mismatch("data", value, at: codingPath) }
        return data
    }
}

extension Date: DirectlyStored {
    func storedValue(_ context: ValueEncoding.Context) -> RestorableValue { .date(self) }
    static func fromStored(_ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context)
        throws -> Date
    {
        guard case .date(let date) = value else { throw context.mismatch("date", value, at: codingPath) }
        return date
    }
}

/// Stored as its absolute string; a relative URL comes back resolved against its base.
extension URL: DirectlyStored {
    func storedValue(_ context: ValueEncoding.Context) -> RestorableValue { .string(absoluteString) }
    /// Reads the string form, the form `NSCoder`'s `encode(_:forKey:)` writes (``FoundationArchive``),
    /// and the dictionary form `URL`'s `Codable` conformance writes.
    static func fromStored(_ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context)
        throws -> URL
    {
        switch value {
        case .string(let string):
            guard let url = URL(string: string) else {
                throw context.unreadable("a URL", value, at: codingPath)
            }
            return url
        case .dictionary(let dictionary):
            if case .url(let url)? = FoundationArchive(dictionary) { return url }
            return try URL(from: ValueDecoding.TreeDecoder(value: value, codingPath: codingPath, context: context))
        default:
            throw context.mismatch("string holding a URL", value, at: codingPath)
        }
    }
}

/// Stored as its string form (`uuidString`), as its `Codable` conformance writes it.
extension UUID: DirectlyStored {
    func storedValue(_ context: ValueEncoding.Context) -> RestorableValue { .string(uuidString) }
    /// Reads the string form, and the form `NSCoder`'s `encode(_:forKey:)` writes
    /// (``FoundationArchive``).
    static func fromStored(_ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context)
        throws -> UUID
    {
        if case .dictionary(let dictionary) = value, case .uuid(let uuid)? = FoundationArchive(dictionary) {
            return uuid
        }
        guard case .string(let string) = value else {
            throw context.mismatch("string holding a UUID", value, at: codingPath)
        }
        guard let uuid = UUID(uuidString: string) else { throw context.unreadable("a UUID", value, at: codingPath) }
        return uuid
    }
}

/// Every fixed-width integer is stored as `int`.
protocol DirectlyStoredInteger: DirectlyStored, FixedWidthInteger {}

extension DirectlyStoredInteger {
    func storedValue(_ context: ValueEncoding.Context) throws -> RestorableValue {
        guard let signed = Int64(exactly: self) else {
            throw RestorationError(
                .valueOutOfRange,
                "The unsigned value \(self) exceeds Int64.max and cannot be saved; save it as a string.",
                path: context.path, key: context.key)
        }
        return .int(signed)
    }

    static func fromStored(_ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context)
        throws -> Self
    {
        guard case .int(let int) = value else { throw context.mismatch("int", value, at: codingPath) }
        guard let converted = Self(exactly: int) else { throw context.outOfRange(value, Self.self, at: codingPath) }
        return converted
    }
}

extension Int: DirectlyStoredInteger {}
extension Int8: DirectlyStoredInteger {}
extension Int16: DirectlyStoredInteger {}
extension Int32: DirectlyStoredInteger {}
extension Int64: DirectlyStoredInteger {}
extension UInt: DirectlyStoredInteger {}
extension UInt8: DirectlyStoredInteger {}
extension UInt16: DirectlyStoredInteger {}
extension UInt32: DirectlyStoredInteger {}
extension UInt64: DirectlyStoredInteger {}

/// An array of directly stored values is an `array`, as its `Codable` form.
extension Array: DirectlyStored where Element: DirectlyStored {
    func storedValue(_ context: ValueEncoding.Context) throws -> RestorableValue {
        .array(try map { try $0.storedValue(context) })
    }

    static func fromStored(_ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context)
        throws -> [Element]
    {
        guard case .array(let items) = value else { throw context.mismatch("array", value, at: codingPath) }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            result.append(
                try Element.fromStored(
                    item, codingPath: codingPath + [ValueDecoding.IndexKey(intValue: index)], context: context))
        }
        return result
    }
}

/// A string-keyed dictionary of directly stored values is a `dictionary`, as its `Codable` form.
extension Dictionary: DirectlyStored where Key == String, Value: DirectlyStored {
    func storedValue(_ context: ValueEncoding.Context) throws -> RestorableValue {
        .dictionary(try mapValues { try $0.storedValue(context) })
    }

    static func fromStored(_ value: RestorableValue, codingPath: [any CodingKey], context: ValueDecoding.Context)
        throws -> [String: Value]
    {
        guard case .dictionary(let items) = value else {
            throw context.mismatch("dictionary", value, at: codingPath)
        }
        var result: [String: Value] = [:]
        result.reserveCapacity(items.count)
        for (key, item) in items {
            result[key] = try Value.fromStored(
                item, codingPath: codingPath + [ValueDecoding.StringKey(key)], context: context)
        }
        return result
    }
}
