import StateJournal
import Testing
import UIKitRestoration

/// A list whose selection is saved as UIKit code saves it, through its table view.
final class InboxListController: UITableViewController {
    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(tableView.indexPathForSelectedRow, forKey: "selection")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        let selection = coder.decodeObject(of: NSIndexPath.self, forKey: "selection") as IndexPath?
        tableView.reloadData()
        tableView.selectRow(at: selection, animated: false, scrollPosition: .middle)
    }
}

/// A modal editor: the restoration class makes it, and its presenter presents it again, as in UIKit.
final class DraftEditorController: UIViewController, UIViewControllerRestoration {
    var text = ""

    override init(nibName nibNameOrNil: String?, bundle nibBundleOrNil: Bundle?) {
        super.init(nibName: nibNameOrNil, bundle: nibBundleOrNil)
        restorationIdentifier = "DraftEditor"
        restorationClass = DraftEditorController.self
    }

    required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    static func viewController(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIViewController?
    {
        DraftEditorController(nibName: nil, bundle: nil)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(text, forKey: "text")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        text = coder.decodeObject(forKey: "text") as? String ?? ""
    }
}

@MainActor @Suite struct ControllerSurfaceTests {
    let store = TestStore()
    let delegate = AlwaysRestore()

    func manager(_ journal: Journal) -> RestorationManager {
        let manager = makeManager(journal, delegate: delegate)
        manager.register(restorationClass: DraftEditorController.self)
        return manager
    }

    /// The app's root at launch: a navigation controller over the inbox list.
    func root() -> (UINavigationController, InboxListController) {
        let list = InboxListController(style: .plain)
        list.restorationIdentifier = "Inbox"
        let navigation = UINavigationController(rootViewController: list)
        navigation.restorationIdentifier = "Mail"
        return (navigation, list)
    }

    @Test func aPresentedControllerIsPresentedAgainByItsRestoredPresenter() throws {
        do {
            let journal = try store.open()
            let (navigation, list) = root()
            let editor = DraftEditorController(nibName: nil, bundle: nil)
            editor.text = "Dear Ana,"
            list.present(editor, animated: true)
            #expect(editor.presentingViewController === list)
            #expect(try manager(journal).preserveState(roots: [navigation]).problems.isEmpty)
            try journal.close()
        }
        let journal = try store.open()
        let (navigation, list) = root()
        let report = try manager(journal).restoreState(roots: [navigation])
        #expect(report.diagnostics.isEmpty)
        let editor = try #require(list.presentedViewController as? DraftEditorController)
        #expect(editor.text == "Dear Ana,")
        #expect(editor.presentingViewController === list)
        list.dismiss(animated: true)
        #expect(list.presentedViewController == nil)
        try journal.close()
    }

    @Test func aTableViewControllersSelectionComesBackThroughItsTableView() throws {
        do {
            let journal = try store.open()
            let (navigation, list) = root()
            list.tableView.selectRow(at: IndexPath(row: 4, section: 1), animated: false, scrollPosition: .none)
            try manager(journal).preserveState(roots: [navigation])
            try journal.close()
        }
        let journal = try store.open()
        let (navigation, list) = root()
        try manager(journal).restoreState(roots: [navigation])
        #expect(list.tableView.indexPathForSelectedRow == IndexPath(row: 4, section: 1))
        #expect(list.tableView.reloadCount == 1)
        try journal.close()
    }

