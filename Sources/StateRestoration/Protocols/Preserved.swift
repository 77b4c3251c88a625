import Foundation
import StateJournal

/// A property of a restorable object that preserves and restores itself: declared with a key, it
/// is encoded and decoded by the object's default coding methods, and changing it invalidates the
/// object's state.
///
/// ```swift
/// import StateRestoration
///
/// final class DraftController: RestorableController {
///     var restorationIdentifier: String? { "Draft" }
///     @Preserved("draft") var draft = ""
///     @Preserved("recipients") var recipients: [String] = []
/// }
/// ```
///
/// The default ``StateRestoring/encodeRestorableState(with:)`` and
/// ``StateRestoring/decodeRestorableState(with:)`` encode and decode every preserved property of the
/// object, its superclasses' included; an implementation of your own includes them by calling
/// ``StateRestoring/encodePreservedProperties(with:)`` and
/// ``StateRestoring/decodePreservedProperties(with:)``. Each value is stored under its key with the
/// coder's `encode(_:forKey:)`, so any `Codable` value works. A key missing from the saved state
/// (a property added in a later version) leaves the property at its initial value.
///
/// Setting the property calls ``StateRestoring/invalidateRestorableState()`` on its owner, so the
/// next incremental pass saves it; restoring a value does not.
///
/// The wrapper is only available on properties of classes that adopt ``StateRestoring``. The
/// properties are found by reflection (`Mirror`) once per class, so a class that supplies its own
/// mirror (`CustomReflectable`) must list the wrappers' storage (`_name`) in it. Two preserved
/// properties of one object cannot share a key. It is plain Swift: no macro, no build-time
/// dependency.
@propertyWrapper
public final class Preserved<Value: Codable> {
    /// The key the value is stored under in its owner's coder.
    public let key: String
    var value: Value

    /// Creates a preserved property.
    ///
    /// - Parameters:
    ///   - wrappedValue: The initial value, kept when the saved state has no value for `key`.
    ///   - key: The key the value is stored under, unique among the owner's preserved properties
    ///     and the keys its own coding methods use.
    public init(wrappedValue: Value, _ key: String) {
        self.key = key
        self.value = wrappedValue
    }

    /// Unavailable: a preserved property belongs to a class that adopts ``StateRestoring``, which
    /// reaches it through `subscript(_enclosingInstance:wrapped:storage:)`.
    @available(*, unavailable, message: "@Preserved is only available on properties of classes adopting StateRestoring")
    public var wrappedValue: Value {
        get { fatalError("@Preserved is only available on properties of classes adopting StateRestoring") }
        set { fatalError("@Preserved is only available on properties of classes adopting StateRestoring") }
    }

    /// Reads and writes the value of the property in its owner; writing invalidates the owner's
    /// state.
    ///
    /// - Parameters:
    ///   - owner: The object that declares the property.
    ///   - wrappedKeyPath: The property.
    ///   - storageKeyPath: The wrapper's storage.
    /// - Returns: The property's current value.
    public static subscript<Owner: StateRestoring>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Preserved<Value>>
    ) -> Value {
        get { owner[keyPath: storageKeyPath].value }
        set {
            owner[keyPath: storageKeyPath].value = newValue
            owner.invalidateRestorableState()
        }
    }
}

@available(*, unavailable, message: "A preserved property belongs to its object, which is used from one thread.")
extension Preserved: Sendable {}

extension StateRestoring {
    /// Encodes the object's ``Preserved`` properties, its superclasses' included: what the default
    /// ``encodeRestorableState(with:)`` does, for an implementation of your own to call.
    ///
    /// - Parameter coder: This object's own coder.
    /// - Throws: ``RestorationError`` with code ``RestorationError/Code/duplicateKey`` when two
    ///   preserved properties share a key, or any error a value's encoding throws.
    /// - Complexity: O(*n*) in the object's stored properties; nothing for a class without
    ///   preserved properties after its first call.
    public func encodePreservedProperties(with coder: RestorationCoder) throws {
        for property in try PreservedProperties.of(self, at: coder.restorationPath) {
            try property.encode(into: coder)
        }
    }

    /// Decodes the object's ``Preserved`` properties, its superclasses' included: what the default
    /// ``decodeRestorableState(with:)`` does, for an implementation of your own to call.
    ///
    /// A property whose key the saved state lacks keeps its value. Restoring a value does not
    /// invalidate the object.
    ///
    /// - Parameter coder: The coder holding this object's saved state.
    /// - Throws: ``RestorationError`` naming the path and key when a saved value cannot be read as its
    ///   property's type, or with code ``RestorationError/Code/duplicateKey`` when two preserved
    ///   properties share a key.
    public func decodePreservedProperties(with coder: RestorationCoder) throws {
        for property in try PreservedProperties.of(self, at: coder.restorationPath) {
            try property.decode(from: coder)
        }
    }
}

/// A ``Preserved`` wrapper without its value type, as reflection finds it.
protocol PreservedProperty: AnyObject {
    var key: String { get }
    func encode(into coder: RestorationCoder) throws
    func decode(from coder: RestorationCoder) throws
}

extension Preserved: PreservedProperty {
    func encode(into coder: RestorationCoder) throws { coder.encode(value, forKey: key) }

    func decode(from coder: RestorationCoder) throws {
        guard coder.containsValue(forKey: key) else { return }
        value = try coder.decode(Value.self, forKey: key)
    }
}

/// Finds the ``Preserved`` properties of objects, reflecting each class once to learn whether it has
/// any and whether their keys are unique.
enum PreservedProperties {
    private struct Layout {
        var isEmpty: Bool
        /// A key two properties share, if any.
        var duplicateKey: String?
    }

    /// Layouts by class.
    private final class Cache: @unchecked Sendable {
        // @unchecked Sendable: `layouts` is only read and written with `lock` held.
        private let lock = NSLock()
        private var layouts: [ObjectIdentifier: Layout] = [:]

        subscript(type: ObjectIdentifier) -> Layout? {
            get { lock.withLock { layouts[type] } }
            set { lock.withLock { layouts[type] = newValue } }
        }
    }

    private static let cache = Cache()

    /// The preserved properties of `object`, subclass first.
    static func of(_ object: AnyObject, at path: RestorationPath) throws -> [any PreservedProperty] {
        let type = ObjectIdentifier(Swift.type(of: object))
        let known = cache[type]
        if known?.isEmpty == true { return [] }
        var properties: [any PreservedProperty] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                if let property = child.value as? any PreservedProperty { properties.append(property) }
            }
            mirror = current.superclassMirror
        }
        let layout = known ?? makeLayout(properties)
        if known == nil { cache[type] = layout }
        if let key = layout.duplicateKey {
            throw RestorationError(
                .duplicateKey,
                "Two @Preserved properties of \(Swift.type(of: object)) use the key \"\(key)\"; give each its own key.",
                path: path, key: key)
        }
        return properties
    }

    private static func makeLayout(_ properties: [any PreservedProperty]) -> Layout {
        var keys: Set<String> = []
        let duplicate = properties.first { !keys.insert($0.key).inserted }
        return Layout(isEmpty: properties.isEmpty, duplicateKey: duplicate?.key)
    }
}
