import Foundation

/// A stand-in for UIKit's `UITableView` that carries what restoration code reads and sets: the
/// selection, the scroll offset and the editing state.
///
/// Linux differs: nothing is drawn and nothing is saved by itself (UIKit saves a table's selection
/// and first visible row for a table with a restoration identifier); the controller encodes what it
/// needs, typically ``indexPathForSelectedRow``, in its own `encodeRestorableState(with:)`.
@MainActor
open class UITableView: UIView {
    /// Where a selected row is scrolled to; UIKit's `UITableView.ScrollPosition`. Nothing scrolls on
    /// Linux.
    public enum ScrollPosition: Int, Sendable {
        /// No scrolling.
        case none
        /// The row at the top.
        case top
        /// The row in the middle.
        case middle
        /// The row at the bottom.
        case bottom
    }

    /// The table's style; UIKit's `UITableView.Style`.
    public enum Style: Int, Sendable {
        /// Plain.
        case plain
        /// Grouped.
        case grouped
        /// Inset and grouped.
        case insetGrouped
    }

    /// The table's style.
    public let style: Style
    /// The selected rows, in the order they were selected; see ``indexPathForSelectedRow``.
    public private(set) var indexPathsForSelectedRows: [IndexPath]?
    /// The scroll offset; UIKit's `contentOffset`.
    open var contentOffset = CGPoint.zero
    /// Whether the table is editing; UIKit's property.
    open var isEditing = false
    /// Whether several rows can be selected at once; UIKit's property.
    open var allowsMultipleSelection = false
    /// How many times ``reloadData()`` ran, for apps and tests that check that it did.
    public private(set) var reloadCount = 0

    /// Creates a table view.
    ///
    /// - Parameters:
    ///   - frame: Ignored: there is no layout on Linux.
    ///   - style: The table's style.
    public init(frame: CGRect = .zero, style: Style = .plain) {
        self.style = style
        super.init()
    }

    /// The first selected row, or `nil`; UIKit's property.
    public var indexPathForSelectedRow: IndexPath? { indexPathsForSelectedRows?.first }

    /// Reloads the rows; UIKit's method. On Linux it counts the call.
    open func reloadData() { reloadCount += 1 }

    /// Selects a row, or clears the selection for `nil`; UIKit's method.
    ///
    /// - Parameters:
    ///   - indexPath: The row, or `nil`.
    ///   - animated: Ignored.
    ///   - scrollPosition: Ignored.
    open func selectRow(at indexPath: IndexPath?, animated: Bool, scrollPosition: ScrollPosition) {
        guard let indexPath else {
            indexPathsForSelectedRows = nil
            return
        }
        var selected = allowsMultipleSelection ? indexPathsForSelectedRows ?? [] : []
        if !selected.contains(indexPath) { selected.append(indexPath) }
        indexPathsForSelectedRows = selected
    }

    /// Deselects a row; UIKit's method.
    ///
    /// - Parameters:
    ///   - indexPath: The row.
    ///   - animated: Ignored.
    open func deselectRow(at indexPath: IndexPath, animated: Bool) {
        indexPathsForSelectedRows?.removeAll { $0 == indexPath }
        if indexPathsForSelectedRows?.isEmpty == true { indexPathsForSelectedRows = nil }
    }

    /// Turns editing on or off; UIKit's method.
    ///
    /// - Parameters:
    ///   - editing: Whether to edit.
    ///   - animated: Ignored.
    open func setEditing(_ editing: Bool, animated: Bool) { isEditing = editing }
}

/// UIKit's `UITableViewController`, as far as restoration goes: a ``UIViewController`` with a
/// ``UITableView``.
///
/// Linux differs: the table is a stand-in that saves nothing by itself; encode its selection or
/// offset in `encodeRestorableState(with:)`.
@MainActor
open class UITableViewController: UIViewController {
    /// The controller's table; UIKit's property.
    open var tableView: UITableView!
    /// Whether the selection is cleared when the table appears; UIKit's property. Nothing reads it
    /// on Linux.
    open var clearsSelectionOnViewWillAppear = true

    /// Creates a table view controller; UIKit's initializer.
    ///
    /// - Parameter style: The table's style.
    public init(style: UITableView.Style) {
        tableView = UITableView(style: style)
        super.init(nibName: nil, bundle: nil)
    }

    /// Creates a table view controller with a plain table; UIKit's designated initializer.
    ///
    /// - Parameters:
    ///   - nibNameOrNil: A nib name (there are no nibs on Linux).
    ///   - nibBundleOrNil: Its bundle.
    public override init(nibName nibNameOrNil: String?, bundle nibBundleOrNil: Bundle?) {
        tableView = UITableView(style: .plain)
        super.init(nibName: nibNameOrNil, bundle: nibBundleOrNil)
    }

    /// Creates an empty table view controller; see ``UIViewController/init(coder:)``.
    ///
    /// - Parameter coder: An archive; unused.
    public required init?(coder: NSCoder) {
        tableView = UITableView(style: .plain)
        super.init(coder: coder)
    }

    /// Turns editing on or off for the controller and its table; UIKit's method.
    ///
    /// - Parameters:
    ///   - editing: Whether to edit.
    ///   - animated: Ignored.
    open override func setEditing(_ editing: Bool, animated: Bool) {
        super.setEditing(editing, animated: animated)
        tableView?.setEditing(editing, animated: animated)
    }
}
