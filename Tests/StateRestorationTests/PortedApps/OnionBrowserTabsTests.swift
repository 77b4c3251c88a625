// Ported app: the restoration pattern of OnionBrowser (OnionBrowser/OnionBrowser): the browsing
// controller saves its open tabs as an array of dictionaries (each tab's URL and title) and the
// current tab's index as an `NSNumber`; it re-creates the tabs in `decodeRestorableState(with:)` and
// switches to the saved tab in `applicationFinishedRestoringState()`.
//
// Method bodies: 5 of 5 compiled unchanged (encode, decode,
// `applicationFinishedRestoringState()`, should-save, should-restore), and each tab's URL comes back
// as a `URL` from inside its dictionary, as `NSKeyedUnarchiver` gives it.
import Foundation
import StateJournal
import StateRestoration
import Testing

extension PortedApps {
    @Suite struct PortedAppOnionBrowserTests {}
}

private final class WebViewTab {
    let url: URL?
    let title: String

    init(url: URL?, title: String) {
        self.url = url
        self.title = title
    }
}

private final class BrowsingViewController: RestorableViewController {
    var tabs: [WebViewTab] = []
    var currentTabIndex = 0
    var currentTab: WebViewTab?

    func addNewTab(_ url: URL?, title: String) {
        tabs.append(WebViewTab(url: url, title: title))
    }

    func switchToTab(_ index: Int) {
        guard index >= 0, index < tabs.count else { return }
        currentTabIndex = index
        currentTab = tabs[index]
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        let allTabs = tabs.map { tab -> [String: Any] in
            var params: [String: Any] = ["title": tab.title]
            params["url"] = tab.url
            return params
        }
        coder.encode(allTabs, forKey: "webViewTabs")
        coder.encode(NSNumber(value: currentTabIndex), forKey: "curTabIndex")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        let allTabs = coder.decodeObject(forKey: "webViewTabs") as? [[String: Any]] ?? []
        for params in allTabs {
            addNewTab(params["url"] as? URL, title: params["title"] as? String ?? "")
        }
        currentTabIndex = (coder.decodeObject(forKey: "curTabIndex") as? NSNumber)?.intValue ?? 0
    }

    override func applicationFinishedRestoringState() {
        super.applicationFinishedRestoringState()
        switchToTab(currentTabIndex)
    }
}

private final class OnionBrowserAppDelegate: ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }

    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }
}

extension PortedApps.PortedAppOnionBrowserTests {
    private static func open(_ store: TestStore) throws -> (Journal, RestorationManager) {
        let journal = try Journal.open(at: store.url)
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "3.0.1", interfaceIdiom: "phone"))
        return (journal, manager)
    }

    @Test func theOpenTabsTheirURLsAndTheSelectedTabComeBack() throws {
        let store = TestStore()
        let check = URL(string: "https://check.torproject.org/")!
        let duck = URL(string: "https://duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion/?q=tor")!
        do {
            let (journal, manager) = try Self.open(store)
            let delegate = OnionBrowserAppDelegate()
            manager.delegate = delegate
            let browsing = BrowsingViewController(restorationIdentifier: "BrowsingViewController")
            browsing.addNewTab(check, title: "Check Tor")
            browsing.addNewTab(duck, title: "DuckDuckGo")
            browsing.addNewTab(nil, title: "New Tab")
            browsing.switchToTab(1)
            try manager.preserveState(roots: [browsing])
            withExtendedLifetime(delegate) {}
            try journal.close()
        }

        let (journal, manager) = try Self.open(store)
        let delegate = OnionBrowserAppDelegate()
        manager.delegate = delegate
        let browsing = BrowsingViewController(restorationIdentifier: "BrowsingViewController")
        let report = try manager.restoreState(roots: [browsing])
        withExtendedLifetime(delegate) {}

        #expect(report.diagnostics.isEmpty)
        #expect(browsing.tabs.map(\.title) == ["Check Tor", "DuckDuckGo", "New Tab"])
        #expect(browsing.currentTabIndex == 1)
        #expect(browsing.currentTab?.title == "DuckDuckGo")
        #expect(browsing.tabs.map(\.url) == [check, duck, nil])
        #expect(browsing.currentTab?.url == duck)
        try journal.close()
    }
}
