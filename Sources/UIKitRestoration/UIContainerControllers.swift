import Foundation
import StateRestoration

/// UIKit's `UINavigationController`, as far as restoration goes: it encodes its stack and
/// re-attaches the restored controllers in order, as UIKit's does.
///
/// Linux differs: there is no navigation bar and no animation; `animated` is ignored.
@MainActor
open class UINavigationController: UIViewController {
    /// The stack, bottom first; UIKit's property (``UIViewController/children``).
    open var viewControllers: [UIViewController] {
        get { children }
        set { children = newValue }
    }

    /// The controller on top of the stack.
    public var topViewController: UIViewController? { children.last }

    /// Whether the navigation bar is hidden; UIKit's property. Nothing saves it by itself (UIKit
    /// does not either): encode it in `encodeRestorableState(with:)` to keep it.
    open var isNavigationBarHidden = false

    /// Hides or shows the navigation bar; UIKit's method. There is no bar on Linux: it sets
    /// ``isNavigationBarHidden``.
    ///
    /// - Parameters:
    ///   - hidden: Whether to hide it.
    ///   - animated: Ignored.
    open func setNavigationBarHidden(_ hidden: Bool, animated: Bool) {
        isNavigationBarHidden = hidden
    }

    /// Creates a navigation controller with a root controller; UIKit's initializer.
    ///
    /// - Parameter rootViewController: The bottom of the stack.
    public convenience init(rootViewController: UIViewController) {
        self.init()
        children = [rootViewController]
    }

    /// Pushes a controller on the stack; UIKit's method.
    ///
    /// - Parameters:
    ///   - viewController: The controller.
    ///   - animated: Ignored.
    open func pushViewController(_ viewController: UIViewController, animated: Bool) {
        children.append(viewController)
    }

    /// Pops the top controller, unless it is the root; UIKit's method.
    ///
    /// - Parameter animated: Ignored.
    /// - Returns: The controller popped, or `nil`.
    @discardableResult
    open func popViewController(animated: Bool) -> UIViewController? {
        children.count > 1 ? children.removeLast() : nil
    }

    /// Replaces the stack; UIKit's method.
    ///
    /// - Parameters:
    ///   - viewControllers: The new stack, bottom first.
    ///   - animated: Ignored.
    open func setViewControllers(_ viewControllers: [UIViewController], animated: Bool) {
        children = viewControllers
    }

    /// Encodes the stack, after what `super` encodes.
    ///
    /// - Parameter coder: The controller's coder.
    open override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        ContainerKeys.encode(children, into: coder)
    }

    /// Decodes the stack and re-attaches the restored controllers in order.
    ///
    /// - Parameter coder: The controller's saved state.
    open override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        if let restored = ContainerKeys.decode(from: coder) { children = restored }
    }
}

/// UIKit's `UITabBarController`, as far as restoration goes: it encodes its tabs and the selected
/// one, and re-attaches them in order.
///
/// Linux differs: there is no tab bar.
@MainActor
open class UITabBarController: UIViewController {
    /// The tabs, in order; UIKit's property (``UIViewController/children``).
    open var viewControllers: [UIViewController]? {
        get { children }
        set { children = newValue ?? [] }
    }

    /// The index of the selected tab; UIKit's property.
    open var selectedIndex = 0

    /// The selected tab; UIKit's property. Setting a controller that is not a tab changes nothing.
    open var selectedViewController: UIViewController? {
        get { children.indices.contains(selectedIndex) ? children[selectedIndex] : nil }
        set {
            if let newValue, let index = children.firstIndex(where: { $0 === newValue }) { selectedIndex = index }
        }
    }

    /// Replaces the tabs; UIKit's method.
    ///
    /// - Parameters:
    ///   - viewControllers: The tabs, in order.
    ///   - animated: Ignored.
    open func setViewControllers(_ viewControllers: [UIViewController]?, animated: Bool) {
        children = viewControllers ?? []
    }

    /// Encodes the tabs and the selected one, after what `super` encodes.
    ///
    /// - Parameter coder: The controller's coder.
    open override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        ContainerKeys.encode(children, into: coder)
        ContainerKeys.encodeSelection(selectedViewController, into: coder)
    }

    /// Decodes the tabs, re-attaches them in order and selects the saved one.
    ///
    /// - Parameter coder: The controller's saved state.
    open override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        guard let restored = ContainerKeys.decode(from: coder) else { return }
        children = restored
        let selected = coder.decodeObject(forKey: ContainerKeys.selection) as AnyObject?
        selectedIndex = restored.firstIndex { $0 === selected } ?? 0
    }
}

/// UIKit's `UISplitViewController`, as far as restoration goes: it encodes its columns' controllers
/// and re-attaches them in order.
///
/// Linux differs: there are no columns to lay out; column widths and display modes are not saved.
@MainActor
open class UISplitViewController: UIViewController {
    /// The columns' controllers, in order; UIKit's property (``UIViewController/children``).
    open var viewControllers: [UIViewController] {
        get { children }
        set { children = newValue }
    }

    /// Encodes the columns' controllers, after what `super` encodes.
    ///
    /// - Parameter coder: The controller's coder.
    open override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        ContainerKeys.encode(children, into: coder)
    }

    /// Decodes the columns' controllers and re-attaches them in order.
    ///
    /// - Parameter coder: The controller's saved state.
    open override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        if let restored = ContainerKeys.decode(from: coder) { children = restored }
    }
}

/// How the containers save their children: as StateRestoration's own containers
/// (`RestorableNavigationController` and its siblings) do, so that state saved by one reads in the
/// other.
@MainActor
enum ContainerKeys {
    static let selection = ContainerCoding.selectionKey

    static func encode(_ controllers: [UIViewController], into coder: NSCoder) {
        ContainerCoding.encode(controllers.map { $0 as any StateRestoring }, into: coder)
    }

    static func encodeSelection(_ controller: UIViewController?, into coder: NSCoder) {
        ContainerCoding.encodeSelection(controller.map { $0 as any StateRestoring }, into: coder)
    }

    static func decode(from coder: NSCoder) -> [UIViewController]? {
        ContainerCoding.decodedChildren(from: coder)?.compactMap { $0 as? UIViewController }
    }
}
