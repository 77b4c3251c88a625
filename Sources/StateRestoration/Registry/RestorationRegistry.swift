import StateJournal

/// What the app registered: custom objects by scope, restoration classes and migrations by name.
///
/// Restoration classes are the only types restoration ever calls by a name read from disk, so an
/// entry naming an unregistered type is skipped, never instantiated.
struct RestorationRegistry {
    private(set) var registrations: [ObjectIdentifier: ObjectRegistration] = [:]
    /// Registered objects by the identity of their parent (`nil`: scoped at the root), in
    /// registration order.
    private(set) var byParent: [ObjectIdentifier?: [ObjectIdentifier]] = [:]
    var controllerClasses: [String: any ControllerRestoration.Type] = [:]
    var objectClasses: [String: any ObjectRestoration.Type] = [:]
    var migrations: [String: [StateMigration]] = [:]

    /// Registers `object`, replacing an earlier registration of it.
    @discardableResult
    mutating func register(_ object: any StateRestoring, identifier: String) -> ObjectRegistration {
        register(ObjectRegistration(object: object, identifier: identifier))
    }

    /// Registers `object` under `parent`, whatever its `restorationParent` says.
    @discardableResult
    mutating func register(_ object: any StateRestoring, identifier: String, parent: AnyObject?) -> ObjectRegistration {
        register(ObjectRegistration(object: object, identifier: identifier, parent: parent))
    }

    private mutating func register(_ registration: ObjectRegistration) -> ObjectRegistration {
        let object = registration.object
        unregister(object)
        let id = ObjectIdentifier(object)
        registrations[id] = registration
        byParent[registration.parentID, default: []].append(id)
        return registration
    }

    @discardableResult
    mutating func unregister(_ object: any StateRestoring) -> ObjectRegistration? {
        let id = ObjectIdentifier(object)
        guard let registration = registrations.removeValue(forKey: id) else { return nil }
        byParent[registration.parentID]?.removeAll { $0 == id }
        if byParent[registration.parentID]?.isEmpty == true { byParent[registration.parentID] = nil }
        return registration
    }

    func registration(of object: AnyObject) -> ObjectRegistration? {
        guard let registration = registrations[ObjectIdentifier(object)], registration.object === object else {
            return nil
        }
        return registration
    }

    /// The objects registered under `parent` (or at the root when `nil`), in registration order.
    func registrations(scopedUnder parent: AnyObject?) -> [ObjectRegistration] {
        guard let ids = byParent[parent.map(ObjectIdentifier.init)] else { return [] }
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
