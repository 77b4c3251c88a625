/// UIKit's `UIStateRestoring`: a custom object whose state is preserved and restored, with UIKit's
/// `NSCoder` methods and UIKit's types for ``restorationParent`` and ``objectRestorationClass``.
///
/// It refines ``StateRestoring``: the package's requirements are bridged to these, so an object
/// that declares `func encodeRestorableState(with coder: NSCoder)`,
/// `var restorationParent: UIStateRestoring?` and
/// `var objectRestorationClass: UIObjectRestoration.Type?` is preserved exactly as a
/// ``StateRestoring`` object that declares the package's forms. Every requirement is optional, as
/// in UIKit; ``Preserved`` properties are encoded and decoded before the `NSCoder` methods run.
/// Register the object with ``UIApplication/registerObject(forStateRestoration:restorationIdentifier:)``
/// or the manager's ``RestorationManager/registerObject(forStateRestoration:restorationIdentifier:)``.
///
/// View controllers (``UIViewController``) adopt it too, so a custom object's `restorationParent`
/// can be a controller, as in UIKit.
///
/// Linux differs: UIKit's protocol is `@MainActor` and refines `NSObjectProtocol`; this one is not
/// isolated (adopt it with `@MainActor UIStateRestoring` for a main-actor class) and any class can
/// adopt it, an `NSObject` subclass or not. `@objc(Name)`, which UIKit code gives a private class so
/// that its archived name is stable, has no Linux meaning: call
/// ``RestorationManager/register(codingName:for:)`` instead.
public protocol UIStateRestoring: StateRestoring {
    /// The object whose restoration path scopes this one, or `nil` for the root; UIKit's
    /// `restorationParent`. Defaults to `nil`. See ``StateRestoring/restorationParent``.
    var restorationParent: (any UIStateRestoring)? { get }

    /// The type that creates this object at restoration, or `nil` when the object is registered at
    /// launch; UIKit's `objectRestorationClass`. Defaults to `nil`. Register the type with
    /// ``RestorationManager/register(objectRestorationClass:)``.
    var objectRestorationClass: (any UIObjectRestoration.Type)? { get }

    /// Writes the object's state; UIKit's method. Defaults to writing nothing.
    ///
    /// - Parameter coder: The object's coder, a ``RestorationCoder``, with `NSCoder`'s semantics.
    func encodeRestorableState(with coder: NSCoder)

    /// Reads back what ``encodeRestorableState(with:)-(NSCoder)`` wrote; UIKit's method. Defaults to
    /// reading nothing.
    ///
    /// - Parameter coder: The object's saved state, a ``RestorationCoder``.
    func decodeRestorableState(with coder: NSCoder)
}

extension UIStateRestoring {
    /// No parent: the object is scoped at the root.
    public var restorationParent: (any UIStateRestoring)? { nil }

    /// No restoration class: the object must be registered at launch to be found.
    public var objectRestorationClass: (any UIObjectRestoration.Type)? { nil }

    /// Writes nothing.
    ///
    /// - Parameter coder: The object's coder.
    public func encodeRestorableState(with coder: NSCoder) {}

    /// Reads nothing.
    ///
    /// - Parameter coder: The object's saved state.
    public func decodeRestorableState(with coder: NSCoder) {}
}

extension StateRestoring where Self: UIStateRestoring {
    /// The ``StateRestoring`` requirement: the object's UIKit-typed `restorationParent`.
    public var restorationParent: (any StateRestoring)? {
        let parent: (any UIStateRestoring)? = restorationParent
        return parent
    }

    /// The ``StateRestoring`` requirement: the object's UIKit-typed `objectRestorationClass`.
    public var objectRestorationClass: (any ObjectRestoration.Type)? {
        let type: (any UIObjectRestoration.Type)? = objectRestorationClass
        return type
    }

    /// The ``StateRestoring`` requirement: encodes the ``Preserved`` properties, then calls the
    /// object's `encodeRestorableState(with: NSCoder)`.
    ///
    /// - Parameter coder: The object's coder.
    /// - Throws: What encoding a ``Preserved`` property throws.
    public func encodeRestorableState(with coder: RestorationCoder) throws {
        try encodePreservedProperties(with: coder)
        encodeRestorableState(with: coder as NSCoder)
    }

