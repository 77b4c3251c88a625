import Foundation
import StateJournal

extension RestorationCoder {
    /// Encodes a string.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public func encode(_ value: String, forKey key: String) { store(.string(value), forKey: key) }

    /// Encodes bytes.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public func encode(_ value: Data, forKey key: String) { store(.data(value), forKey: key) }

    /// Encodes a date, exactly.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public func encode(_ value: Date, forKey key: String) { store(.date(value), forKey: key) }

    /// Encodes a URL as its absolute string, so that tools show it as text.
    ///
    /// - Parameters:
    ///   - value: The value; a relative URL is stored resolved against its base.
    ///   - key: The key, unique within this object.
    public func encode(_ value: URL, forKey key: String) {
        store(.string(value.absoluteString), forKey: key)
    }

    /// Encodes a UUID as its string form (`uuidString`), as its `Codable` conformance does.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public func encode(_ value: UUID, forKey key: String) { store(.string(value.uuidString), forKey: key) }

    /// Encodes an array of integers.
    ///
    /// - Parameters:
    ///   - values: The values.
    ///   - key: The key, unique within this object.
    public func encode(_ values: [Int], forKey key: String) {
        store(.array(values.map { .int(Int64($0)) }), forKey: key)
    }

    /// Encodes an array of strings.
    ///
    /// - Parameters:
    ///   - values: The values.
    ///   - key: The key, unique within this object.
    public func encode(_ values: [String], forKey key: String) {
        store(.array(values.map(RestorableValue.string)), forKey: key)
    }

    /// Encodes an array of floating-point numbers.
    ///
    /// - Parameters:
    ///   - values: The values.
    ///   - key: The key, unique within this object.
    public func encode(_ values: [Double], forKey key: String) {
        store(.array(values.map(RestorableValue.double)), forKey: key)
    }

    /// Encodes a value tree as it is.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public func encode(_ value: RestorableValue, forKey key: String) { store(value, forKey: key) }

    /// Encodes any `Encodable` value into the self-describing form: keyed containers become
    /// dictionaries, unkeyed containers arrays.
    ///
    /// `Bool`, the integer and floating-point types, `String`, `Data`, `Date`, `URL` (as its
    /// absolute string), `UUID` (as its string form), and arrays and string-keyed dictionaries of
    /// them are stored directly, without `Codable`, at any depth.
    ///
    /// As with `NSCoder`, nothing is thrown: a value that cannot be encoded (an unsigned integer
    /// above `Int64.max`, the value's own encoding error) is not written, and is recorded as a
    /// ``CoderDiagnostic`` in the pass's report.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public func encode<T: Encodable>(_ value: T, forKey key: String) {
        do {
            store(try ValueEncoding.encode(value, path: restorationPath, key: key), forKey: key)
        } catch let error as RestorationError where error.code == .valueOutOfRange {
            note(.valueOutOfRange, key, error.message)
        } catch {
            note(.unsupportedValue, key, "\(T.self) could not be encoded: \(error)")
        }
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
    public func encode(_ object: (any StateRestoring)?, forKey key: String) {
        store(reference(to: object, key), forKey: key)
    }

    /// Encodes an ordered list of references to restorable objects, such as a navigation stack.
    ///
    /// - Parameters:
    ///   - objects: The objects, in order.
    ///   - key: The key, unique within this object.
    public func encode(_ objects: [any StateRestoring], forKey key: String) {
        store(.array(objects.map { reference(to: $0, key) }), forKey: key)
    }

    func reference(to object: (any StateRestoring)?, _ key: String) -> RestorableValue {
        guard let object, let resolver else { return .null }
        do {
            guard let path = try resolver.referencePath(for: object, encodedBy: self) else { return .null }
            return .reference(path)
        } catch {
            note(.unsupportedValue, key, "the reference could not be recorded: \(error)")
            return .null
        }
    }
}
