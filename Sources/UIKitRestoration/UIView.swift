import Foundation

/// A stand-in for UIKit's `UIView` that carries a `restorationIdentifier`, so that ported code
/// that sets a view's identifier compiles.
///
/// Linux differs: nothing is saved for a view. UIKit saves a few things by itself for a view with
/// an identifier whose controller has one too (a scroll view's offset; a table's or collection's
/// selection and first visible row, by model identifier when its data source adopts
/// ``UIDataSourceModelAssociation``); here there is no view hierarchy to walk, so the controller
/// encodes its views' state in its own `encodeRestorableState(with:)`, and can use the
/// identifiers and ``UIDataSourceModelAssociation`` to do it as UIKit did.
@MainActor
open class UIView {
    /// The view's restoration identifier; UIKit's property. Nothing reads it but the app.
    open var restorationIdentifier: String?

    /// Creates a view.
    ///
    /// - Parameter restorationIdentifier: Its restoration identifier, or `nil`.
    public init(restorationIdentifier: String? = nil) {
        self.restorationIdentifier = restorationIdentifier
    }

    /// Encodes the view's state; UIKit's method. The base implementation encodes nothing.
    ///
    /// Linux differs: nothing calls it by itself (UIKit calls it for a view with an identifier
    /// under a controller with one); a controller that keeps its views' state calls it from its
    /// own `encodeRestorableState(with:)`, with its coder or a key of its own.
    ///
    /// - Parameter coder: The coder to write into.
    open func encodeRestorableState(with coder: NSCoder) {}

    /// Decodes the view's state; UIKit's method. The base implementation decodes nothing.
    ///
    /// Linux differs: called only by the app, as ``encodeRestorableState(with:)``.
    ///
    /// - Parameter coder: The coder to read from.
    open func decodeRestorableState(with coder: NSCoder) {}
}

/// UIKit's `UIDataSourceModelAssociation`: a data source that names its elements by a model
/// identifier that stays valid when the rows move, so that saved selection survives a reload.
///
/// Linux differs: UIKit calls it by itself for a table or collection view with a restoration
/// identifier; here nothing calls it but the app, typically a controller that saves the selected
/// element's identifier in `encodeRestorableState(with:)` and finds its row again after
/// restoration. `@MainActor`, as UIKit's.
@MainActor
public protocol UIDataSourceModelAssociation {
    /// The model identifier of the element at an index path; UIKit's method.
    ///
    /// - Parameters:
    ///   - idx: The element's index path.
    ///   - view: The view that shows it.
    /// - Returns: The identifier, or `nil` when there is none.
    func modelIdentifierForElement(at idx: IndexPath, in view: UIView) -> String?

    /// The index path of the element with a model identifier, now; UIKit's method.
    ///
    /// - Parameters:
    ///   - identifier: A model identifier that ``modelIdentifierForElement(at:in:)`` returned.
    ///   - view: The view that shows the element.
    /// - Returns: The index path, or `nil` when the element is gone.
    func indexPathForElement(withModelIdentifier identifier: String, in view: UIView) -> IndexPath?
}
