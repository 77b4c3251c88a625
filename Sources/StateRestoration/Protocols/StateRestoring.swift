import StateJournal

/// An object whose state is preserved and restored: UIKit's `UIStateRestoring`.
///
/// Controllers adopt it through ``RestorableController``. Any other class can adopt it too, and is
/// then preserved when it is registered with
/// ``RestorationManager/registerObject(forStateRestoration:restorationIdentifier:)`` under a
/// ``restorationParent`` that is itself preserved (or under no parent, at the root).
///
/// Restorable objects are classes: restoration compares the type of the object it obtains with the
/// type recorded when the state was saved, and accepts the same class or a subclass of it.
///
/// Every requirement but the two coding methods has a default, as in UIKit.
public protocol StateRestoring: AnyObject {
    /// The object whose restoration path scopes this one, or `nil` to scope it at the root.
    ///
    /// Two objects with different parents can share a restoration identifier. As in UIKit, the
    /// manager reads this property whenever it preserves: when the object is registered, on every
    /// full pass, before restoring, and in an incremental pass that touches the object (it, one of
    /// its descendants, or its old parent was invalidated). Changing it moves the object: the next
    /// such pass saves it under the new parent and removes its old path. An object its restoration
    /// class created stays at the path it was restored at while this is `nil`. Controllers get
    /// their path from the hierarchy and ignore it. Defaults to `nil`.
    var restorationParent: (any StateRestoring)? { get }

    /// The type that creates this object during restoration, or `nil` when the object must
    /// already exist and be registered at launch. Defaults to `nil`.
    var objectRestorationClass: (any ObjectRestoration.Type)? { get }

    /// Writes the smallest state that brings the object back to its current configuration.
    ///
    /// Encode values with the coder's `encode` methods and other restorable objects with
    /// the coder's `encode(_:forKey:)` overload for restorable objects, which writes a reference.
    ///
    /// - Parameter coder: This object's own coder; keys never collide with another object's.
    /// - Throws: Any error; the pass reports it and keeps the previously saved state of the object.
    func encodeRestorableState(with coder: RestorationCoder) throws

    /// Reads back what ``encodeRestorableState(with:)`` wrote.
    ///
    /// - Parameter coder: The coder holding this object's saved state; decoding a reference
    ///   returns the restored object.
    /// - Throws: Any error, typically a ``RestorationError`` from the coder; the restoration pass
    ///   reports it and goes on with the other objects.
    func decodeRestorableState(with coder: RestorationCoder) throws

    /// Called once every restored object has decoded its state, in no promised order.
    ///
    /// Use it for state that spans several objects. Defaults to doing nothing.
    func applicationFinishedRestoringState()
}

extension StateRestoring {
    /// No parent: the object is scoped at the root.
    public var restorationParent: (any StateRestoring)? { nil }

    /// No restoration class: the object must be registered at launch to be found.
    public var objectRestorationClass: (any ObjectRestoration.Type)? { nil }

    /// Does nothing.
    public func applicationFinishedRestoringState() {}
}
