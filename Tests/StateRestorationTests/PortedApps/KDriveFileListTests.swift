// Ported app: the restoration pattern of kDrive (Infomaniak/ios-kDrive): a main tab bar whose file
// tab is a navigation stack of file lists; each list saves the drive and directory ids as integers,
// an optional category filter, scroll offset and selection mode only when set (read back with
// `decodeInteger`, `decodeDouble` and `decodeBool`, whose missing keys are 0 and false), its sort,
// its list/grid mode and the date of its last refresh. Pushed lists are
// re-created by a restoration class that reads the ids from the coder; the tab bar restores the
// selected tab.
//
// Method bodies: 5 of 6 compiled unchanged (the list's restoration class,
// encode and decode, should-save, should-restore). Edited: 1, the list's init
// (`super.init(nibName:bundle:)` became `super.init(restorationIdentifier:)`).
import Foundation
import StateJournal
import StateRestoration
import Testing

extension PortedApps {
    @Suite struct PortedAppKDriveTests {}
}

private final class FileListViewController: RestorableViewController, ControllerRestoration {
    var driveId: Int
    var directoryId: Int
    var categoryId: Int?
    var sortType = "nameAZ"
    var isListMode = true
    var lastRefreshDate: Date?
    var scrollOffset = 0.0
    var isMultipleSelectionEnabled = false

    init(driveId: Int, directoryId: Int) {
        self.driveId = driveId
        self.directoryId = directoryId
        super.init(restorationIdentifier: "FileListViewController-\(directoryId)")
        restorationClass = FileListViewController.self
    }

    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        let driveId = coder.decodeInteger(forKey: "DriveId")
        let directoryId = coder.decodeInteger(forKey: "DirectoryId")
        guard driveId > 0, directoryId > 0 else { return nil }
        return FileListViewController(driveId: driveId, directoryId: directoryId)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(driveId, forKey: "DriveId")
        coder.encode(directoryId, forKey: "DirectoryId")
        if let categoryId = categoryId {
            coder.encode(categoryId, forKey: "CategoryId")
        }
        coder.encode(sortType, forKey: "SortType")
        coder.encode(isListMode, forKey: "ListMode")
        coder.encode(lastRefreshDate, forKey: "LastRefreshDate")
        if scrollOffset > 0 {
            coder.encode(scrollOffset, forKey: "ScrollOffset")
        }
        if isMultipleSelectionEnabled {
            coder.encode(true, forKey: "MultipleSelection")
        }
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        let categoryId = coder.decodeInteger(forKey: "CategoryId")
        self.categoryId = categoryId > 0 ? categoryId : nil
        sortType = coder.decodeObject(forKey: "SortType") as? String ?? "nameAZ"
        isListMode = coder.decodeBool(forKey: "ListMode")
        lastRefreshDate = coder.decodeObject(forKey: "LastRefreshDate") as? Date
        scrollOffset = coder.decodeDouble(forKey: "ScrollOffset")
        isMultipleSelectionEnabled = coder.decodeBool(forKey: "MultipleSelection")
    }
}

private final class MenuViewController: RestorableViewController {}

private final class KDriveAppDelegate: ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }

    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }
}

private struct KDriveProcess {
    let journal: Journal
    let manager: RestorationManager
    let delegate = KDriveAppDelegate()

    init(_ store: TestStore) throws {
        journal = try Journal.open(at: store.url)
        manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "4.4.1", interfaceIdiom: "pad"))
        manager.delegate = delegate
        manager.register(restorationClass: FileListViewController.self)
    }

    /// The tab bar `MainTabViewController` builds: each tab's navigation with its root.
    static func mainTabViewController() -> (RestorableTabBarController, FileListViewController) {
        let tabs = RestorableTabBarController(restorationIdentifier: "MainTabViewController")
        let home = RestorableNavigationController(restorationIdentifier: "HomeNavigation")
        home.viewControllers = [RestorableViewController(restorationIdentifier: "HomeViewController")]
        let files = RestorableNavigationController(restorationIdentifier: "FilesNavigation")
        let root = FileListViewController(driveId: 140_946, directoryId: 1)
        files.viewControllers = [root]
        let menu = RestorableNavigationController(restorationIdentifier: "MenuNavigation")
        menu.viewControllers = [MenuViewController(restorationIdentifier: "MenuViewController")]
        tabs.viewControllers = [home, files, menu]
        return (tabs, root)
    }
}

extension PortedApps.PortedAppKDriveTests {
    @Test func theSelectedTabTheFolderStackAndEachListsFiltersComeBack() throws {
        let store = TestStore()
        let refreshed = Date(timeIntervalSince1970: 1_764_000_000.25)
        do {
            let process = try KDriveProcess(store)
            let (tabs, root) = KDriveProcess.mainTabViewController()
            root.sortType = "newer"
            root.isListMode = false
            root.lastRefreshDate = refreshed
            root.scrollOffset = 420.5
            root.isMultipleSelectionEnabled = true
            let photos = FileListViewController(driveId: 140_946, directoryId: 5_021)
            photos.categoryId = 17
            photos.lastRefreshDate = refreshed.addingTimeInterval(60)
            let holidays = FileListViewController(driveId: 140_946, directoryId: 5_310)
            (tabs.viewControllers[1] as? RestorableNavigationController)?.viewControllers = [root, photos, holidays]
            tabs.selectedIndex = 1
            try process.manager.preserveState(roots: [tabs])
            try process.journal.close()
        }

        let process = try KDriveProcess(store)
        // The files tab's root list has a restoration class, so, as in UIKit, the class re-creates it
        // rather than the one the tab bar was built with.
        let (tabs, _) = KDriveProcess.mainTabViewController()
        let report = try process.manager.restoreState(roots: [tabs])

        #expect(report.diagnostics.isEmpty)
        #expect(tabs.selectedIndex == 1)
        #expect(tabs.selectedViewController?.restorationIdentifier == "FilesNavigation")
        let files = tabs.viewControllers[1] as? RestorableNavigationController
        let lists = files?.viewControllers.compactMap { $0 as? FileListViewController } ?? []
        #expect(lists.map(\.directoryId) == [1, 5_021, 5_310])
        #expect(lists.map(\.driveId) == [140_946, 140_946, 140_946])
        #expect(lists.map(\.categoryId) == [nil, 17, nil])
        #expect(lists.map(\.sortType) == ["newer", "nameAZ", "nameAZ"])
        #expect(lists.map(\.isListMode) == [false, true, true])
        #expect(lists.map(\.lastRefreshDate) == [refreshed, refreshed.addingTimeInterval(60), nil])
        #expect(lists.map(\.scrollOffset) == [420.5, 0, 0])
        #expect(lists.map(\.isMultipleSelectionEnabled) == [true, false, false])
    }
}
