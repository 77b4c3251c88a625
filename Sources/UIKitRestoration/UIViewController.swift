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
/// Linux differs: there is no view and no storyboard; `init?(coder:)` makes an empty controller (it
/// decodes nothing: restoration does). `present(_:animated:completion:)` and `addChild(_:)` set
/// ``presentedViewController`` and ``children``, and nothing is animated. A restored controller that
/// was presented is presented again by its restored presenter, as in UIKit.
@MainActor
open class UIViewController: NSObject {
    /// The identifier that gives the controller a restoration path; `nil` leaves it and its
    /// children unsaved; UIKit's property.
    open var restorationIdentifier: String?
    /// The type that re-creates the controller at launch; UIKit's property. Register the type with
    /// ``RestorationManager/register(restorationClass:)``.
    open var restorationClass: (any UIViewControllerRestoration.Type)?
    /// The embedded child controllers, in order; UIKit's `children`. Setting it makes this
    /// controller their ``parent``.
    open var children: [UIViewController] = [] {
        didSet { for child in children { child.parent = self } }
    }
    /// The controller this one presents, if any; UIKit's property. Setting it makes this controller
    /// its ``presentingViewController``.
    open var presentedViewController: UIViewController? {
        didSet { presentedViewController?.presentingViewController = self }
    }
    /// The controller that presents this one, if any; UIKit's property.
    public internal(set) weak var presentingViewController: UIViewController?
    /// The controller this one is a child of, if any; UIKit's property.
    public internal(set) weak var parent: UIViewController?
    /// The controller's title; UIKit's property. Nothing saves it by itself.
    open var title: String?
    /// Whether the controller is editing; UIKit's property (see ``setEditing(_:animated:)``).
    open var isEditing = false
    /// How the controller is presented; UIKit's property. Nothing reads it on Linux.
    open var modalPresentationStyle: UIModalPresentationStyle = .automatic
    /// The nib the controller was made with; UIKit's property. There are no nibs on Linux.
    public let nibName: String?
    /// The bundle of ``nibName``; UIKit's property.
    public let nibBundle: Bundle?

    /// Creates a controller; UIKit's designated initializer.
    ///
    /// - Parameters:
    ///   - nibNameOrNil: A nib name, kept in ``nibName`` (there are no nibs on Linux).
    ///   - nibBundleOrNil: Its bundle, kept in ``nibBundle``.
    public init(nibName nibNameOrNil: String?, bundle nibBundleOrNil: Bundle?) {
        nibName = nibNameOrNil
        nibBundle = nibBundleOrNil
        super.init()
    }

    /// Creates a controller with no nib; UIKit's convenience initializer, which calls
    /// ``init(nibName:bundle:)``, so that a subclass that overrides the designated initializers
    /// inherits it, as in UIKit.
    public override convenience init() {
        self.init(nibName: nil, bundle: nil)
    }

    /// Creates a controller with a restoration identifier; a convenience initializer that calls
    /// ``init(nibName:bundle:)``.
    ///
    /// - Parameter restorationIdentifier: Its restoration identifier, or `nil`.
    public convenience init(restorationIdentifier: String?) {
        self.init(nibName: nil, bundle: nil)
        self.restorationIdentifier = restorationIdentifier
    }

