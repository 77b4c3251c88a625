@_exported import Foundation
@_exported import StateRestoration

/// UIKit's `UIViewController`, as far as restoration goes: ``RestorableViewController``, under
/// UIKit's name, so that `class ListController: UIViewController` compiles as written.
///
/// Subclasses override `encodeRestorableState(with: NSCoder)` and `decodeRestorableState(with:)`
/// and call `super`, set `restorationIdentifier` and `restorationClass`, and embed children in
/// `children` and `presentedViewController`.
///
/// Linux differs: UIKit's `UIViewController` is `@MainActor`; this one is not isolated, as the
/// package's types are not (a manager works on the thread that owns it). Ported code that does not
/// mark its controllers `@MainActor` compiles as written, and is used on the manager's thread. A
/// subclass marked `@MainActor` compiles too, but its overrides of the coding methods stay
/// nonisolated and cannot touch its main-actor state: wrap their bodies in
/// `MainActor.assumeIsolated { }`, or leave the class unannotated. `children` are
/// `[any RestorableController]`, not `[UIViewController]`: cast an element (`as? ListController`)
/// where UIKit code reads a controller's own members.
public typealias UIViewController = RestorableViewController

/// UIKit's `UINavigationController`, as far as restoration goes: ``RestorableNavigationController``,
/// which encodes its stack and re-attaches the restored controllers in order.
public typealias UINavigationController = RestorableNavigationController

/// UIKit's `UITabBarController`, as far as restoration goes: ``RestorableTabBarController``, which
/// encodes its tabs and the selected one, and re-attaches them in order.
public typealias UITabBarController = RestorableTabBarController

/// UIKit's `UISplitViewController`, as far as restoration goes: ``RestorableSplitViewController``,
/// which encodes its columns' controllers and re-attaches them in order.
public typealias UISplitViewController = RestorableSplitViewController
