import Foundation

/// The restoration part of UIKit's `UIViewController`, as an open base class: subclasses override
/// `encodeRestorableState(with:)` and `decodeRestorableState(with:)` taking an `NSCoder` and call
/// `super`, so a UIKit controller's restoration methods move over unchanged.
///
/// ```swift
/// import Foundation
/// import StateRestoration
///
/// class ListController: RestorableViewController {
///     var scrollOffset = 0.0
///
///     override func encodeRestorableState(with coder: NSCoder) {
///         super.encodeRestorableState(with: coder)
///         coder.encode(scrollOffset, forKey: "scrollOffset")
///     }
///
///     override func decodeRestorableState(with coder: NSCoder) {
///         super.decodeRestorableState(with: coder)
///         scrollOffset = coder.decodeDouble(forKey: "scrollOffset")
///     }
/// }
/// ```
///
/// The coder is always a ``RestorationCoder``, with `NSCoder`'s semantics: nothing throws, and
/// problems are reported in the pass's report. The class conforms to ``RestorableController``: its
/// ``embeddedRestorationChildren`` are ``children`` and its ``presentedRestorationController`` is
/// ``presentedViewController``, as UIKit walks them. ``Preserved`` properties of a subclass are
/// encoded and decoded before the `NSCoder` methods run.
open class RestorableViewController: RestorableController {
    /// The identifier that gives the controller a restoration path; `nil` leaves it and its
    /// children unsaved, as in UIKit.
    open var restorationIdentifier: String?
    /// The type that re-creates the controller at launch, as UIKit's `restorationClass`.
    open var restorationClass: (any ControllerRestoration.Type)?
    /// The embedded child controllers, in order (UIKit's `children`).
    open var children: [any RestorableController] = []
    /// The controller this one presents, if any (UIKit's `presentedViewController`).
    open var presentedViewController: (any RestorableController)?

    /// Creates a controller.
    ///
    /// - Parameter restorationIdentifier: Its restoration identifier, or `nil`.
    public init(restorationIdentifier: String? = nil) {
        self.restorationIdentifier = restorationIdentifier
    }

    /// ``children``, as the walk reads them.
    public var embeddedRestorationChildren: [any RestorableController] { children }
    /// ``presentedViewController``, as the walk reads it.
    public var presentedRestorationController: (any RestorableController)? { presentedViewController }

    /// Encodes the controller's state; UIKit's method. Overrides call `super` first, as in UIKit.
    /// The base implementation encodes nothing.
    ///
    /// - Parameter coder: The controller's coder, a ``RestorationCoder``.
    open func encodeRestorableState(with coder: NSCoder) {}

    /// Decodes the controller's state; UIKit's method. Overrides call `super` first, as in UIKit.
    /// The base implementation decodes nothing.
    ///
    /// - Parameter coder: The controller's coder, a ``RestorationCoder``.
    open func decodeRestorableState(with coder: NSCoder) {}

    /// Called on every restored object once all of them decoded; UIKit's method. The base
    /// implementation does nothing.
    open func applicationFinishedRestoringState() {}

    /// The ``StateRestoring`` requirement: encodes the ``Preserved`` properties, then calls
    /// ``encodeRestorableState(with:)-(NSCoder)``.
    ///
    /// - Parameter coder: The controller's coder.
    /// - Throws: What encoding a ``Preserved`` property throws.
    public final func encodeRestorableState(with coder: RestorationCoder) throws {
        try encodePreservedProperties(with: coder)
        encodeRestorableState(with: coder as NSCoder)
    }

    /// The ``StateRestoring`` requirement: decodes the ``Preserved`` properties, then calls
    /// ``decodeRestorableState(with:)-(NSCoder)``.
    ///
    /// - Parameter coder: The controller's coder.
    /// - Throws: What decoding a ``Preserved`` property throws.
    public final func decodeRestorableState(with coder: RestorationCoder) throws {
        try decodePreservedProperties(with: coder)
        decodeRestorableState(with: coder as NSCoder)
    }
}
