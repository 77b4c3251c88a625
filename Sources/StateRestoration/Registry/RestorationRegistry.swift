import Foundation
import StateJournal

/// What the app registered: custom objects by scope, restoration classes and migrations by name.
///
/// Restoration classes are the only types restoration ever calls by a name read from disk, so an
/// entry naming an unregistered type is skipped, never instantiated.
struct RestorationRegistry {
    private(set) var registrations: [ObjectIdentifier: ObjectRegistration] = [:]
    /// Registered objects by the scope they were last read under, in registration order.
    private(set) var byParent: [ObjectRegistration.ScopeKey: [ObjectIdentifier]] = [:]
    var controllerClasses: [String: any ControllerRestoration.Type] = [:]
    var objectClasses: [String: any ObjectRestoration.Type] = [:]
    /// The factories that create a controller by its restoration identifier (a storyboard's role).
    var controllerFactories: [String: () -> any RestorableController] = [:]
    var migrations: [String: [StateMigration]] = [:]
    /// The `NSCoding` classes `decodeObject(forKey:)` may make from saved state, by type name.
    var codingClasses: [String: any (NSObject & NSCoding).Type] = [:]
    private var nextSequence = 0

    /// Registers `object` under its `restorationParent`, replacing an earlier registration of it.
    @discardableResult
    mutating func register(_ object: any StateRestoring, identifier: String) -> ObjectRegistration {
        register(ObjectRegistration(object: object, identifier: identifier))
    }

    /// Registers an object its restoration class created under `parent`, the object restored at its
    /// parent path, which scopes it while its own `restorationParent` is `nil`.
    @discardableResult
    mutating func register(_ object: any StateRestoring, identifier: String, parent: AnyObject?) -> ObjectRegistration {
        register(ObjectRegistration(object: object, identifier: identifier, parent: parent))
    }

    private mutating func register(_ registration: ObjectRegistration) -> ObjectRegistration {
        let object = registration.object
        unregister(object)
        registration.sequence = nextSequence
        nextSequence += 1
        let id = ObjectIdentifier(object)
        registrations[id] = registration
        byParent[registration.key, default: []].append(id)
        return registration
    }

    @discardableResult
    mutating func unregister(_ object: any StateRestoring) -> ObjectRegistration? {
        let id = ObjectIdentifier(object)
        guard let registration = registrations.removeValue(forKey: id) else { return nil }
        removeFromIndex(id, key: registration.key)
        return registration
    }

    private mutating func removeFromIndex(_ id: ObjectIdentifier, key: ObjectRegistration.ScopeKey) {
        byParent[key]?.removeAll { $0 == id }
        if byParent[key]?.isEmpty == true { byParent[key] = nil }
    }

    /// Reads every registered object's `restorationParent` again and moves the ones whose scope
    /// changed to the end of their new scope, in registration order.
    ///
    /// - Complexity: O(*r*) in the registrations; the index changes only when a scope changed.
    mutating func rescopeAll() {
        let stale = registrations.values.filter(\.needsRescope).sorted { $0.sequence < $1.sequence }
        for old in stale {
            let id = ObjectIdentifier(old.object)
            removeFromIndex(id, key: old.key)
            let registration = old.rescoped()
            registrations[id] = registration
            byParent[registration.key, default: []].append(id)
        }
    }

    func registration(of object: AnyObject) -> ObjectRegistration? {
        guard let registration = registrations[ObjectIdentifier(object)], registration.object === object else {
            return nil
        }
        return registration
    }

    /// The objects registered under `parent` (or at the root when `nil`), in registration order, as
    /// last read (see ``rescopeAll()``).
    func registrations(scopedUnder parent: AnyObject?) -> [ObjectRegistration] {
        let key: ObjectRegistration.ScopeKey = parent.map { .parent(ObjectIdentifier($0)) } ?? .root
        guard let ids = byParent[key] else { return [] }
        return ids.compactMap { id in
            guard let registration = registrations[id] else { return nil }
            if let parent, registration.parent !== parent { return nil }
            return registration
        }
    }

    /// The registered object whose scope resolves to `path`, given how to find the parent object.
    func registeredObject(at path: RestorationPath, parent: AnyObject?) -> (any StateRestoring)? {
        guard let last = path.components.last else { return nil }
        return registrations(scopedUnder: parent).first { $0.identifier == last }?.object
    }
}
