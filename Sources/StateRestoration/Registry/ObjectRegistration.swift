/// A custom object registered for restoration, with the scope it was registered under.
final class ObjectRegistration {
    let object: any StateRestoring
    let identifier: String
    /// The parent read at registration time, held weakly: a parent that goes away leaves the
    /// object unscoped, and it is not preserved until registered again.
    weak var parent: AnyObject?
    let parentID: ObjectIdentifier?

    /// Registers `object` under its ``StateRestoring/restorationParent``, read now.
    convenience init(object: any StateRestoring, identifier: String) {
        self.init(object: object, identifier: identifier, parent: object.restorationParent)
    }

    /// Registers `object` under a given parent: the object restored at the parent path, for an
    /// object its restoration class created, whatever its own `restorationParent` says.
    init(object: any StateRestoring, identifier: String, parent: AnyObject?) {
        self.object = object
        self.identifier = identifier
        self.parent = parent
        self.parentID = parent.map(ObjectIdentifier.init)
    }
}
