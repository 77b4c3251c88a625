// Ported app: the restoration pattern of SWRevealViewController (John-Lluch/SWRevealViewController),
// the reveal container of many iOS apps: it encodes its reveal width and front view position and
// references to its rear, front and right controllers, and in `decodeRestorableState(with:)` sets
// them again as its children; the controllers come from the storyboard by identifier. The front
// article refers to the rear menu with `encodeConditionalObject`, and to a share sheet the user
// dismissed (never saved) the same way.
//
// Method bodies: 10 of 10 compiled unchanged (the container's, the menu's
// and the article's encode and decode, the container's and the article's
// `applicationFinishedRestoringState()`, should-save, should-restore). Not counted: the container's
// setters, which set `children` where UIKit's add and remove child view controllers.
import Foundation
import StateJournal
import StateRestoration
import Testing

extension PortedApps {
    @Suite struct PortedAppSWRevealTests {}
}

private enum FrontViewPosition: Int {
    case leftSideMostRemoved
    case leftSideMost
    case leftSide
    case left
    case right
    case rightMost
    case rightMostRemoved
}

private final class SWRevealViewController: RestorableViewController {
    var rearViewRevealWidth = 260.0
    var rearViewRevealOverdraw = 60.0
    var frontViewPosition = FrontViewPosition.left
    var frontViewShadowOpacity = 1.0
    var bounceBackOnOverdraw = true
    private(set) var rearViewController: RestorableViewController?
    private(set) var frontViewController: RestorableViewController?
    private(set) var rightViewController: RestorableViewController?

    func setRearViewController(_ controller: RestorableViewController?) {
        rearViewController = controller
        children = [rearViewController, frontViewController, rightViewController].compactMap { $0 }
    }

    func setFrontViewController(_ controller: RestorableViewController?) {
        frontViewController = controller
        children = [rearViewController, frontViewController, rightViewController].compactMap { $0 }
    }

    func setRightViewController(_ controller: RestorableViewController?) {
        rightViewController = controller
        children = [rearViewController, frontViewController, rightViewController].compactMap { $0 }
    }

    override func encodeRestorableState(with coder: NSCoder) {
        coder.encode(rearViewRevealWidth, forKey: "_rearViewRevealWidth")
        coder.encode(rearViewRevealOverdraw, forKey: "_rearViewRevealOverdraw")
        coder.encode(frontViewShadowOpacity, forKey: "_frontViewShadowOpacity")
        coder.encode(bounceBackOnOverdraw, forKey: "_bounceBackOnOverdraw")
        coder.encode(frontViewPosition.rawValue, forKey: "_frontViewPosition")
        coder.encode(rearViewController, forKey: "_rearViewController")
        coder.encode(frontViewController, forKey: "_frontViewController")
        coder.encode(rightViewController, forKey: "_rightViewController")
        super.encodeRestorableState(with: coder)
    }

    override func decodeRestorableState(with coder: NSCoder) {
        rearViewRevealWidth = coder.decodeDouble(forKey: "_rearViewRevealWidth")
        rearViewRevealOverdraw = coder.decodeDouble(forKey: "_rearViewRevealOverdraw")
        frontViewShadowOpacity = coder.decodeDouble(forKey: "_frontViewShadowOpacity")
        bounceBackOnOverdraw = coder.decodeBool(forKey: "_bounceBackOnOverdraw")
        setRearViewController(coder.decodeObject(forKey: "_rearViewController") as? RestorableViewController)
        setFrontViewController(coder.decodeObject(forKey: "_frontViewController") as? RestorableViewController)
        setRightViewController(coder.decodeObject(forKey: "_rightViewController") as? RestorableViewController)
        frontViewPosition = FrontViewPosition(rawValue: coder.decodeInteger(forKey: "_frontViewPosition")) ?? .left
        super.decodeRestorableState(with: coder)
    }

    override func applicationFinishedRestoringState() {
        // Nothing to do at this stage.
    }
}

private final class MenuViewController: RestorableViewController {
    var selectedRow = 0

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(selectedRow, forKey: "selectedRow")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        selectedRow = coder.decodeInteger(forKey: "selectedRow")
    }
}