    /// The ``StateRestoring`` requirement: decodes the ``Preserved`` properties, then calls the
    /// object's `decodeRestorableState(with: NSCoder)`.
    ///
    /// - Parameter coder: The object's saved state.
    /// - Throws: What decoding a ``Preserved`` property throws.
    public func decodeRestorableState(with coder: RestorationCoder) throws {
        try decodePreservedProperties(with: coder)
        decodeRestorableState(with: coder as NSCoder)
    }
}

/// View controllers are UIKit restorable objects, so a custom object's `restorationParent` can be
/// one.
extension RestorableViewController: UIStateRestoring {}

/// UIKit's `UIViewControllerRestoration`: a type that creates or finds a view controller at
/// restoration, with UIKit's method.
///
/// It refines ``ControllerRestoration``, whose requirement calls
/// ``viewController(withRestorationIdentifierPath:coder:)``. Register the type with
/// ``RestorationManager/register(restorationClass:)``, as every restoration class: a name read
/// from saved state is used only for a registered type. As in UIKit, returning `nil` skips the
/// controller and everything under it; a controller whose class is neither the saved one nor a
/// subclass of it is kept without decoding. For a root controller's path, a new controller
/// replaces the app's existing root only when the saved state came from a storyboard
/// (``UIApplication/stateRestorationViewControllerStoryboardKey``); otherwise the existing root is
/// kept, as UIKit keeps the window's root.
///
/// Linux differs: UIKit's protocol is `@MainActor`; this one is not isolated (adopt it with
/// `@MainActor UIViewControllerRestoration` for a main-actor type).
public protocol UIViewControllerRestoration: ControllerRestoration {
    /// Returns the controller for a saved restoration path, or `nil` to skip it and its children;
    /// UIKit's method.
    ///
    /// - Parameters:
    ///   - identifierComponents: The restoration identifiers from the root controller down to this
    ///     one.
    ///   - coder: The controller's saved state, a ``RestorationCoder``.
    /// - Returns: A new or existing controller, or `nil`.
    static func viewController(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIViewController?
}

extension ControllerRestoration where Self: UIViewControllerRestoration {
    /// The ``ControllerRestoration`` requirement: calls
    /// ``UIViewControllerRestoration/viewController(withRestorationIdentifierPath:coder:)``.
    ///
    /// - Parameters:
    ///   - identifierComponents: The restoration identifiers from the root controller down.
    ///   - coder: The controller's saved state.
    /// - Returns: What the UIKit method returns.
    public static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        viewController(withRestorationIdentifierPath: identifierComponents, coder: coder as NSCoder)
    }
}

/// UIKit's `UIObjectRestoration`: a type that creates or finds a custom restorable object at
/// restoration, with UIKit's method.
///
/// It refines ``ObjectRestoration``, whose requirement calls
/// ``object(withRestorationIdentifierPath:coder:)``. Register the type with
/// ``RestorationManager/register(objectRestorationClass:)``.
///
/// Linux differs: not `@MainActor`, as ``UIViewControllerRestoration``.
public protocol UIObjectRestoration: ObjectRestoration {
    /// Returns the object for a saved restoration path, or `nil` to leave it unrestored; UIKit's
    /// method.
    ///
    /// - Parameters:
    ///   - identifierComponents: The object's restoration path, outermost identifier first.
    ///   - coder: The object's saved state, a ``RestorationCoder``.
    /// - Returns: The object, which the manager registers at that path.
    static func object(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> (any UIStateRestoring)?
}

extension ObjectRestoration where Self: UIObjectRestoration {
    /// The ``ObjectRestoration`` requirement: calls
    /// ``UIObjectRestoration/object(withRestorationIdentifierPath:coder:)``.
    ///
    /// - Parameters:
    ///   - identifierComponents: The object's restoration path.
    ///   - coder: The object's saved state.
    /// - Returns: What the UIKit method returns.
    public static func object(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any StateRestoring)?
    {
        let object: (any UIStateRestoring)? = object(
            withRestorationIdentifierPath: identifierComponents, coder: coder as NSCoder)
        return object
    }
}
