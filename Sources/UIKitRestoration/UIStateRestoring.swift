import Foundation
import StateRestoration

/// UIKit's `UIStateRestoring`: a custom object whose state is preserved and restored, with UIKit's
/// `NSCoder` methods and UIKit's types for ``restorationParent`` and ``objectRestorationClass``.
///
/// It is `@MainActor`, as UIKit's, and refines ``StateRestoring``: the package's requirements are
/// bridged to these, so an object that declares `func encodeRestorableState(with coder: NSCoder)`,
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
/// The bridges run the object's main-actor methods when the pass runs on the main thread; a pass on
/// another thread does not run them: it reports ``RestorationError/Code/notOnMainActor`` for the
/// object's state and reads no parent or restoration class.
///
/// Linux differs: UIKit's protocol refines `NSObjectProtocol`; any class adopts this one, an
/// `NSObject` subclass or not. `@objc(Name)`, which UIKit code gives a private class so that its
/// archived name is stable, has no Linux meaning: call
/// ``RestorationManager/register(codingName:for:)`` instead.
@MainActor
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
    /// The ``StateRestoring`` requirement: the object's UIKit-typed `restorationParent`, read on the
    /// main actor; `nil` off the main thread.
    public nonisolated var restorationParent: (any StateRestoring)? {
        // Only read on the main thread, where the object lives.
        nonisolated(unsafe) let object = self
        return MainActorGate.ifOnMainActor { () -> (any StateRestoring)? in
            let parent: (any UIStateRestoring)? = object.restorationParent
            return parent
        } ?? nil
    }

    /// The ``StateRestoring`` requirement: the object's UIKit-typed `objectRestorationClass`, read on
    /// the main actor; `nil` off the main thread.
    public nonisolated var objectRestorationClass: (any ObjectRestoration.Type)? {
        nonisolated(unsafe) let object = self
        return MainActorGate.ifOnMainActor { () -> (any ObjectRestoration.Type)? in
            let type: (any UIObjectRestoration.Type)? = object.objectRestorationClass
            return type
        } ?? nil
    }

    /// The ``StateRestoring`` requirement: encodes the ``Preserved`` properties, then calls the
    /// object's `encodeRestorableState(with: NSCoder)`, on the main actor.
    ///
    /// - Parameter coder: The object's coder.
    /// - Throws: ``RestorationError/Code/notOnMainActor`` off the main thread; what encoding a
    ///   ``Preserved`` property throws.
    public nonisolated func encodeRestorableState(with coder: RestorationCoder) throws {
        nonisolated(unsafe) let object = self
        nonisolated(unsafe) let coder = coder
        try MainActorGate.onMainActor("Encoding \(Self.self)") {
            try object.encodePreservedProperties(with: coder)
            object.encodeRestorableState(with: coder as NSCoder)
        }
    }

    /// The ``StateRestoring`` requirement: decodes the ``Preserved`` properties, then calls the
    /// object's `decodeRestorableState(with: NSCoder)`, on the main actor.
    ///
    /// - Parameter coder: The object's saved state.
    /// - Throws: ``RestorationError/Code/notOnMainActor`` off the main thread; what decoding a
    ///   ``Preserved`` property throws.
    public nonisolated func decodeRestorableState(with coder: RestorationCoder) throws {
        nonisolated(unsafe) let object = self
        nonisolated(unsafe) let coder = coder
        try MainActorGate.onMainActor("Decoding \(Self.self)") {
            try object.decodePreservedProperties(with: coder)
            object.decodeRestorableState(with: coder as NSCoder)
        }
    }
}

/// UIKit's `UIViewControllerRestoration`: a type that creates or finds a view controller at
/// restoration, with UIKit's method; `@MainActor`, as UIKit's.
///
/// It refines ``ControllerRestoration``, whose requirement calls
/// ``viewController(withRestorationIdentifierPath:coder:)`` on the main actor. Register the type
/// with ``RestorationManager/register(restorationClass:)``, as every restoration class: a name read
/// from saved state is used only for a registered type. As in UIKit, returning `nil` skips the
/// controller and everything under it; a controller whose class is neither the saved one nor a
/// subclass of it is kept without decoding. For a root controller's path, a new controller
/// replaces the app's existing root only when the saved state came from a storyboard
/// (``UIApplication/stateRestorationViewControllerStoryboardKey``); otherwise the existing root is
/// kept, as UIKit keeps the window's root.
///
/// A restoration run off the main thread does not call the method: the path is skipped and the
/// coder records ``RestorationError/Code/notOnMainActor`` in the report's diagnostics.
@MainActor
public protocol UIViewControllerRestoration: ControllerRestoration, SendableMetatype {
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
    /// ``UIViewControllerRestoration/viewController(withRestorationIdentifierPath:coder:)`` on the
    /// main actor.
    ///
    /// - Parameters:
    ///   - identifierComponents: The restoration identifiers from the root controller down.
    ///   - coder: The controller's saved state.
    /// - Returns: What the UIKit method returns; `nil` off the main thread.
    public nonisolated static func controller(
        withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder
    ) -> (any RestorableController)? {
        nonisolated(unsafe) let savedState = coder
        let made = MainActorGate.ifOnMainActor { () -> (any RestorableController)? in
            viewController(withRestorationIdentifierPath: identifierComponents, coder: savedState as NSCoder)
        }
        guard let made else {
            coder.failWithError(MainActorGate.refusal("Asking \(Self.self) for a controller"))
            return nil
        }
        return made
    }
}

/// UIKit's `UIObjectRestoration`: a type that creates or finds a custom restorable object at
/// restoration, with UIKit's method; `@MainActor`, as UIKit's.
///
/// It refines ``ObjectRestoration``, whose requirement calls
/// ``object(withRestorationIdentifierPath:coder:)`` on the main actor. Register the type with
/// ``RestorationManager/register(objectRestorationClass:)``. Off the main thread, as
/// ``UIViewControllerRestoration``.
@MainActor
public protocol UIObjectRestoration: ObjectRestoration, SendableMetatype {
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
    /// ``UIObjectRestoration/object(withRestorationIdentifierPath:coder:)`` on the main actor.
    ///
    /// - Parameters:
    ///   - identifierComponents: The object's restoration path.
    ///   - coder: The object's saved state.
    /// - Returns: What the UIKit method returns; `nil` off the main thread.
    public nonisolated static func object(
        withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder
    ) -> (any StateRestoring)? {
        nonisolated(unsafe) let savedState = coder
        let made = MainActorGate.ifOnMainActor { () -> (any StateRestoring)? in
            object(withRestorationIdentifierPath: identifierComponents, coder: savedState as NSCoder)
        }
        guard let made else {
            coder.failWithError(MainActorGate.refusal("Asking \(Self.self) for an object"))
            return nil
        }
        return made
    }
}
