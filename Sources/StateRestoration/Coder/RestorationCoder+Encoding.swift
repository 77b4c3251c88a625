import Foundation
import StateJournal

extension RestorationCoder {
    /// Encodes a Boolean.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ value: Bool, forKey key: String) throws { try store(.bool(value), forKey: key) }

    /// Encodes an integer.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ value: Int, forKey key: String) throws { try store(.int(Int64(value)), forKey: key) }

    /// Encodes a floating-point number.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ value: Double, forKey key: String) throws { try store(.double(value), forKey: key) }

    /// Encodes a string.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ value: String, forKey key: String) throws { try store(.string(value), forKey: key) }

    /// Encodes bytes.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ value: Data, forKey key: String) throws { try store(.data(value), forKey: key) }

    /// Encodes a date, exactly.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ value: Date, forKey key: String) throws { try store(.date(value), forKey: key) }

    /// Encodes a URL as its absolute string, so that tools show it as text.
    ///
    /// - Parameters:
    ///   - value: The value; a relative URL is stored resolved against its base.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ value: URL, forKey key: String) throws {
        try store(.string(value.absoluteString), forKey: key)
    }

    /// Encodes a UUID as its string form (`uuidString`), as its `Codable` conformance does.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ value: UUID, forKey key: String) throws { try store(.string(value.uuidString), forKey: key) }

    /// Encodes an array of integers.
    ///
    /// - Parameters:
    ///   - values: The values.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ values: [Int], forKey key: String) throws {
        try store(.array(values.map { .int(Int64($0)) }), forKey: key)
    }

    /// Encodes an array of strings.
    ///
    /// - Parameters:
    ///   - values: The values.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ values: [String], forKey key: String) throws {
        try store(.array(values.map(RestorableValue.string)), forKey: key)
    }

    /// Encodes an array of floating-point numbers.
    ///
    /// - Parameters:
    ///   - values: The values.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ values: [Double], forKey key: String) throws {
        try store(.array(values.map(RestorableValue.double)), forKey: key)
    }

    /// Encodes a value tree as it is.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ value: RestorableValue, forKey key: String) throws { try store(value, forKey: key) }

    /// Encodes any `Encodable` value into the self-describing form: keyed containers become
    /// dictionaries, unkeyed containers arrays.
    ///
    /// `Bool`, the integer and floating-point types, `String`, `Data`, `Date`, `URL` (as its
    /// absolute string), `UUID` (as its string form), and arrays and string-keyed dictionaries of
    /// them are stored directly, without `Codable`, at any depth.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder,
    ///   ``RestorationError/Code/valueOutOfRange`` for an unsigned integer above `Int64.max`, or the
    ///   value's own encoding error.
    public func encode<T: Encodable>(_ value: T, forKey key: String) throws {
        try store(try ValueEncoding.encode(value, path: restorationPath, key: key), forKey: key)
    }

    /// Encodes a reference to another restorable object: its restoration path, not its state.
    ///
    /// The object is added to the preservation pass: a controller not otherwise in the walked
    /// hierarchy is preserved under this object's path (a custom container encoding its children),
    /// a custom object must be registered. An object that cannot be preserved (a controller without
    /// a restoration identifier, an unregistered object) and `nil` are written as null.
    ///
    /// - Parameters:
    ///   - object: The object, or `nil`.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ object: (any StateRestoring)?, forKey key: String) throws {
        try store(try reference(to: object), forKey: key)
    }

    /// Encodes an ordered list of references to restorable objects, such as a navigation stack.
    ///
    /// - Parameters:
    ///   - objects: The objects, in order.
    ///   - key: The key, unique within this object.
    /// - Throws: ``RestorationError/Code/reservedKey`` for an ``ArchiveKey`` in the application coder.
    public func encode(_ objects: [any StateRestoring], forKey key: String) throws {
        try store(.array(try objects.map { try reference(to: $0) }), forKey: key)
    }

    private func reference(to object: (any StateRestoring)?) throws -> RestorableValue {
        guard let object, let resolver, let path = try resolver.referencePath(for: object, encodedBy: self) else {
            return .null
        }
        return .reference(path)
    }
}