    /// Creates a controller from an archive; UIKit's required initializer, which a storyboard calls.
    ///
    /// Linux differs: nothing calls it (there are no storyboards), and it decodes nothing, so a
    /// subclass's override that calls `super.init(coder:)` compiles and makes an empty controller.
    ///
    /// - Parameter coder: An archive; unused.
    public required init?(coder: NSCoder) {
        nibName = nil
        nibBundle = nil
        super.init()
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

    /// The nearest ancestor that is a navigation controller; UIKit's property.
    public var navigationController: UINavigationController? { ancestor(UINavigationController.self) }

    /// The nearest ancestor that is a tab bar controller; UIKit's property.
    public var tabBarController: UITabBarController? { ancestor(UITabBarController.self) }

    /// The nearest ancestor that is a split view controller; UIKit's property.
    public var splitViewController: UISplitViewController? { ancestor(UISplitViewController.self) }

    private func ancestor<T: UIViewController>(_ type: T.Type) -> T? {
        var next = parent
        while let controller = next {
            if let found = controller as? T { return found }
            next = controller.parent
        }
        return nil
    }

    /// Adds a child controller at the end of ``children``; UIKit's method.
    ///
    /// - Parameter childController: The child; removed from its previous parent first.
    open func addChild(_ childController: UIViewController) {
        childController.removeFromParent()
        children.append(childController)
    }

    /// Removes the controller from its parent's ``children``; UIKit's method.
    open func removeFromParent() {
        guard let parent else { return }
        parent.children.removeAll { $0 === self }
        self.parent = nil
    }

    /// Called before the controller is added to or removed from a parent; UIKit's method. The base
    /// implementation does nothing, and nothing calls it on Linux but the app.
    ///
    /// - Parameter parent: The new parent, or `nil`.
    open func willMove(toParent parent: UIViewController?) {}

    /// Called after the controller was added to or removed from a parent; UIKit's method. The base
    /// implementation does nothing, and nothing calls it on Linux but the app.
    ///
    /// - Parameter parent: The new parent, or `nil`.
    open func didMove(toParent parent: UIViewController?) {}

    /// Presents a controller; UIKit's method: sets ``presentedViewController``, then calls
    /// `completion`. Nothing is animated on Linux.
    ///
    /// - Parameters:
    ///   - viewControllerToPresent: The controller to present.
    ///   - flag: Ignored.
    ///   - completion: Called once it is presented.
    open func present(
        _ viewControllerToPresent: UIViewController, animated flag: Bool, completion: (() -> Void)? = nil
    ) {
        presentedViewController = viewControllerToPresent
        completion?()
    }

    /// Dismisses the controller this one presents, or, when it presents none, this controller from
    /// its presenter; UIKit's method.
    ///
    /// - Parameters:
    ///   - flag: Ignored.
    ///   - completion: Called once it is dismissed.
    open func dismiss(animated flag: Bool, completion: (() -> Void)? = nil) {
        if let presented = presentedViewController {
            presented.presentingViewController = nil
            presentedViewController = nil
        } else if let presenter = presentingViewController {
            presenter.presentedViewController = nil
            presentingViewController = nil
        }
        completion?()
    }

    /// Turns editing on or off; UIKit's method. The base implementation sets ``isEditing``.
    ///
    /// - Parameters:
    ///   - editing: Whether to edit.
    ///   - animated: Ignored.
    open func setEditing(_ editing: Bool, animated: Bool) {
        isEditing = editing
    }
}

/// How a controller is presented; UIKit's `UIModalPresentationStyle`, with its raw values. Nothing
/// reads it on Linux.
public enum UIModalPresentationStyle: Int, Sendable {
    /// Full screen.
    case fullScreen = 0
    /// A page sheet.
    case pageSheet = 1
    /// A form sheet.
    case formSheet = 2
    /// Over the current context.
    case currentContext = 3
    /// A custom presentation.
    case custom = 4
    /// Full screen, over what was shown.
    case overFullScreen = 5
    /// Over the current context, over what was shown.
    case overCurrentContext = 6
    /// A popover.
    case popover = 7
    /// No adaptation.
    case none = -1
    /// The system's choice.
    case automatic = -2
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
        // UIKit presents a restored presented controller again by itself: remember which one it is.
        if let presentedViewController, !coder.containsValue(forKey: Self.presentedKey) {
            coder.encode(presentedViewController as any StateRestoring, forKey: Self.presentedKey)
        }
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
        if presentedViewController == nil,
            let presented = coder.decodeObject(forKey: Self.presentedKey) as? UIViewController
        {
            presentedViewController = presented
        }
    }

    /// Where a controller records the controller it presents.
    static let presentedKey = "UIKitRestoration.presented"
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