private final class ArticleViewController: RestorableViewController {
    var articleURL: URL?
    var menu: MenuViewController?
    var shareSheet: RestorableViewController?
    var restoredMenuRow: Int?

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(articleURL, forKey: "articleURL")
        coder.encodeConditionalObject(menu, forKey: "menu")
        coder.encodeConditionalObject(shareSheet, forKey: "shareSheet")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        articleURL = coder.decodeObject(of: NSURL.self, forKey: "articleURL") as URL?
        menu = coder.decodeObject(forKey: "menu") as? MenuViewController
        shareSheet = coder.decodeObject(forKey: "shareSheet") as? RestorableViewController
    }

    override func applicationFinishedRestoringState() {
        super.applicationFinishedRestoringState()
        restoredMenuRow = menu?.selectedRow
    }
}

private final class RevealAppDelegate: ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }

    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }
}

private struct RevealProcess {
    let journal: Journal
    let manager: RestorationManager
    let delegate = RevealAppDelegate()

    init(_ store: TestStore) throws {
        journal = try Journal.open(at: store.url)
        manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "2.3", interfaceIdiom: "phone"))
        manager.delegate = delegate
        // The storyboard's scenes, by storyboard identifier.
        manager.registerController(forRestorationIdentifier: "MenuViewController") {
            MenuViewController(restorationIdentifier: "MenuViewController")
        }
        manager.registerController(forRestorationIdentifier: "FrontNavigationController") {
            RestorableNavigationController(restorationIdentifier: "FrontNavigationController")
        }
        manager.registerController(forRestorationIdentifier: "ArticleViewController") {
            ArticleViewController(restorationIdentifier: "ArticleViewController")
        }
    }
}

extension PortedApps.PortedAppSWRevealTests {
    @Test func theRevealPositionTheRearAndFrontControllersAndTheirStateComeBack() throws {
        let store = TestStore()
        let article = URL(string: "https://example.org/articles/tram-28")!
        do {
            let process = try RevealProcess(store)
            let reveal = SWRevealViewController(restorationIdentifier: "SWRevealViewController")
            let menu = MenuViewController(restorationIdentifier: "MenuViewController")
            menu.selectedRow = 3
            let front = RestorableNavigationController(restorationIdentifier: "FrontNavigationController")
            let articleController = ArticleViewController(restorationIdentifier: "ArticleViewController")
            articleController.articleURL = article
            articleController.menu = menu
            articleController.shareSheet = RestorableViewController(restorationIdentifier: "ShareSheet")
            front.viewControllers = [articleController]
            reveal.setRearViewController(menu)
            reveal.setFrontViewController(front)
            reveal.rearViewRevealWidth = 280.5
            reveal.rearViewRevealOverdraw = 0
            reveal.frontViewShadowOpacity = 0.4
            reveal.bounceBackOnOverdraw = false
            reveal.frontViewPosition = .right
            try process.manager.preserveState(roots: [reveal])
            try process.journal.close()
        }

        let process = try RevealProcess(store)
        let reveal = SWRevealViewController(restorationIdentifier: "SWRevealViewController")
        let report = try process.manager.restoreState(roots: [reveal])

        #expect(report.diagnostics.isEmpty)
        #expect(reveal.rearViewRevealWidth == 280.5)
        #expect(reveal.rearViewRevealOverdraw == 0)
        #expect(reveal.frontViewShadowOpacity == 0.4)
        #expect(reveal.bounceBackOnOverdraw == false)
        #expect(reveal.frontViewPosition == .right)
        #expect(reveal.rightViewController == nil)
        #expect(reveal.children.map(\.restorationIdentifier) == ["MenuViewController", "FrontNavigationController"])
        let menu = reveal.rearViewController as? MenuViewController
        #expect(menu?.selectedRow == 3)
        let front = reveal.frontViewController as? RestorableNavigationController
        let articleController = front?.topViewController as? ArticleViewController
        #expect(front?.viewControllers.count == 1)
        #expect(articleController?.articleURL == article)
        #expect(articleController?.menu === menu)
        #expect(articleController?.restoredMenuRow == 3)
        #expect(articleController?.shareSheet == nil)
    }
}
