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
/// Every requirement has a default, as in UIKit: an object that only anchors a restoration path
/// (a container whose children hold the state) declares none of them, and the default coding
/// methods encode and decode the object's ``Preserved`` properties.
///
/// ## Subclasses
///
/// The class that adopts the protocol is the one whose declarations count: Swift binds each
/// requirement once, for the adopting class, to the adopting class's own declaration or else to the
/// default. A subclass reaches a requirement only by overriding a declaration of the adopting class.
/// So in a class meant to be subclassed, declare every requirement a subclass may customize (the
/// coding methods, ``restorationParent``, ``objectRestorationClass``,
/// ``applicationFinishedRestoringState()``), even when it does what the default does; subclasses
/// then `override` it and call `super`, and the compiler checks the `override`. A method a subclass
/// declares without a declaration in the adopting class to override is never called by the passes.
/// ``RestorableController/restorationIdentifier`` has no default for this reason: every adopting
/// class declares it, so a subclass can only override it.
///
/// ```swift
/// import StateRestoration
///
/// class Pane: RestorableController {
///     var restorationIdentifier: String? { nil }
///     @Preserved("title") var title = ""
///
///     func encodeRestorableState(with coder: RestorationCoder) throws {
///         try encodePreservedProperties(with: coder)
///     }
///
///     func decodeRestorableState(with coder: RestorationCoder) throws {
///         try decodePreservedProperties(with: coder)
///     }
/// }
///
/// final class EditorPane: Pane {
///     override var restorationIdentifier: String? { "Editor" }
///     var cursor = 0
///
///     override func encodeRestorableState(with coder: RestorationCoder) throws {
///         try super.encodeRestorableState(with: coder)
///         coder.encode(cursor, forKey: "cursor")
///     }
///
///     override func decodeRestorableState(with coder: RestorationCoder) throws {
///         try super.decodeRestorableState(with: coder)
///         cursor = try coder.decode(forKey: "cursor", default: 0)
///     }
/// }
/// ```
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
    /// Defaults to encoding the object's ``Preserved`` properties, and nothing else; an
    /// implementation of your own includes them by calling
    /// ``StateRestoring/encodePreservedProperties(with:)``.
    ///
    /// - Parameter coder: This object's own coder; keys never collide with another object's.
    /// - Throws: Any error; the pass reports it and keeps the previously saved state of the object.
    func encodeRestorableState(with coder: RestorationCoder) throws

    /// Reads back what ``encodeRestorableState(with:)`` wrote.
    ///
    /// Defaults to decoding the object's ``Preserved`` properties, and nothing else; an
    /// implementation of your own includes them by calling
    /// ``StateRestoring/decodePreservedProperties(with:)``.
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

    /// Encodes the object's ``Preserved`` properties, and nothing else.
    ///
    /// - Parameter coder: This object's own coder.
    /// - Throws: ``RestorationError`` when two preserved properties share a key, or a value fails to
    ///   encode.
    public func encodeRestorableState(with coder: RestorationCoder) throws {
        try encodePreservedProperties(with: coder)
    }

    /// Decodes the object's ``Preserved`` properties, and nothing else.
    ///
    /// - Parameter coder: The coder holding this object's saved state.
    /// - Throws: ``RestorationError`` naming the path and key when a saved value cannot be read as
    ///   its property's type.
    public func decodeRestorableState(with coder: RestorationCoder) throws {
        try decodePreservedProperties(with: coder)
    }

    /// Does nothing.
    public func applicationFinishedRestoringState() {}
}
