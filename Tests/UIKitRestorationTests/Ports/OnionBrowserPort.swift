// Port of the state restoration code of Onion Browser, a Tor browser for iOS.
// Source: https://github.com/OnionBrowser/OnionBrowser @ 44edf9a8455e5a0dd271debbfacec4e3cc273b1f
//   OnionBrowser/Browsing/BrowsingViewController.swift (encode/decodeRestorableState: the open tabs)
//   OnionBrowser/Helpers/URL+Helpers.swift (URL.clean, what the tabs' URLs are saved as)
//   OnionBrowser/SceneDelegate.swift (the root controller's restoration identifier)
// The NSUserActivity variants (scene restoration) are left out: they do not go through a coder.
// Tabs (web views) are replaced by the small stand-in at the bottom of the file.
import Foundation
import StateJournal
import Testing
import UIKitRestoration

// MARK: - OnionBrowser/Browsing/BrowsingViewController.swift

class BrowsingViewController: UIViewController, TabDelegate {

    @objc
    enum Transition: Int {
        case `default`
        case notAnimated
        case inBackground
    }

    var tabs = [Tab]()

    private var currentTabIndex = -1

    weak var currentTab: Tab? {
        get {
            return currentTabIndex < 0 || currentTabIndex >= tabs.count ? tabs.last : tabs[currentTabIndex]
        }
        set {
            if let tab = newValue {
                currentTabIndex = tabs.firstIndex(of: tab) ?? -1
            } else {
                currentTabIndex = -1
            }
        }
    }

    var chromeUpdates = 0

    init() {
        var nib = String(describing: type(of: self))

        if UIDevice.current.userInterfaceIdiom == .pad {
            nib += "-iPad"
        }

        super.init(nibName: nib, bundle: Bundle(for: type(of: self)))
    }

    required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)

        coder.encode(tabs.map({ $0.url.clean }), forKey: "webViewTabs")
        coder.encode(NSNumber(value: currentTabIndex), forKey: "curTabIndex")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)

        // PORT EDIT: the saved list holds NSNull for the start page's nil (URL.clean), as NSKeyedArchiver
        // saves it; on Darwin `as? [URL?]` maps NSNull to nil (SE-0140), on Linux the whole cast fails and
        // every tab is lost. The app's line was:
        //     var urls = coder.decodeObject(forKey: "webViewTabs") as? [URL?]
        var urls = (coder.decodeObject(forKey: "webViewTabs") as? [Any])?.map { $0 as? URL }

        // Legacy support.
        if urls == nil {
            urls = (coder.decodeObject(forKey: "webViewTabs") as? [[String: Any]])?
                .map { $0["url"] as? URL }
        }

        decodeRestorableState(
            urls,
            coder.decodeObject(forKey: "curTabIndex") as? NSNumber)
    }

    func decodeRestorableState(_ urls: [URL?]?, _ currentTabIndex: NSNumber?) {
        for url in urls ?? [] {
            addNewTab(url, transition: .notAnimated)
        }

        if let currentTabIndex = currentTabIndex {
            self.currentTabIndex = currentTabIndex.intValue
        }

        for tab in tabs {
            tab.isHidden = tab != currentTab
            tab.isUserInteractionEnabled = true
        }

        currentTab?.refresh()

        updateChrome()
    }

    @discardableResult
    func addNewTab(
        _ url: URL? = nil,
        transition: Transition = .default,
        completion: ((Bool) -> Void)? = nil
    ) -> Tab? {
        let tab = Tab(restorationId: url?.absoluteString)

        tab.load(url)

        tab.tabDelegate = self

        tabs.append(tab)

        return tab
    }

    func updateChrome() {
        chromeUpdates += 1
    }

    var currentTabIndexForTesting: Int {
        get { currentTabIndex }
        set { currentTabIndex = newValue }
    }
}

// MARK: - OnionBrowser/SceneDelegate.swift (show(_:completion:)), reduced

@MainActor
final class OnionBrowserWindow {
    var rootViewController: UIViewController?

    func show(_ viewController: UIViewController?) {
        if viewController?.restorationIdentifier == nil {
            viewController?.restorationIdentifier = String(describing: type(of: viewController))
        }

        rootViewController = viewController
    }
}

// MARK: - OnionBrowser/Helpers/URL+Helpers.swift

extension URL {

    static let start = URL(string: "about:blank")!

    // The app's is Bundle.main.url(forResource: "credits", withExtension: "html")!, a file this test bundle lacks.
    static let credits = URL(string: "file:///OnionBrowser.app/credits.html")!

    static let aboutOnionBrowser = URL(string: "about:onion-browser")!

    static let securityLevels = URL(string: "about:security-levels-internal")!

