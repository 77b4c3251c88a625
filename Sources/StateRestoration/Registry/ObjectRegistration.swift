/// A custom object registered for restoration, with the scope it was registered under.
final class ObjectRegistration {
    let object: any StateRestoring
    let identifier: String
    /// The parent read at registration time, held weakly: a parent that goes away leaves the
    /// object unscoped, and it is not preserved until registered again.
    weak var parent: AnyObject?
    let parentID: ObjectIdentifier?

    init(object: any StateRestoring, identifier: String) {
        self.object = object
        self.identifier = identifier
        let parent = object.restorationParent
        self.parent = parent
        self.parentID = parent.map(ObjectIdentifier.init)
    }
}
