// Ported app: the restoration pattern of Awful (Awful/Awful.app): the forums, threads and posts
// pages pushed on a navigation stack; each pushed page has a restoration class that reads the forum
// or thread key from the coder and re-creates the page, which then restores its page number, its
// hidden posts and its scroll position (`decodeInteger`, `decodeDouble`, `containsValue(forKey:)`).
// The app delegate writes an interface version of its own and refuses state from another interface
// version, another bundle version or another idiom (UIKit's archive keys).
//
// Method bodies: 11 of 14 compiled unchanged (every encode, decode and
// restoration class, `applicationFinishedRestoringState()`, should-save and will-encode). Edited: 3,
// the two pages' inits (`super.init(nibName:bundle:)` became `super.init(restorationIdentifier:)`)
// and should-restore, which compared with `UIDevice.current.userInterfaceIdiom.rawValue` and the
// Info.plist's `CFBundleVersion` (neither exists on Linux: the delegate is given them, the idiom
// from `ArchiveKey.userInterfaceIdiomNumber(for:)`) and spelled the keys
// `UIApplication.stateRestoration…Key` (here the `UIApplicationStateRestoration…Key` constants).
import Foundation
import StateJournal
import StateRestoration
import Testing

extension PortedApps {
    @Suite struct PortedAppAwfulTests {}
}

private let interfaceVersionKey = "AwfulInterfaceVersion"
private let currentInterfaceVersion = 2

private final class ForumsTableViewController: RestorableViewController {
    var expandedCategories: [String] = []

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(expandedCategories, forKey: "AwfulExpandedCategories")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        expandedCategories = coder.decodeObject(forKey: "AwfulExpandedCategories") as? [String] ?? []
    }
}

private final class ThreadsTableViewController: RestorableViewController, ControllerRestoration {
    let forumID: String
    var filterThreadTag: String?

    init(forumID: String) {
        self.forumID = forumID
        super.init(restorationIdentifier: "Threads table view")
        restorationClass = ThreadsTableViewController.self
    }

    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        guard let forumID = coder.decodeObject(forKey: "ForumKey") as? String else { return nil }
        let threadsVC = ThreadsTableViewController(forumID: forumID)
        threadsVC.restorationIdentifier = identifierComponents.last
        return threadsVC
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(forumID, forKey: "ForumKey")
        coder.encode(filterThreadTag, forKey: "FilterThreadTag")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        filterThreadTag = coder.decodeObject(forKey: "FilterThreadTag") as? String
    }
}

private final class PostsPageViewController: RestorableViewController, ControllerRestoration {
    let threadID: String
    var page = 0
    var hiddenPosts = 0
    var authorID: String?
    var scrollToFractionAfterLoading: Double?
    var didRestore = false

    init(threadID: String, authorID: String? = nil) {
        self.threadID = threadID
        self.authorID = authorID
        super.init(restorationIdentifier: "Posts")
        restorationClass = PostsPageViewController.self
    }

    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        guard let threadKey = coder.decodeObject(forKey: "ThreadKey") as? String else { return nil }
        let authorKey = coder.decodeObject(forKey: "AuthorUserKey") as? String
        let postsVC = PostsPageViewController(threadID: threadKey, authorID: authorKey)
        postsVC.restorationIdentifier = identifierComponents.last
        return postsVC
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(threadID, forKey: "ThreadKey")
        coder.encode(authorID, forKey: "AuthorUserKey")
        coder.encode(page, forKey: "AwfulCurrentPage")
        coder.encode(hiddenPosts, forKey: "AwfulHiddenPosts")
        if let fraction = scrollToFractionAfterLoading {
            coder.encode(fraction, forKey: "AwfulScrolledFractionOfContent")
        }
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        page = coder.decodeInteger(forKey: "AwfulCurrentPage")
        hiddenPosts = coder.decodeInteger(forKey: "AwfulHiddenPosts")
        if coder.containsValue(forKey: "AwfulScrolledFractionOfContent") {
            scrollToFractionAfterLoading = coder.decodeDouble(forKey: "AwfulScrolledFractionOfContent")
        }
    }

    override func applicationFinishedRestoringState() {
        super.applicationFinishedRestoringState()
        didRestore = true
    }
}

private final class AwfulAppDelegate: ApplicationRestorationDelegate {
    let currentBundleVersion: String
    let currentIdiom: Int

    init(bundleVersion: String, idiom: Int) {
        currentBundleVersion = bundleVersion
        currentIdiom = idiom
    }

    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }

    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool {
        let userInterfaceIdiom = coder.decodeObject(forKey: UIApplicationStateRestorationUserInterfaceIdiomKey) as? Int
        guard userInterfaceIdiom == currentIdiom else { return false }
        let bundleVersion = coder.decodeObject(forKey: UIApplicationStateRestorationBundleVersionKey) as? String
        guard bundleVersion == currentBundleVersion else { return false }
        return coder.decodeInteger(forKey: interfaceVersionKey) == currentInterfaceVersion
    }

    func willEncodeRestorableState(_ coder: RestorationCoder) {
        coder.encode(currentInterfaceVersion, forKey: interfaceVersionKey)
    }
}

