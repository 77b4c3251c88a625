import Foundation
import StateJournal

/// Turns a ``RestorableValue`` tree back into a `Decodable` value, throwing
/// ``RestorationError`` (naming the path, the coder key and the nested coding path) on a
/// mismatch.
enum ValueDecoding {
    struct Context {
        let path: RestorationPath
        let key: String

        func mismatch(_ expected: String, _ found: RestorableValue, at codingPath: [any CodingKey]) -> RestorationError
        {
            RestorationError(
                .typeMismatch,
                "Expected \(expected) but found \(found.kindName)\(where_(codingPath)).", path: path, key: key)
        }

        func missing(_ name: String, at codingPath: [any CodingKey]) -> RestorationError {
            RestorationError(.keyNotFound, "No value for \"\(name)\"\(where_(codingPath)).", path: path, key: key)
        }

        func outOfRange(_ value: RestorableValue, _ type: Any.Type, at codingPath: [any CodingKey]) -> RestorationError
        {
            RestorationError(
                .valueOutOfRange, "The value \(value.jsonText()) does not fit \(type)\(where_(codingPath)).",
                path: path,
                key: key)
        }

        func unreadable(_ expected: String, _ found: RestorableValue, at codingPath: [any CodingKey])
            -> RestorationError
        {
            RestorationError(
                .typeMismatch, "The value \(found.jsonText()) is not \(expected)\(where_(codingPath)).", path: path,
                key: key)
        }

        private func where_(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty ? "" : " at \(codingPath.map(\.stringValue).joined(separator: "."))"
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from value: RestorableValue, path: RestorationPath, key: String)
        throws -> T
    {
        try decodeValue(type, from: value, codingPath: [], context: Context(path: path, key: key))
    }

    static func decodeValue<T: Decodable>(
        _ type: T.Type, from value: RestorableValue, codingPath: [any CodingKey], context: Context
    ) throws -> T {
        if let scalar = try scalar(type, from: value, codingPath: codingPath, context: context) { return scalar }
        return try T(from: TreeDecoder(value: value, codingPath: codingPath, context: context))
    }

    /// The fast path: a type the coder stores directly (``DirectlyStored``) is read without
    /// `Codable`; `nil` for any other type.
    static func scalar<T>(_ type: T.Type, from value: RestorableValue, codingPath: [any CodingKey], context: Context)
        throws -> T?
    {
        guard let direct = type as? any DirectlyStored.Type else { return nil }
        return try direct.fromStored(value, codingPath: codingPath, context: context) as? T
    }

    struct TreeDecoder: Decoder {
        let value: RestorableValue
        let codingPath: [any CodingKey]
        let context: Context
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard case .dictionary(let values) = value else {
                throw context.mismatch("dictionary", value, at: codingPath)
            }
            return KeyedDecodingContainer(KeyedContainer<Key>(values: values, codingPath: codingPath, context: context))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            guard case .array(let values) = value else { throw context.mismatch("array", value, at: codingPath) }
            return UnkeyedContainer(values: values, codingPath: codingPath, context: context)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            SingleContainer(value: value, codingPath: codingPath, context: context)
        }
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let values: [String: RestorableValue]
        let codingPath: [any CodingKey]
        let context: Context

        var allKeys: [Key] { values.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { values[key.stringValue] != nil }

        private func value(_ key: Key) throws -> RestorableValue {
            guard let value = values[key.stringValue] else { throw context.missing(key.stringValue, at: codingPath) }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try decodeValue(type, from: try value(key), codingPath: codingPath + [key], context: context)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try TreeDecoder(value: try value(key), codingPath: codingPath + [key], context: context).container(
                keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try TreeDecoder(value: try value(key), codingPath: codingPath + [key], context: context).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            TreeDecoder(value: values["super"] ?? .null, codingPath: codingPath, context: context)
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            TreeDecoder(value: values[key.stringValue] ?? .null, codingPath: codingPath + [key], context: context)
        }
    }

    struct IndexKey: CodingKey {
        let intValue: Int?
        let stringValue: String
        init(intValue: Int) {
            self.intValue = intValue
            self.stringValue = String(intValue)
        }
        init?(stringValue: String) { return nil }
    }

    struct StringKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ stringValue: String) { self.stringValue = stringValue }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { return nil }
    }

    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let values: [RestorableValue]
        let codingPath: [any CodingKey]
        let context: Context
        var currentIndex = 0
        var count: Int? { values.count }
        var isAtEnd: Bool { currentIndex >= values.count }

        init(values: [RestorableValue], codingPath: [any CodingKey], context: Context) {
            self.values = values
            self.codingPath = codingPath
            self.context = context
        }

        private mutating func next() throws -> (RestorableValue, [any CodingKey]) {
            let path = codingPath + [IndexKey(intValue: currentIndex)]
            guard !isAtEnd else { throw context.missing("element \(currentIndex)", at: codingPath) }
            defer { currentIndex += 1 }
            return (values[currentIndex], path)
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, values[currentIndex] == .null else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let (value, path) = try next()
            return try decodeValue(type, from: value, codingPath: path, context: context)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let (value, path) = try next()
            return try TreeDecoder(value: value, codingPath: path, context: context).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let (value, path) = try next()
            return try TreeDecoder(value: value, codingPath: path, context: context).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder {
            let (value, path) = try next()
            return TreeDecoder(value: value, codingPath: path, context: context)
        }
    }

    struct SingleContainer: SingleValueDecodingContainer {
        let value: RestorableValue
        let codingPath: [any CodingKey]
        let context: Context

        func decodeNil() -> Bool { value == .null }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try decodeValue(type, from: value, codingPath: codingPath, context: context)
        }
    }
}
