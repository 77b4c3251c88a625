import Foundation
import StateJournal

extension RestorationCoder {
    /// Decodes an integer, or throws: the typed form of `decodeInteger(forKey:)`.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Throws: ``RestorationError`` naming the path and key: ``RestorationError/Code/keyNotFound``,
    ///   ``RestorationError/Code/typeMismatch`` or ``RestorationError/Code/valueOutOfRange``.
    public func decodeInt(forKey key: String) throws -> Int {
        try decode(Int.self, forKey: key)
    }

    /// Decodes a string.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Throws: ``RestorationError`` naming the path and key: ``RestorationError/Code/keyNotFound``
    ///   or ``RestorationError/Code/typeMismatch``.
    public func decodeString(forKey key: String) throws -> String {
        try decode(String.self, forKey: key)
    }

    /// Decodes bytes.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The bytes.
    /// - Throws: ``RestorationError`` naming the path and key: ``RestorationError/Code/keyNotFound``
    ///   or ``RestorationError/Code/typeMismatch``.
    public func decodeData(forKey key: String) throws -> Data {
        try decode(Data.self, forKey: key)
    }

    /// Decodes a date, exactly as it was encoded.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The date.
    /// - Throws: ``RestorationError`` naming the path and key: ``RestorationError/Code/keyNotFound``
    ///   or ``RestorationError/Code/typeMismatch``.
    public func decodeDate(forKey key: String) throws -> Date {
        try decode(Date.self, forKey: key)
    }

    /// Decodes a URL, which is stored as its absolute string.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The URL; a relative URL comes back resolved against the base it had.
    /// - Throws: ``RestorationError`` naming the path and key: ``RestorationError/Code/keyNotFound``,
    ///   or ``RestorationError/Code/typeMismatch`` when the value is not a string holding a URL.
    public func decodeURL(forKey key: String) throws -> URL {
        try decode(URL.self, forKey: key)
    }

    /// Decodes a UUID, which is stored as its string form (`uuidString`).
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The UUID.
    /// - Throws: ``RestorationError`` naming the path and key: ``RestorationError/Code/keyNotFound``,
    ///   or ``RestorationError/Code/typeMismatch`` when the value is not a string holding a UUID.
    public func decodeUUID(forKey key: String) throws -> UUID {
        try decode(UUID.self, forKey: key)
    }

    /// Decodes the value tree stored under a key, whatever its kind.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Throws: ``RestorationError/Code/keyNotFound`` naming the path and key.
    public func decodeValue(forKey key: String) throws -> RestorableValue {
        try value(forKey: key)
    }

    /// Decodes any `Decodable` value written by ``encode(_:forKey:)-(T,_)`` or a matching fast path.
    ///
    /// `Bool`, the integer and floating-point types, `String`, `Data`, `Date`, `URL`, `UUID`, and
    /// arrays and string-keyed dictionaries of them are read directly from the stored value, without
    /// `Codable`, at any depth.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - key: The key it was encoded under.
    /// - Throws: ``RestorationError`` naming the path and key: ``RestorationError/Code/keyNotFound``,
    ///   ``RestorationError/Code/typeMismatch`` or ``RestorationError/Code/valueOutOfRange``; or the
    ///   type's own decoding error.
    public func decode<T: Decodable>(_ type: T.Type, forKey key: String) throws -> T {
        try ValueDecoding.decode(type, from: try value(forKey: key), path: restorationPath, key: key)
    }

    /// Decodes a value that may be absent: `nil` when the coder holds no value for the key, or null.
    ///
    /// This is the counterpart of `NSCoder` returning `nil` (or `0`, `false`) for a missing key,
    /// without confusing a missing value with a saved zero. It is the optional form of every fast
    /// path: `decodeIfPresent(Int.self, forKey:)`, `decodeIfPresent([URL].self, forKey:)` and so on
    /// read the stored value directly, as ``decode(_:forKey:)`` does.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - key: The key it was encoded under.
    /// - Returns: The value, or `nil` when the key is missing or holds null.
    /// - Throws: ``RestorationError`` naming the path and key when a value is present but cannot be
    ///   read as `type`: ``RestorationError/Code/typeMismatch`` or
    ///   ``RestorationError/Code/valueOutOfRange``; or the type's own decoding error.
    public func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: String) throws -> T? {
        guard let value = values[key] else { return nil }
        if case .null = value { return nil }
        return try ValueDecoding.decode(type, from: value, path: restorationPath, key: key)
    }

    /// Decodes a value, or returns `defaultValue` when the coder holds no value for the key (or null).
    ///
    /// Use it for keys added in a later version of the app, whose older saved states lack them.
    ///
    /// - Parameters:
    ///   - type: The type to decode; inferred from `defaultValue` when omitted.
    ///   - key: The key it was encoded under.
    ///   - defaultValue: The value to use when the key is missing or holds null; evaluated only then.
    /// - Returns: The decoded value, or `defaultValue`.
    /// - Throws: ``RestorationError`` naming the path and key when a value is present but cannot be
    ///   read as `type`: ``RestorationError/Code/typeMismatch`` or
    ///   ``RestorationError/Code/valueOutOfRange``; or the type's own decoding error.
    public func decode<T: Decodable>(
        _ type: T.Type = T.self, forKey key: String, default defaultValue: @autoclosure () -> T
    ) throws -> T {
        try decodeIfPresent(type, forKey: key) ?? defaultValue()
    }

    /// Decodes a list of references, keeping the restored objects in order and leaving out those
    /// that were not restored; an empty list when the key is missing.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Throws: ``RestorationError`` naming the path and key: ``RestorationError/Code/typeMismatch``
    ///   when the value is not a list of references.
    public func decodeObjects(forKey key: String) throws -> [any StateRestoring] {
        guard let value = values[key] else { return [] }
        guard case .array(let items) = value else { throw mismatch("array of references", value, key) }
        return try items.compactMap { try object(from: $0, key) }
    }

    private func object(from value: RestorableValue, _ key: String) throws -> (any StateRestoring)? {
        switch value {
        case .null: return nil
        case .reference(let path): return resolver?.restoredObject(at: path)
        default: throw mismatch("reference", value, key)
        }
    }
}
