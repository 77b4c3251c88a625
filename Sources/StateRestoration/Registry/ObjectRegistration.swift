/// A custom object registered for restoration, with the scope the registry indexes it under.
///
/// The scope is the object's ``StateRestoring/restorationParent``, read again by every full pass
/// (and checked by incremental passes), as UIKit reads it whenever it preserves. An object its
/// restoration class created keeps the parent it was restored under while its own
/// `restorationParent` is `nil`; once the app gives it one, that one wins.
final class ObjectRegistration {
    /// Where a registered object is scoped.
    enum Scope {
        /// At the root: no parent.
        case root
        /// Under this parent object.
        case parent(AnyObject)
        /// Under a restored parent that was released: not preserved until it has a parent again.
        case detached
    }

    /// The key of a scope in the registry's index.
    enum ScopeKey: Hashable {
        case root
        case parent(ObjectIdentifier)
        case detached
    }

    let object: any StateRestoring
    let identifier: String
    /// Whether the restoration pass created the object (through its restoration class) and
    /// registered it at the path it was restored at.
    let isCreatedDuringRestoration: Bool
    /// For an object created during restoration: the object restored at its parent path, held
    /// weakly (`nil` with a `nil` ID: it was restored at the root).
    private weak var restoredParent: AnyObject?
    private let restoredParentID: ObjectIdentifier?
    /// The parent the registry indexes the object under, as read when this value was made, held
    /// weakly.
    private(set) weak var parent: AnyObject?
    /// The key the registry indexes the object under, as read when this value was made. A
    /// registration never changes: the registry replaces it with ``rescoped()``, so that a copy of
    /// the registry keeps an index that agrees with its registrations.
    let key: ScopeKey
    /// The order of registration, kept when the object moves to another scope.
    var sequence = 0

    /// The identity of the indexed parent, `nil` at the root or when detached.
    var parentID: ObjectIdentifier? {
        if case .parent(let id) = key { return id }
        return nil
    }

    /// Registers `object` under its ``StateRestoring/restorationParent``, read now.
    convenience init(object: any StateRestoring, identifier: String) {
        self.init(object: object, identifier: identifier, restoredParent: nil, created: false)
    }

    /// Registers an object its restoration class created under the object restored at its parent
    /// path (`nil` at the root): it keeps that path while its own `restorationParent` is `nil`.
    convenience init(object: any StateRestoring, identifier: String, parent: AnyObject?) {
        self.init(object: object, identifier: identifier, restoredParent: parent, created: true)
    }

    private convenience init(object: any StateRestoring, identifier: String, restoredParent: AnyObject?, created: Bool)
    {
        self.init(
            object: object, identifier: identifier, restoredParent: restoredParent,
            restoredParentID: restoredParent.map(ObjectIdentifier.init), created: created, scope: nil)
    }

    private init(
        object: any StateRestoring, identifier: String, restoredParent: AnyObject?,
        restoredParentID: ObjectIdentifier?, created: Bool, scope: Scope?
    ) {
        self.object = object
        self.identifier = identifier
        self.isCreatedDuringRestoration = created
        self.restoredParent = restoredParent
        self.restoredParentID = restoredParentID
        switch scope ?? Self.scope(of: object, created: created, restoredParent, restoredParentID) {
        case .root:
            key = .root
        case .parent(let parent):
            key = .parent(ObjectIdentifier(parent))
            self.parent = parent
        case .detached:
            key = .detached
        }
    }

    /// The same registration, indexed under the scope the object has now.
    func rescoped() -> ObjectRegistration {
        let registration = ObjectRegistration(
            object: object, identifier: identifier, restoredParent: restoredParent,
            restoredParentID: restoredParentID, created: isCreatedDuringRestoration, scope: currentScope())
        registration.sequence = sequence
        return registration
    }

    /// The scope the object has now: its `restorationParent`, read now, or for an object created
    /// during restoration whose `restorationParent` is `nil`, the parent it was restored under.
    func currentScope() -> Scope {
        Self.scope(of: object, created: isCreatedDuringRestoration, restoredParent, restoredParentID)
    }

    private static func scope(
        of object: any StateRestoring, created: Bool, _ restoredParent: AnyObject?,
        _ restoredParentID: ObjectIdentifier?
    ) -> Scope {
        if let parent = object.restorationParent { return .parent(parent) }
        guard created, restoredParentID != nil else { return .root }
        if let restoredParent { return .parent(restoredParent) }
        return .detached
    }

    /// Whether the object is scoped under `parent` (`nil`: at the root) now, whatever the index says.
    func isScoped(under parent: AnyObject?) -> Bool {
        switch currentScope() {
        case .root: parent == nil
        case .parent(let current): current === parent
        case .detached: false
        }
    }

    /// Whether the index is out of date: the current scope is not the indexed one.
    var needsRescope: Bool {
        switch currentScope() {
        case .root: key != .root
        case .parent(let current): key != .parent(ObjectIdentifier(current)) || parent !== current
        case .detached: key != .detached
        }
    }
}