    @Test func childrenKnowTheirParentAndNavigationControllerAsInUIKit() {
        let (navigation, list) = root()
        #expect(list.parent === navigation)
        #expect(list.navigationController === navigation)
        let detail = UIViewController(nibName: nil, bundle: nil)
        navigation.pushViewController(detail, animated: true)
        #expect(navigation.viewControllers.firstIndex(of: detail) == 1)
        let embedded = UIViewController(restorationIdentifier: "Preview")
        detail.addChild(embedded)
        #expect(embedded.navigationController === navigation)
        embedded.removeFromParent()
        #expect(embedded.parent == nil && detail.children.isEmpty)
        list.setEditing(true, animated: false)
        #expect(list.isEditing && list.tableView.isEditing)
    }
}

@Suite struct IndexPathTests {
    @Test func rowAndSectionReadUIKitsTwoIndexesAndNeverTrapOnAShorterPath() {
        var path = IndexPath(row: 3, section: 2)
        #expect(path == IndexPath(indexes: [2, 3]) && path.row == 3 && path.item == 3 && path.section == 2)
        path.row = 5
        #expect(path == IndexPath(indexes: [2, 5]))
        let short = IndexPath(index: 7)
        #expect(short.section == 7 && short.row == NSNotFound)
        var empty = IndexPath()
        #expect(empty.section == NSNotFound)
        empty.row = 1
        #expect(empty == IndexPath(indexes: [0, 1]))
    }
}

/// A controller that overrides UIKit's two designated initializers, as storyboard-era code does,
/// and is still made with `init()`.
final class SettingsController: UIViewController {
    var section = "General"

    override init(nibName nibNameOrNil: String?, bundle nibBundleOrNil: Bundle?) {
        super.init(nibName: nibNameOrNil, bundle: nibBundleOrNil)
        restorationIdentifier = "Settings"
    }

    required init?(coder: NSCoder) {
        super.init(coder: coder)
        restorationIdentifier = "Settings"
    }
}

/// An app delegate, main-actor as in UIKit, whose restoration methods reach the main actor through
/// an isolated conformance.
final class KeepsRestorationOpen: UIApplicationDelegate {}

extension KeepsRestorationOpen: @MainActor ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
    func didDecodeRestorableState(_ coder: RestorationCoder) {
        UIApplication.shared.extendStateRestoration()
    }
}

@MainActor @Suite(.serialized) struct ApplicationObjectTests {
    @Test func aSubclassThatOverridesBothDesignatedInitializersInheritsInitAsInUIKit() {
        let settings = SettingsController()
        #expect(settings.restorationIdentifier == "Settings" && settings.nibName == nil)
    }

    @Test func theSharedApplicationForwardsExtendingAndCompletingTheRestorationToTheManager() throws {
        let store = TestStore()
        let delegate = KeepsRestorationOpen()
        UIApplication.shared.delegate = delegate
        #expect(UIApplication.shared.delegate === delegate)
        UIApplication.shared.ignoreSnapshotOnNextApplicationLaunch()
        do {
            let journal = try store.open()
            let manager = RestorationManager(
                journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop")
            )
            manager.delegate = delegate
            try manager.preserveState(roots: [SettingsController()])
            try journal.close()
        }
        let journal = try store.open()
        let manager = makeManager(journal, delegate: delegate)
        UIApplication.restorationManager = manager
        defer { UIApplication.restorationManager = nil }
        try manager.restoreState(roots: [SettingsController()])
        #expect(manager.isRestoring)
        UIApplication.shared.completeStateRestoration()
        #expect(!manager.isRestoring)
        try journal.close()
    }
}

@MainActor @Suite(.serialized) struct DeviceTests {
    @Test func theDevicesIdiomIsTheRestorationManagersAsUIKitNumbersIt() throws {
        #expect(UIApplication.restorationManager == nil)
        #expect(UIDevice.current.userInterfaceIdiom == .unspecified)
        let store = TestStore()
        for (name, idiom) in [("pad", UIUserInterfaceIdiom.pad), ("phone", .phone), ("desktop", .unspecified)] {
            let journal = try store.open()
            let manager = RestorationManager(
                journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: name))
            UIApplication.restorationManager = manager
            #expect(UIDevice.current.userInterfaceIdiom == idiom)
            UIApplication.restorationManager = nil
            try journal.close()
        }
        #expect(!UIDevice.current.systemVersion.isEmpty)
    }
}
