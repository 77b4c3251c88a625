import Foundation
import Observation

/// How types are named on disk, and how a saved name is compared with a live object.
enum TypeNames {
    /// The name of a type as recorded in entries: the coding name registered for it with
    /// ``RestorationManager/register(codingName:for:)``, or else its fully qualified name,
    /// `Module.Outer.Type`.
    static func name(of type: Any.Type) -> String {
        codingNames[ObjectIdentifier(type)] ?? String(reflecting: type)
    }

    /// The stable names registered for classes, process-wide, as `@objc(Name)` names a class for
    /// the Objective-C runtime.
    static let codingNames = CodingNames()

    /// The table of registered coding names, in both directions.
    final class CodingNames: @unchecked Sendable {
        // @unchecked Sendable: `names` and `types` are only read and written with `lock` held.
        private let lock = NSLock()
        private var names: [ObjectIdentifier: String] = [:]
        private var types: [String: ObjectIdentifier] = [:]

        subscript(type: ObjectIdentifier) -> String? { lock.withLock { names[type] } }

        /// Records `name` for `type`; the type a name was already recorded for, if another one.
        func register(_ name: String, for type: ObjectIdentifier) -> ObjectIdentifier? {
            lock.withLock {
                if let holder = types[name], holder != type { return holder }
                if let old = names[type] { types[old] = nil }
                names[type] = name
                types[name] = type
                return nil
            }
        }
    }

    /// Whether `object` is of the type named `recorded` or of a subclass of it.
    ///
    /// Walks the object's class chain by reflection; nothing is looked up by name.
    static func object(_ object: AnyObject, isKindOf recorded: String) -> Bool {
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            if name(of: current.subjectType) == recorded { return true }
            mirror = current.superclassMirror
        }
        return false
    }
}

/// Remembers type names and class-chain answers per type, so that a pass over many objects of a
/// few types computes each name once.
final class TypeNameCache {
    private var names: [ObjectIdentifier: String] = [:]
    private var kinds: [ObjectIdentifier: [String: Bool]] = [:]
    private var observable: [ObjectIdentifier: Bool] = [:]

    /// Whether `object`'s type conforms to `Observable`: a conformance looked up once per type
    /// rather than once per object.
    func isObservable(_ object: AnyObject) -> Bool {
        let id = ObjectIdentifier(type(of: object))
        if let known = observable[id] { return known }
        let answer = object is any Observable
        observable[id] = answer
        return answer
    }

    func name(of type: Any.Type) -> String {
        let id = ObjectIdentifier(type)
        if let name = names[id] { return name }
        let name = TypeNames.name(of: type)
        names[id] = name
        return name
    }

    func name(of object: AnyObject) -> String { name(of: type(of: object)) }

    func object(_ object: AnyObject, isKindOf recorded: String) -> Bool {
        let id = ObjectIdentifier(type(of: object))
        if let known = kinds[id]?[recorded] { return known }
        let answer = TypeNames.object(object, isKindOf: recorded)
        kinds[id, default: [:]][recorded] = answer
        return answer
    }
}
