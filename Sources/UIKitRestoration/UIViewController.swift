import Foundation
import StateRestoration

/// UIKit's `UIViewController`, as far as restoration goes: an open, `@MainActor` base class whose
/// subclasses override `encodeRestorableState(with: NSCoder)` and `decodeRestorableState(with:)`
/// and call `super`, set `restorationIdentifier` and `restorationClass`, and embed children in
/// `children` and `presentedViewController`, as UIKit code does.
///
/// ```swift
/// import UIKitRestoration
///
/// final class NoteController: UIViewController, UIViewControllerRestoration {
///     var noteID = ""
///
///     static func viewController(withRestorationIdentifierPath identifierComponents: [String],
///                                coder: NSCoder) -> UIViewController? {
///         NoteController(restorationIdentifier: identifierComponents.last)
///     }
///
///     override func encodeRestorableState(with coder: NSCoder) {
///         super.encodeRestorableState(with: coder)
///         coder.encode(noteID, forKey: "noteID")
///     }
///
///     override func decodeRestorableState(with coder: NSCoder) {
///         super.decodeRestorableState(with: coder)
///         noteID = coder.decodeObject(forKey: "noteID") as? String ?? ""
///     }
/// }
/// ```
///
/// The class is `@MainActor`, as UIKit's, so overrides reach the subclass's main-actor state. It is
/// a ``RestorableController`` through an isolated conformance (`@MainActor RestorableController`):
/// hand controllers to ``RestorationManager/preserveState(roots:mode:)`` and
/// ``RestorationManager/restoreState(roots:asOf:)`` from main-actor code, or through
/// `StateRestorationService`, whose encode step runs on the main actor. A pass that reaches a
/// controller off the main thread skips it with ``RestorationError/Code/notOnMainActor`` in its
/// report; it never runs the controller's code there. ``Preserved`` properties of a subclass are
/// encoded and decoded before the `NSCoder` methods run. The coder is always a
/// ``RestorationCoder``.
///
/// Linux differs: there is no view, no storyboard and no `init(coder:)`; `children` and
/// `presentedViewController` are set by the app (there is no `addChild(_:)` or `present`).
@MainActor
open class UIViewController {
    /// The identifier that gives the controller a restoration path; `nil` leaves it and its
    /// children unsaved; UIKit's property.
    open var restorationIdentifier: String?
    /// The type that re-creates the controller at launch; UIKit's property. Register the type with
    /// ``RestorationManager/register(restorationClass:)``.
    open var restorationClass: (any UIViewControllerRestoration.Type)?
    /// The embedded child controllers, in order; UIKit's `children`.
    open var children: [UIViewController] = []
    /// The controller this one presents, if any; UIKit's property.
    open var presentedViewController: UIViewController?

    /// Creates a controller.
    ///
    /// - Parameter restorationIdentifier: Its restoration identifier, or `nil`.
    public init(restorationIdentifier: String? = nil) {
        self.restorationIdentifier = restorationIdentifier
    }

    /// Encodes the controller's state; UIKit's method. Overrides call `super` first, as in UIKit.
    /// The base implementation encodes nothing.
    ///
    /// - Parameter coder: The controller's coder, a ``RestorationCoder``.
    open func encodeRestorableState(with coder: NSCoder) {}

    /// Decodes the controller's state; UIKit's method. Overrides call `super` first, as in UIKit.
    /// The base implementation decodes nothing.
    ///
    /// - Parameter coder: The controller's saved state, a ``RestorationCoder``.
    open func decodeRestorableState(with coder: NSCoder) {}

    /// Called on every restored object once all of them decoded; UIKit's method. The base
    /// implementation does nothing.
    open func applicationFinishedRestoringState() {}
}

extension UIViewController: @MainActor RestorableController {
    /// ``children``, as the walk reads them; none off the main actor.
    public var embeddedRestorationChildren: [any RestorableController] {
        // Off the main actor the conformance cannot be looked up (an array conversion would trap),
        // and the controller's own encoding is refused anyway.
        guard MainActorGate.isOnMainActor else { return [] }
        return children.map { $0 }
    }

    /// ``presentedViewController``, as the walk reads it; none off the main actor.
    public var presentedRestorationController: (any RestorableController)? {
        guard MainActorGate.isOnMainActor, let presentedViewController else { return nil }
        return presentedViewController
    }

    /// The ``StateRestoring`` requirement: encodes the ``Preserved`` properties, then calls
    /// ``encodeRestorableState(with:)-(NSCoder)``.
    ///
    /// - Parameter coder: The controller's coder.
    /// - Throws: ``RestorationError/Code/notOnMainActor`` off the main thread; what encoding a
    ///   ``Preserved`` property throws.
    public final func encodeRestorableState(with coder: RestorationCoder) throws {
        // An isolated witness called through an existential that crossed to another thread.
        guard MainActorGate.isOnMainActor else { throw MainActorGate.refusal("Encoding \(type(of: self))") }
        try encodePreservedProperties(with: coder)
        encodeRestorableState(with: coder as NSCoder)
    }

    /// The ``StateRestoring`` requirement: decodes the ``Preserved`` properties, then calls
    /// ``decodeRestorableState(with:)-(NSCoder)``.
    ///
    /// - Parameter coder: The controller's saved state.
    /// - Throws: ``RestorationError/Code/notOnMainActor`` off the main thread; what decoding a
    ///   ``Preserved`` property throws.
    public final func decodeRestorableState(with coder: RestorationCoder) throws {
        guard MainActorGate.isOnMainActor else { throw MainActorGate.refusal("Decoding \(type(of: self))") }
        try decodePreservedProperties(with: coder)
        decodeRestorableState(with: coder as NSCoder)
    }
}

extension RestorableController where Self: UIViewController {
    /// The ``RestorableController`` requirement: the controller's UIKit-typed `restorationClass`.
    @MainActor public var restorationClass: (any ControllerRestoration.Type)? {
        let type: (any UIViewControllerRestoration.Type)? = restorationClass
        return type
    }
}

/// View controllers are UIKit restorable objects, so a custom object's `restorationParent` can be
/// one.
extension UIViewController: @MainActor UIStateRestoring {}