    static let aboutSecurityLevels = URL(string: "about:security-levels")!

    var clean: URL? {
        switch self {
        case URL.credits:
            return URL.aboutOnionBrowser

        case URL.securityLevels:
            return URL.aboutSecurityLevels

        case URL.start:
            return nil

        default:
            return self
        }
    }
}

// MARK: - Stand-in for OnionBrowser/Browsing/Tab.swift (a UIView holding a WKWebView)

protocol TabDelegate: AnyObject {}

final class Tab: NSObject {
    let restorationId: String?
    weak var tabDelegate: TabDelegate?
    var url = URL.start
    var isHidden = false
    var isUserInteractionEnabled = false
    var refreshes = 0

    init(restorationId: String?) {
        self.restorationId = restorationId
    }

    func load(_ url: URL?) {
        self.url = url ?? URL.start
    }

    func refresh() {
        refreshes += 1
    }
}

// MARK: - Tests

@MainActor @Suite(.serialized) struct OnionBrowserPortTests {
    private func launch(_ store: TestStore, delegate: AlwaysRestore) throws -> (Journal, RestorationManager) {
        let journal = try store.open()
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "3.1.0", interfaceIdiom: "phone"))
        manager.delegate = delegate
        return (journal, manager)
    }

    @Test func theOpenTabsComeBackInOrderWithTheCurrentTabSelected() throws {
        let store = TestStore()
        let delegate = AlwaysRestore()
        do {
            let (journal, manager) = try launch(store, delegate: delegate)
            let window = OnionBrowserWindow()
            let browsing = BrowsingViewController()
            window.show(browsing)
            browsing.addNewTab(URL(string: "https://duckduckgo.com/?q=tor"))
            browsing.addNewTab(URL.start)
            browsing.addNewTab(URL(string: "http://2gzyxa5ihm7nsggfxnu52rck2vv4rvmdlkiu3zzui5du4xyclen53wid.onion/"))
            browsing.currentTabIndexForTesting = 2
            let report = try manager.preserveState(roots: [browsing])
            #expect(report.problems.isEmpty)
            try journal.close()
        }

        let (journal, manager) = try launch(store, delegate: delegate)
        let window = OnionBrowserWindow()
        let browsing = BrowsingViewController()
        window.show(browsing)
        let report = try manager.restoreState(roots: [browsing])
        #expect(report.diagnostics.isEmpty)
        // The start page is saved as nil (URL.clean), and comes back as a new blank tab.
        #expect(
            browsing.tabs.map(\.url) == [
                URL(string: "https://duckduckgo.com/?q=tor")!,
                URL.start,
                URL(string: "http://2gzyxa5ihm7nsggfxnu52rck2vv4rvmdlkiu3zzui5du4xyclen53wid.onion/")!,
            ])
        #expect(browsing.currentTab === browsing.tabs.last)
        #expect(browsing.tabs.map(\.isHidden) == [true, true, false])
        #expect(browsing.tabs.last?.refreshes == 1)
        #expect(browsing.chromeUpdates == 1)
        try journal.close()
    }

    @Test func theAppsOwnCastOfTheSavedTabListFindsNothingWhenATabWasTheStartPage() throws {
        let store = TestStore()
        let delegate = AlwaysRestore()
        do {
            let (journal, manager) = try launch(store, delegate: delegate)
            let browsing = BrowsingViewController()
            browsing.restorationIdentifier = "BrowsingViewController"
            browsing.addNewTab(URL(string: "https://duckduckgo.com/"))
            browsing.addNewTab(URL.start)
            try manager.preserveState(roots: [browsing])
            try journal.close()
        }
        let (journal, manager) = try launch(store, delegate: delegate)
        let probe = OnionBrowserCastProbe()
        probe.restorationIdentifier = "BrowsingViewController"
        try manager.restoreState(roots: [probe])
        #expect(probe.saved?.count == 2)
        // The package gives back the list as NSKeyedUnarchiver does, [NSURL, NSNull], as UIKit's coder does;
        // the app's `as? [URL?]` succeeds on Darwin (NSNull bridges to nil) and fails on Linux (Swift's
        // bridging, not the package), so the app as written would restore no tab at all, silently: hence
        // the PORT EDIT in decodeRestorableState(with:).
        #expect(probe.saved?.last is NSNull)
        #expect(probe.saved as? [URL?] == nil)
        try journal.close()
    }
}

/// Reads the tab list as BrowsingViewController saved it, without interpreting it (a subclass, so that
/// the saved state, whose type is BrowsingViewController, is decoded into it).
final class OnionBrowserCastProbe: BrowsingViewController {
    var saved: [Any]?
    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        saved = coder.decodeObject(forKey: "webViewTabs") as? [Any]
    }
}
