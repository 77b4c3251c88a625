import StateJournal

/// A node of the app's controller hierarchy, the part of the app that preservation walks: the
/// Linux counterpart of a `UIViewController`.
///
/// A controller with a ``restorationIdentifier`` is preserved at the path made of its ancestors'
/// identifiers and its own. A controller whose identifier is `nil` is not preserved, and neither is
/// anything under it.
public protocol RestorableController: StateRestoring {
    /// The identifier that makes the controller part of preservation, or `nil` to leave it (and its
    /// children) out. Unique among its siblings.
    ///
    /// It has no default: the class that adopts the protocol declares it, so that a subclass
    /// overrides it (with `override`, which the compiler checks) and the passes see the subclass's
    /// identifier. See "Subclasses" in ``StateRestoring``.
    var restorationIdentifier: String? { get }

    /// The type that recreates this controller during restoration, or `nil` to find it through the
    /// delegate or the existing hierarchy. Defaults to `nil`.
    var restorationClass: (any ControllerRestoration.Type)? { get }

    /// The children the controller embeds, in order (the stack of a navigation controller, the
    /// panes of a split view). Defaults to none.
    var embeddedRestorationChildren: [any RestorableController] { get }

    /// The controller this one presents on top of itself (a dialog, a sheet), if any. Defaults to
    /// `nil`.
    var presentedRestorationController: (any RestorableController)? { get }
}

extension RestorableController {
    /// No restoration class.
    public var restorationClass: (any ControllerRestoration.Type)? { nil }

    /// No embedded children.
    public var embeddedRestorationChildren: [any RestorableController] { [] }

    /// Presents nothing.
    public var presentedRestorationController: (any RestorableController)? { nil }

    /// The children preservation walks: the embedded ones in order, then the presented one.
    public var restorationChildren: [any RestorableController] {
        var children = embeddedRestorationChildren
        if let presented = presentedRestorationController { children.append(presented) }
        return children
    }
}
