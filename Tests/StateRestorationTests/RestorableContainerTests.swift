import Foundation
import StateJournal
import StateRestoration
import Testing

/// Containers restore their children by themselves, in order, with the selection, as UIKit's
/// navigation, tab bar and split view controllers do.
@Suite struct RestorableContainerTests {
    final class PageController: RestorableViewController {
        var page = 0

        override func encodeRestorableState(with coder: NSCoder) {
            super.encodeRestorableState(with: coder)
            coder.encode(page, forKey: "page")
        }

        override func decodeRestorableState(with coder: NSCoder) {
            super.decodeRestorableState(with: coder)
            page = coder.decodeInteger(forKey: "page")
        }
    }

    /// Re-creates pages as a restoration class does, except the one it declines.
    enum PageRestoration: ControllerRestoration {
        static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
            -> (any RestorableController)?
        {
            guard let identifier = identifierComponents.last, identifier != "Declined" else { return nil }
            let page = PageController(restorationIdentifier: identifier)
            page.restorationClass = PageRestoration.self
            return page
        }
    }

    static func page(_ identifier: String, _ number: Int) -> PageController {
        let page = PageController(restorationIdentifier: identifier)
        page.page = number
        page.restorationClass = PageRestoration.self
        return page
    }

    /// Saves `root` (built by `make`), then restores into the empty container `fresh` returns.
    func roundTrip<C: RestorableViewController>(_ make: () -> C, fresh: () -> C) throws -> (C, RestorationReport) {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            manager.register(restorationClass: PageRestoration.self)
            try manager.preserveState(roots: [make()])
            withExtendedLifetime(delegate) {}
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        manager.register(restorationClass: PageRestoration.self)
        let root = fresh()
        let report = try manager.restoreState(roots: [root])
        return (root, report)
    }

    @Test func aNavigationStackIsRestoredAndReattachedInOrder() throws {
        let (navigation, report): (RestorableNavigationController, RestorationReport) = try roundTrip(
            {
                let navigation = RestorableNavigationController(restorationIdentifier: "Nav")
                navigation.viewControllers = [Self.page("Inbox", 1), Self.page("Thread", 2), Self.page("Message", 3)]
                return navigation
            }, fresh: { RestorableNavigationController(restorationIdentifier: "Nav") })
        let pages = navigation.viewControllers.compactMap { $0 as? PageController }
        #expect(pages.map(\.restorationIdentifier) == ["Inbox", "Thread", "Message"])
        #expect(pages.map(\.page) == [1, 2, 3])
        #expect((navigation.topViewController as? PageController)?.page == 3)
        #expect(
            !report.diagnostics.contains { if case .restoredControllerOutsideHierarchy = $0 { true } else { false } })
    }

    @Test func aChildWhoseRestorationClassDeclinesIsLeftOutOfTheStack() throws {
        let (navigation, _): (RestorableNavigationController, RestorationReport) = try roundTrip(
            {
                let navigation = RestorableNavigationController(restorationIdentifier: "Nav")
                navigation.viewControllers = [Self.page("Inbox", 1), Self.page("Declined", 2), Self.page("Message", 3)]
                return navigation
            }, fresh: { RestorableNavigationController(restorationIdentifier: "Nav") })
        #expect(navigation.viewControllers.map(\.restorationIdentifier) == ["Inbox", "Message"])
    }

    @Test func aTabBarRestoresItsTabsAndItsSelection() throws {
        let (tabs, _): (RestorableTabBarController, RestorationReport) = try roundTrip(
            {
                let tabs = RestorableTabBarController(restorationIdentifier: "Tabs")
                tabs.viewControllers = [Self.page("Mail", 1), Self.page("Contacts", 2), Self.page("Settings", 3)]
                tabs.selectedIndex = 2
                return tabs
            }, fresh: { RestorableTabBarController(restorationIdentifier: "Tabs") })
        #expect(tabs.viewControllers.map(\.restorationIdentifier) == ["Mail", "Contacts", "Settings"])
        #expect(tabs.selectedIndex == 2)
        #expect((tabs.selectedViewController as? PageController)?.page == 3)
    }

    @Test func aSplitViewRestoresItsColumnsPrimaryFirst() throws {
        let (split, _): (RestorableSplitViewController, RestorationReport) = try roundTrip(
            {
                let split = RestorableSplitViewController(restorationIdentifier: "Split")
                let primary = RestorableNavigationController(restorationIdentifier: "Primary")
                primary.viewControllers = [Self.page("Folders", 1)]
                split.viewControllers = [primary, Self.page("Detail", 2)]
                return split
            },
            fresh: {
                let split = RestorableSplitViewController(restorationIdentifier: "Split")
                split.viewControllers = [RestorableNavigationController(restorationIdentifier: "Primary")]
                return split
            })
        #expect(split.viewControllers.map(\.restorationIdentifier) == ["Primary", "Detail"])
        let primary = split.viewControllers.first as? RestorableNavigationController
        #expect((primary?.viewControllers.first as? PageController)?.page == 1)
        #expect((split.viewControllers.last as? PageController)?.page == 2)
    }
}
