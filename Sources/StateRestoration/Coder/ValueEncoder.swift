import Foundation
import StateJournal

/// Turns an `Encodable` value into a ``RestorableValue`` tree.
///
/// Keyed containers become dictionaries and unkeyed containers arrays; the types the coder stores
/// directly (``DirectlyStored``: `Bool`, the integer and floating-point types, `String`, `Data`,
/// `Date`, `URL`, `UUID`, and arrays and string-keyed dictionaries of them) skip `Codable`.
enum ValueEncoding {
    struct Context {
        let path: RestorationPath
        let key: String
    }

    static func encode<T: Encodable>(_ value: T, path: RestorationPath, key: String) throws -> RestorableValue {
        let context = Context(path: path, key: key)
        if let scalar = try scalarValue(value, context) { return scalar }
        let root = Node()
        try value.encode(to: TreeEncoder(node: root, codingPath: [], context: context))
        return root.resolved
    }

    /// The fast path: a value of a type the coder stores directly (``DirectlyStored``), without
    /// `Codable`; `nil` for any other value.
    static func scalarValue<T: Encodable>(_ value: T, _ context: Context) throws -> RestorableValue? {
        guard let direct = value as? any DirectlyStored else { return nil }
        return try direct.storedValue(context)
    }

    /// One value being built: a finished value, or a container still being filled.
    final class Node {
        enum Content {
            case empty
            case value(RestorableValue)
            case keyed(KeyedStorage)
            case unkeyed(UnkeyedStorage)
        }
        var content = Content.empty

        var resolved: RestorableValue {
            switch content {
            case .empty: .dictionary([:])
            case .value(let value): value
            case .keyed(let storage): .dictionary(storage.nodes.mapValues(\.resolved))
            case .unkeyed(let storage): .array(storage.nodes.map(\.resolved))
            }
        }

        func keyedStorage() -> KeyedStorage {
            if case .keyed(let storage) = content { return storage }
            let storage = KeyedStorage()
            content = .keyed(storage)
            return storage
        }

        func unkeyedStorage() -> UnkeyedStorage {
            if case .unkeyed(let storage) = content { return storage }
            let storage = UnkeyedStorage()
            content = .unkeyed(storage)
            return storage
        }

        func set<T: Encodable>(_ value: T, codingPath: [any CodingKey], context: Context) throws {
            if let scalar = try scalarValue(value, context) {
                content = .value(scalar)
            } else {
                try value.encode(to: TreeEncoder(node: self, codingPath: codingPath, context: context))
            }
        }
    }

    final class KeyedStorage {
        var nodes: [String: Node] = [:]

        func node(for key: String) -> Node {
            let node = Node()
            nodes[key] = node
            return node
        }
    }

    final class UnkeyedStorage {
        var nodes: [Node] = []

        func append() -> Node {
            let node = Node()
            nodes.append(node)
            return node
        }
    }

    struct TreeEncoder: Encoder {
        let node: Node
        let codingPath: [any CodingKey]
        let context: Context
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(
                KeyedContainer<Key>(storage: node.keyedStorage(), codingPath: codingPath, context: context))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            UnkeyedContainer(storage: node.unkeyedStorage(), codingPath: codingPath, context: context)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            SingleContainer(node: node, codingPath: codingPath, context: context)
        }
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let storage: KeyedStorage
        let codingPath: [any CodingKey]
        let context: Context

        mutating func encodeNil(forKey key: Key) throws { storage.node(for: key.stringValue).content = .value(.null) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try storage.node(for: key.stringValue).set(value, codingPath: codingPath + [key], context: context)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            encoder(storage.node(for: key.stringValue), key).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            encoder(storage.node(for: key.stringValue), key).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            TreeEncoder(node: storage.node(for: "super"), codingPath: codingPath, context: context)
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            encoder(storage.node(for: key.stringValue), key)
        }

        private func encoder(_ node: Node, _ key: Key) -> TreeEncoder {
            TreeEncoder(node: node, codingPath: codingPath + [key], context: context)
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let storage: UnkeyedStorage
        let codingPath: [any CodingKey]
        let context: Context
        var count: Int { storage.nodes.count }

        mutating func encodeNil() throws { storage.append().content = .value(.null) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            try storage.append().set(value, codingPath: codingPath, context: context)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            TreeEncoder(node: storage.append(), codingPath: codingPath, context: context).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            TreeEncoder(node: storage.append(), codingPath: codingPath, context: context).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            TreeEncoder(node: storage.append(), codingPath: codingPath, context: context)
        }
    }

    struct SingleContainer: SingleValueEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]
        let context: Context

        mutating func encodeNil() throws { node.content = .value(.null) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            try node.set(value, codingPath: codingPath, context: context)
        }
    }
}
