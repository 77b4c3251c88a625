import Foundation

/// UIKit's `UINavigationController` as far as restoration goes: a stack of child controllers that
/// the package encodes, restores and re-attaches in order.
///
/// The stack is ``RestorableViewController/children``, bottom first, so each controller is saved
/// under the container's path. At restoration, each child is obtained as any controller is (its
/// restoration class, the delegate, the existing hierarchy, a registered factory), and the
/// container's decode puts the restored ones back in their saved order; a child that was not
/// restored (its restoration class returned `nil`) is left out, as UIKit leaves it out of the stack.
/// Subclasses that override the `NSCoder` methods call `super`.
open class RestorableNavigationController: RestorableViewController {
    /// The stack, bottom first: UIKit's `viewControllers`, the same as ``RestorableViewController/children``.
    open var viewControllers: [any RestorableController] {
        get { children }
        set { children = newValue }
    }

    /// The controller on top of the stack.
    public var topViewController: (any RestorableController)? { children.last }

    /// Encodes references to the stack's controllers, in order, then what a subclass adds.
    ///
    /// - Parameter coder: The container's coder.
    open override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        ContainerCoding.encode(children, into: coder)
    }

    /// Re-attaches the restored controllers of the stack, in their saved order.
    ///
    /// - Parameter coder: The container's coder.
    open override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        if let restored = ContainerCoding.decode(from: coder) { children = restored }
    }
}

/// UIKit's `UITabBarController` as far as restoration goes: its child controllers, re-attached in
/// order at restoration as ``RestorableNavigationController`` re-attaches its stack, and which one is
/// selected.
open class RestorableTabBarController: RestorableViewController {
    /// The tabs' controllers, in order: UIKit's `viewControllers`, the same as
    /// ``RestorableViewController/children``.
    open var viewControllers: [any RestorableController] {
        get { children }
        set { children = newValue }
    }

    /// The index of the selected tab, kept within the tabs at restoration.
    open var selectedIndex = 0

    /// The selected tab's controller, if the index is within the tabs.
    public var selectedViewController: (any RestorableController)? {
        children.indices.contains(selectedIndex) ? children[selectedIndex] : nil
    }

    /// Encodes references to the tabs' controllers and the selected index.
    ///
    /// - Parameter coder: The container's coder.
    open override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        ContainerCoding.encode(children, into: coder)
        ContainerCoding.encodeSelection(selectedViewController.map { $0 as any StateRestoring }, into: coder)
    }

    /// Re-attaches the restored tabs in order and selects the saved tab when it was restored; the
    /// first tab otherwise.
    ///
    /// - Parameter coder: The container's coder.
    open override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        guard let restored = ContainerCoding.decode(from: coder) else { return }
        children = restored
        let selected = coder.decodeObject(forKey: ContainerCoding.selectionKey) as AnyObject?
        selectedIndex = restored.firstIndex { $0 === selected } ?? 0
    }
}

/// UIKit's `UISplitViewController` as far as restoration goes: its columns' controllers
/// (primary first), re-attached in order at restoration as ``RestorableNavigationController``
/// re-attaches its stack.
open class RestorableSplitViewController: RestorableViewController {
    /// The columns' controllers, primary first: UIKit's `viewControllers`, the same as
    /// ``RestorableViewController/children``.
    open var viewControllers: [any RestorableController] {
        get { children }
        set { children = newValue }
    }

    /// Encodes references to the columns' controllers, in order.
    ///
    /// - Parameter coder: The container's coder.
    open override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        ContainerCoding.encode(children, into: coder)
    }

    /// Re-attaches the restored columns' controllers, in their saved order.
    ///
    /// - Parameter coder: The container's coder.
    open override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        if let restored = ContainerCoding.decode(from: coder) { children = restored }
    }
}

/// What the containers write: their children as an ordered list of references, and the selected
/// one. UIKitRestoration's containers write the same, so that state saved by either reads in both.
package enum ContainerCoding {
    package static let childrenKey = "StateRestoration.containerChildren"
    package static let selectionKey = "StateRestoration.containerSelection"

    package static func encode(_ children: [any StateRestoring], into coder: NSCoder) {
        guard let coder = coder as? RestorationCoder else { return }
        coder.encode(children, forKey: childrenKey)
    }

    package static func encodeSelection(_ selected: (any StateRestoring)?, into coder: NSCoder) {
        guard let coder = coder as? RestorationCoder else { return }
        coder.encode(selected, forKey: selectionKey)
    }

    /// The restored children in their saved order, or `nil` when nothing was saved.
    package static func decodedChildren(from coder: NSCoder) -> [Any]? {
        guard coder.containsValue(forKey: childrenKey) else { return nil }
        return coder.decodeObject(forKey: childrenKey) as? [Any] ?? []
    }

    static func encode(_ children: [any RestorableController], into coder: NSCoder) {
        encode(children.map { $0 as any StateRestoring }, into: coder)
    }

    /// The restored children in their saved order, or `nil` when nothing was saved.
    static func decode(from coder: NSCoder) -> [any RestorableController]? {
        decodedChildren(from: coder)?.compactMap { $0 as? any RestorableController }
    }
}