/// One process of the app. A killed process's lock goes with it; in one test process the journal
/// must be closed, since a dropped journal keeps the store locked (`storeLocked` on reopening).
private struct AwfulProcess {
    let journal: Journal
    let manager: RestorationManager
    let delegate: AwfulAppDelegate

    init(_ store: TestStore, bundleVersion: String = "7.3", idiom: String = "phone") throws {
        journal = try Journal.open(at: store.url)
        manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(bundleVersion: bundleVersion, interfaceIdiom: idiom))
        delegate = AwfulAppDelegate(
            bundleVersion: bundleVersion, idiom: ArchiveKey.userInterfaceIdiomNumber(for: idiom))
        manager.delegate = delegate
        manager.register(restorationClass: ThreadsTableViewController.self)
        manager.register(restorationClass: PostsPageViewController.self)
    }

    /// The root the app delegate builds at launch, before restoration.
    static func rootViewController() -> (RestorableNavigationController, ForumsTableViewController) {
        let navigation = RestorableNavigationController(restorationIdentifier: "Forums navigation")
        let forums = ForumsTableViewController(restorationIdentifier: "Forum table")
        navigation.viewControllers = [forums]
        return (navigation, forums)
    }
}

extension PortedApps.PortedAppAwfulTests {
    /// Saves a reading session: a forum's threads, a thread on page 4 filtered to one author.
    private static func readThread(in store: TestStore, scrolled: Double?) throws {
        let process = try AwfulProcess(store)
        let (navigation, forums) = AwfulProcess.rootViewController()
        forums.expandedCategories = ["Main", "Discussion"]
        let threads = ThreadsTableViewController(forumID: "273")
        threads.filterThreadTag = "tag-42"
        let posts = PostsPageViewController(threadID: "3912345", authorID: "8675309")
        posts.page = 4
        posts.hiddenPosts = 12
        posts.scrollToFractionAfterLoading = scrolled
        navigation.viewControllers = [forums, threads, posts]
        try process.manager.preserveState(roots: [navigation])
        try process.journal.close()
    }

    @Test func theThreadPageAuthorAndScrollPositionComeBackOnTopOfTheForumStack() throws {
        let store = TestStore()
        try Self.readThread(in: store, scrolled: 0.625)

        let process = try AwfulProcess(store)
        let (navigation, forums) = AwfulProcess.rootViewController()
        let report = try process.manager.restoreState(roots: [navigation])

        #expect(report.diagnostics.isEmpty)
        #expect(
            navigation.viewControllers.map(\.restorationIdentifier) == ["Forum table", "Threads table view", "Posts"])
        #expect(navigation.viewControllers.first === forums)
        #expect(forums.expandedCategories == ["Main", "Discussion"])
        let threads = navigation.viewControllers.dropFirst().first as? ThreadsTableViewController
        #expect(threads?.forumID == "273")
        #expect(threads?.filterThreadTag == "tag-42")
        let posts = navigation.topViewController as? PostsPageViewController
        #expect(posts?.threadID == "3912345")
        #expect(posts?.authorID == "8675309")
        #expect(posts?.page == 4)
        #expect(posts?.hiddenPosts == 12)
        #expect(posts?.scrollToFractionAfterLoading == 0.625)
        #expect(posts?.didRestore == true)
    }

    @Test func aPageSavedBeforeItScrolledRestoresWithoutAScrollFraction() throws {
        let store = TestStore()
        try Self.readThread(in: store, scrolled: nil)

        let process = try AwfulProcess(store)
        let (navigation, _) = AwfulProcess.rootViewController()
        _ = try process.manager.restoreState(roots: [navigation])

        let posts = navigation.topViewController as? PostsPageViewController
        #expect(posts?.page == 4)
        #expect(posts?.scrollToFractionAfterLoading == nil)
    }

    @Test func stateSavedByAnotherBundleVersionOrIdiomIsRefused() throws {
        for (bundleVersion, idiom) in [("7.4", "phone"), ("7.3", "pad")] {
            let store = TestStore()
            try Self.readThread(in: store, scrolled: 0.5)

            let process = try AwfulProcess(store, bundleVersion: bundleVersion, idiom: idiom)
            let (navigation, forums) = AwfulProcess.rootViewController()
            _ = try process.manager.restoreState(roots: [navigation])

            #expect(navigation.viewControllers.count == 1, "\(bundleVersion) \(idiom)")
            #expect(forums.expandedCategories.isEmpty, "\(bundleVersion) \(idiom)")
        }
    }
}
