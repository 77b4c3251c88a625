// Port of the state restoration code of Awful, the Something Awful forums app for iOS.
// Source: https://github.com/Awful/Awful.app @ c4eb9252773a4df7a5195c0a0ffb9205fa2a66a7 (the parent
// of 403c52721, which removed UIKit state restoration in favour of scene activities)
//   App/View Controllers/Posts/PostsPageViewController.swift (encode/decode, UIViewControllerRestoration)
//   App/Posts/ReplyWorkspace.swift (UIStateRestoring + UIObjectRestoration, registerObject, NSCoding draft)
//   App/Composition/CompositionViewController.swift (UIViewControllerRestoration)
//   AwfulCore/Sources/AwfulCore/Model/AwfulManagedObject.swift, Thread.swift, User.swift (NSCoding keys)
// The restoration members are re-created line by line; Core Data, web views and networking are
// replaced by the small stand-ins at the bottom of the file.
import Foundation
import StateJournal
import Testing
import UIKitRestoration

// MARK: - AwfulCore/Sources/AwfulCore/Model/AwfulManagedObject.swift

/// An object key uniquely identifies an AwfulManagedObject, but (unlike NSManagedObjectID) in an Awful-specific away.
public class AwfulObjectKey: NSObject, NSCoding, NSCopying, @unchecked Sendable {
    let entityName: String
    var keys: [String] {
        fatalError("subclass implementation please")
    }

    init(entityName: String) {
        self.entityName = entityName
    }

    /// Part of the app's NSCoding model, re-created.
    public required init?(coder: NSCoder) {
        entityName = coder.decodeObject(forKey: entityNameKey) as! String
        super.init()
    }

    /// Archives the key (NSCoding).
    public func encode(with coder: NSCoder) {
        coder.encode(entityName, forKey: entityNameKey)
        for key in keys {
            coder.encode(value(forKey: key), forKey: key)
        }
    }

    /// Keys are immutable: a copy is the key itself.
    public func copy(with: NSZone?) -> Any {
        return self
    }

    public override func isEqual(_ object: Any?) -> Bool {
        if let other = object as? AwfulObjectKey {
            if other.entityName != entityName {
                return false
            }
            for key in keys {
                let otherValue = other.value(forKey: key) as! NSObject?
                let value = self.value(forKey: key) as! NSObject?
                if otherValue != nil && value != nil && otherValue != value {
                    return false
                }
            }
            return true
        }
        return false
    }

    // PORT EDIT: Foundation on Linux has no key-value coding (NSObject.value(forKey:)); this reads the
    // subclasses' stored properties by name with Mirror instead.
    func value(forKey key: String) -> Any? {
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror {
            if let child = current.children.first(where: { $0.label == key }) {
                let value = Mirror(reflecting: child.value)
                return value.displayStyle == .optional ? value.children.first?.value : child.value
            }
            mirror = current.superclassMirror
        }
        return nil
    }

    public override var hash: Int {
        var hash = entityName.hash
        if let key = keys.first, let value = self.value(forKey: key) as? AnyHashable {
            hash ^= value.hashValue
        }
        return hash
    }
}

private let entityNameKey = "entityName"

// MARK: - AwfulCore/Sources/AwfulCore/Model/Thread.swift and User.swift

// PORT EDIT: @objc(ThreadKey) and @objc need the Objective-C runtime; the archived name is registered
// with RestorationManager.register(codingName:for:) instead.
/// Identifies a thread across launches (AwfulCore).
public final class ThreadKey: AwfulObjectKey, @unchecked Sendable {
    let threadID: String

    /// Part of the app's NSCoding model, re-created.
    public init(threadID: String) {
        assert(!threadID.isEmpty)
        self.threadID = threadID
        super.init(entityName: AwfulThread.entityName)
    }

    /// Part of the app's NSCoding model, re-created.
    public required init?(coder: NSCoder) {
        threadID = coder.decodeObject(forKey: threadIDKey) as! String
        super.init(coder: coder)
    }

    override var keys: [String] {
        return [threadIDKey]
    }
}
private let threadIDKey = "threadID"

// PORT EDIT: @objc(UserKey) and @objc need the Objective-C runtime; the archived name is registered
// with RestorationManager.register(codingName:for:) instead.
/// Identifies a user across launches (AwfulCore).
public final class UserKey: AwfulObjectKey, @unchecked Sendable {
    let userID: String
    let username: String?

    /// Part of the app's NSCoding model, re-created.
    public init(userID: String, username: String?) {
        precondition(!userID.isEmpty)
        self.userID = userID
        self.username = username
        super.init(entityName: User.entityName)
    }

    /// Part of the app's NSCoding model, re-created.
    public required init?(coder: NSCoder) {
        userID = coder.decodeObject(forKey: userIDKey) as! String
        username = coder.decodeObject(forKey: usernameKey) as! String?
        super.init(coder: coder)
    }

    override var keys: [String] {
        return [userIDKey, usernameKey]
    }
}
private let userIDKey = "userID"
private let usernameKey = "username"

// MARK: - AwfulCore/Sources/AwfulCore/Model/ThreadPage.swift

/// A page of a thread (AwfulCore).
public enum ThreadPage: Equatable {
    case last
    case nextUnread
    case specific(Int)
}

// MARK: - App/View Controllers/Posts/PostsPageViewController.swift

final class PostsPageViewController: ViewController {
    private let author: User?
    private var messageViewController: MessageComposeViewController?
    private(set) var page: ThreadPage?
    private var replyWorkspace: ReplyWorkspace?
    private var restoringState = false
    private var scrollToFractionAfterLoading: CGFloat?
    let thread: AwfulThread
    private var hiddenPosts = 0
    private var advertisementHTML: String?
    private lazy var postsView = PostsPageView()
    var posts: [Post] = []
    private(set) var loadedPages: [ThreadPage] = []

    /// - parameter thread: The thread whose posts are shown.
    /// - parameter author: An optional author used to filter the shown posts. May be nil, in which case all posts
    ///   are shown.
    init(thread: AwfulThread, author: User? = nil) {
        self.thread = thread
        self.author = author
        super.init(nibName: nil, bundle: nil)

        restorationClass = type(of: self)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)

        coder.encode(thread.objectKey, forKey: Keys.threadKey)
        if let page = page {
            coder.encode(page.nsCoderIntValue, forKey: Keys.page)
        }
        coder.encode(author?.objectKey, forKey: Keys.authorUserKey)
        coder.encode(hiddenPosts, forKey: Keys.hiddenPosts)
        coder.encode(messageViewController, forKey: Keys.messageViewController)
        coder.encode(advertisementHTML, forKey: Keys.advertisementHTML)
        coder.encode(
            Float(postsView.renderView.scrollView.fractionalContentOffset.y), forKey: Keys.scrolledFractionOfContent)
        coder.encode(replyWorkspace, forKey: Keys.replyWorkspace)
    }

    override func decodeRestorableState(with coder: NSCoder) {
        restoringState = true

        super.decodeRestorableState(with: coder)

        messageViewController = coder.decodeObject(forKey: Keys.messageViewController) as? MessageComposeViewController
        messageViewController?.delegate = self

        hiddenPosts = coder.decodeInteger(forKey: Keys.hiddenPosts)
        let page: ThreadPage = {
            guard
                coder.containsValue(forKey: Keys.page),
                let page = ThreadPage(nsCoderIntValue: coder.decodeInteger(forKey: Keys.page))
            else { return .specific(1) }
            return page
        }()
        self.page = page
        loadPage(page, updatingCache: false, updatingLastReadPost: true)
        if posts.isEmpty {
            loadPage(page, updatingCache: true, updatingLastReadPost: true)
        }

        advertisementHTML = coder.decodeObject(forKey: Keys.advertisementHTML) as? String
        scrollToFractionAfterLoading = CGFloat(coder.decodeFloat(forKey: Keys.scrolledFractionOfContent))

        replyWorkspace = coder.decodeObject(forKey: Keys.replyWorkspace) as? ReplyWorkspace
        replyWorkspace?.completion = replyCompletionBlock
    }

    override func applicationFinishedRestoringState() {
        super.applicationFinishedRestoringState()

        restoringState = false
    }

    // MARK: Gunk

    required init?(coder: NSCoder) {
        fatalError("init(coder:) has not been implemented")
    }

    // MARK: Stand-ins for the rest of the controller

    func loadPage(_ page: ThreadPage, updatingCache: Bool, updatingLastReadPost: Bool) {
        loadedPages.append(page)
        self.page = page
    }

    private var replyCompletionBlock: (ReplyWorkspace.CompletionResult) -> Void {
        return { _ in }
    }

    func setUp(
        page: ThreadPage, hiddenPosts: Int, advertisementHTML: String?, scrolledFraction: CGFloat,
        replyWorkspace: ReplyWorkspace?
    ) {
        self.page = page
        self.hiddenPosts = hiddenPosts
        self.advertisementHTML = advertisementHTML
        postsView.renderView.scrollView.fractionalContentOffset.y = scrolledFraction
        self.replyWorkspace = replyWorkspace
    }

    var restored:
        (
            author: User?, hiddenPosts: Int, ad: String?, fraction: CGFloat?, workspace: ReplyWorkspace?,
            isRestoring: Bool
        )
    {
        (author, hiddenPosts, advertisementHTML, scrollToFractionAfterLoading, replyWorkspace, restoringState)
    }
}

private extension ThreadPage {
    init?(nsCoderIntValue: Int) {
        switch nsCoderIntValue {
        case -2:
            self = .last
        case -1:
            self = .nextUnread
        case 1...Int.max:
            self = .specific(nsCoderIntValue)
        default:
            return nil
        }
    }

    var nsCoderIntValue: Int {
        switch self {
        case .last:
            return -2
        case .nextUnread:
            return -1
        case .specific(let pageNumber):
            return pageNumber
        }
    }
}

extension PostsPageViewController: UIViewControllerRestoration {
    static func viewController(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIViewController?
    {
        let context = AppDelegate.instance.managedObjectContext
        guard let threadKey = coder.decodeObject(forKey: Keys.threadKey) as? ThreadKey else { return nil }
        let thread = AwfulThread.objectForKey(objectKey: threadKey, in: context)
        let userKey = coder.decodeObject(forKey: Keys.authorUserKey) as? UserKey
        let author: User?
        if let userKey = userKey {
            author = User.objectForKey(objectKey: userKey, in: context)
        } else {
            author = nil
        }

        let postsVC = PostsPageViewController(thread: thread, author: author)
        postsVC.restorationIdentifier = identifierComponents.last
        return postsVC
    }
}

private struct Keys {
    static let threadKey = "ThreadKey"
    static let page = "AwfulCurrentPage"
    static let authorUserKey = "AuthorUserKey"
    static let hiddenPosts = "AwfulHiddenPosts"
    static let replyViewController = "AwfulReplyViewController"
    static let messageViewController = "AwfulMessageViewController"
    static let advertisementHTML = "AwfulAdvertisementHTML"
    static let scrolledFractionOfContent = "AwfulScrolledFractionOfContentSize"
    static let replyWorkspace = "Reply workspace"
}

// MARK: - App/Posts/ReplyWorkspace.swift

// PORT EDIT: @MainActor added: the workspace registers itself with UIApplication and names its
// composition controller, both main-actor, which Swift 6 language mode (the app builds in Swift 5 mode)
// refuses from a nonisolated class.
/// A place for someone to compose a reply to a thread.
///
/// ReplyWorkspace conforms to UIStateRestoring, so it is ok to involve it in UIKit state preservation and
/// restoration.
@MainActor
final class ReplyWorkspace: NSObject {
    let draft: NSObject & ReplyDraft
    private let restorationIdentifier: String

    /// Called when the viewController should be dismissed.
    ///
    /// The closure can't be saved as part of UIKit state preservation, so be sure to set something after restoring
    /// state.
    var completion: (CompletionResult) -> Void = { _ in }

    enum CompletionResult {
        case forgetAboutIt
        case posted
        case saveDraft
    }

    /// Constructs a workspace for a new reply to a thread.
    convenience init(thread: AwfulThread) {
        let draft = NewReplyDraft(thread: thread)
        self.init(draft: draft, didRestoreWithRestorationIdentifier: nil)
    }

    /// A nil restorationIdentifier implies that we were not created by UIKit state restoration.
    fileprivate init(draft: NSObject & ReplyDraft, didRestoreWithRestorationIdentifier restorationIdentifier: String?) {
        self.draft = draft
        self.restorationIdentifier = restorationIdentifier ?? UUID().uuidString
        super.init()

        UIApplication.registerObject(forStateRestoration: self, restorationIdentifier: self.restorationIdentifier)
    }

    var compositionViewController: CompositionViewController! {
        didSet {
            assert(oldValue == nil, "please set compositionViewController only once")
        }
    }

    fileprivate func saveTextToDraft() {
        draft.text = NSAttributedString(string: compositionViewController.textView.text)
    }

    fileprivate func createCompositionViewController() {
        if compositionViewController == nil {
            compositionViewController = CompositionViewController()
            compositionViewController.restorationIdentifier = "\(self.restorationIdentifier) Reply composition"
        }
    }

    var identifierForTesting: String { restorationIdentifier }
}

extension ReplyWorkspace: UIObjectRestoration, UIStateRestoring {
    var objectRestorationClass: UIObjectRestoration.Type? {
        return ReplyWorkspace.self
    }

    func encodeRestorableState(with coder: NSCoder) {
        saveTextToDraft()
        DraftStore.sharedStore().saveDraft(draft)
        coder.encode(draft.storePath, forKey: Keys.draftPath)
        coder.encode(compositionViewController, forKey: Keys.compositionViewController)
    }

    class func object(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder) -> UIStateRestoring?
    {
        if let path = coder.decodeObject(forKey: Keys.draftPath) as! String? {
            if let draft = DraftStore.sharedStore().loadDraft(path) as! (NSObject & ReplyDraft)? {
                return self.init(draft: draft, didRestoreWithRestorationIdentifier: identifierComponents.last)
            }
        }

        return nil
    }

    func decodeRestorableState(with coder: NSCoder) {
        // Our encoded CompositionViewController is not available any earlier (i.e. in objectWithRestorationIdentifierPath(_:coder:)).
        compositionViewController =
            (coder.decodeObject(forKey: Keys.compositionViewController) as! CompositionViewController)
    }

    fileprivate struct Keys {
        static let draftPath = "draftPath"
        static let compositionViewController = "compositionViewController"
    }
}

// PORT EDIT: @objc protocols need the Objective-C runtime; class-bound Swift protocols instead.
protocol ReplyDraft: StorableDraft {
    var thread: AwfulThread { get }
    var text: NSAttributedString? { get set }
}

protocol StorableDraft: AnyObject, NSCoding {
    var storePath: String { get }
}

final class NewReplyDraft: NSObject, ReplyDraft {
    let thread: AwfulThread
    var text: NSAttributedString?

    init(thread: AwfulThread, text: NSAttributedString? = nil) {
        self.thread = thread
        self.text = text
        super.init()
    }

    convenience init?(coder: NSCoder) {
        let threadKey = coder.decodeObject(forKey: Keys.threadKey) as! ThreadKey
        let thread = AwfulThread.objectForKey(objectKey: threadKey, in: AppDelegate.instance.managedObjectContext)
        let text = coder.decodeObject(forKey: Keys.text) as? NSAttributedString
        self.init(thread: thread, text: text)
    }

    func encode(with coder: NSCoder) {
        coder.encode(thread.objectKey, forKey: Keys.threadKey)
        coder.encode(text, forKey: Keys.text)
    }

    var storePath: String {
        return "replies/\(thread.threadID)"
    }

    fileprivate struct Keys {
        static let threadKey = "threadKey"
        static let text = "text"
    }
}

// MARK: - App/Composition/CompositionViewController.swift

final class CompositionViewController: ViewController {
    let textView = AwfulTextView()

    override init(nibName: String?, bundle: Bundle?) {
        super.init(nibName: nil, bundle: nil)
        restorationClass = type(of: self)
    }

    required init?(coder: NSCoder) {
        fatalError("init(coder:) has not been implemented")
    }
}

extension CompositionViewController: UIViewControllerRestoration {
    class func viewController(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIViewController?
    {
        let composition = self.init()
        composition.restorationIdentifier = identifierComponents.last
        return composition
    }
}

// MARK: - Stand-ins for the app's other classes (Core Data, views, DraftStore)

class ViewController: UIViewController {}

final class MessageComposeViewController: ViewController {
    weak var delegate: AnyObject?
}

final class AwfulTextView {
    var text = ""
}

final class PostsPageView {
    final class RenderView {
        final class ScrollView {
            var fractionalContentOffset = CGPoint.zero
        }
        let scrollView = ScrollView()
    }
    let renderView = RenderView()
}

final class Post {}

final class AwfulManagedObjectContext: @unchecked Sendable {
    var threads: [String: AwfulThread] = [:]
    var users: [String: User] = [:]
}

final class AppDelegate: @unchecked Sendable {
    static let instance = AppDelegate()
    let managedObjectContext = AwfulManagedObjectContext()
}

final class AwfulThread: NSObject {
    static let entityName = "Thread"
    let threadID: String
    init(threadID: String) { self.threadID = threadID }
    var objectKey: ThreadKey { ThreadKey(threadID: threadID) }

    static func objectForKey(objectKey: ThreadKey, in context: AwfulManagedObjectContext) -> AwfulThread {
        if let thread = context.threads[objectKey.threadID] { return thread }
        let thread = AwfulThread(threadID: objectKey.threadID)
        context.threads[objectKey.threadID] = thread
        return thread
    }
}

final class User: NSObject {
    static let entityName = "User"
    let userID: String
    let username: String?
    init(userID: String, username: String?) {
        self.userID = userID
        self.username = username
    }
    var objectKey: UserKey { UserKey(userID: userID, username: username) }

    static func objectForKey(objectKey: UserKey, in context: AwfulManagedObjectContext) -> User {
        if let user = context.users[objectKey.userID] { return user }
        let user = User(userID: objectKey.userID, username: objectKey.username)
        context.users[objectKey.userID] = user
        return user
    }
}

/// The app's DraftStore archives drafts to files with NSKeyedArchiver; this one keeps them in memory.
final class DraftStore: @unchecked Sendable {
    private static let shared = DraftStore()
    static func sharedStore() -> DraftStore { shared }
    var drafts: [String: NSObject & StorableDraft] = [:]
    func saveDraft(_ draft: NSObject & StorableDraft) { drafts[draft.storePath] = draft }
    func loadDraft(_ path: String) -> (NSObject & StorableDraft)? { drafts[path] }
}

// MARK: - Tests

@MainActor @Suite(.serialized) struct AwfulPortTests {
    private func launch(_ store: TestStore, delegate: AlwaysRestore) throws -> (Journal, RestorationManager) {
        let journal = try store.open()
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "7.4", interfaceIdiom: "phone"))
        manager.delegate = delegate
        manager.register(restorationClass: PostsPageViewController.self)
        manager.register(restorationClass: CompositionViewController.self)
        manager.register(objectRestorationClass: ReplyWorkspace.self)
        manager.registerCodingClass(ThreadKey.self)
        manager.registerCodingClass(UserKey.self)
        RestorationManager.register(codingName: "ThreadKey", for: ThreadKey.self)
        RestorationManager.register(codingName: "UserKey", for: UserKey.self)
        UIApplication.restorationManager = manager
        return (journal, manager)
    }

    @Test func aThreadPageFilteredByAuthorComesBackOnItsPageWithItsReplyWorkspace() throws {
        let store = TestStore()
        let delegate = AlwaysRestore()
        let context = AppDelegate.instance.managedObjectContext
        var workspaceIdentifier = ""
        do {
            let (journal, manager) = try launch(store, delegate: delegate)
            let thread = AwfulThread(threadID: "3836515")
            let author = User(userID: "106125", username: "pokeyman")
            let posts = PostsPageViewController(thread: thread, author: author)
            posts.restorationIdentifier = "Just your posts"
            let nav = UINavigationController()
            nav.viewControllers = [posts]
            nav.restorationIdentifier = "Forum list navigation"
            let workspace = ReplyWorkspace(thread: thread)
            workspace.createCompositionViewController()
            workspace.compositionViewController.textView.text = "[quote]lol[/quote]"
            workspaceIdentifier = workspace.identifierForTesting
            posts.setUp(
                page: .specific(12), hiddenPosts: 3, advertisementHTML: "<p>ad</p>", scrolledFraction: 0.25,
                replyWorkspace: workspace)
            let report = try manager.preserveState(roots: [nav])
            #expect(report.problems.isEmpty)
            UIApplication.restorationManager = nil
            try journal.close()
        }
        context.threads = [:]
        context.users = [:]

        let (journal, manager) = try launch(store, delegate: delegate)
        let nav = UINavigationController()
        nav.restorationIdentifier = "Forum list navigation"
        let report = try manager.restoreState(roots: [nav])
        #expect(report.diagnostics.isEmpty)
        let posts = try #require(nav.viewControllers.first as? PostsPageViewController)
        #expect(posts.restorationIdentifier == "Just your posts")
        #expect(posts.thread.threadID == "3836515")
        #expect(posts.page == .specific(12))
        #expect(posts.loadedPages.first == .specific(12))
        let restored = posts.restored
        #expect(restored.author?.userID == "106125")
        #expect(restored.author?.username == "pokeyman")
        #expect(restored.hiddenPosts == 3)
        #expect(restored.ad == "<p>ad</p>")
        #expect(restored.fraction == 0.25)
        #expect(restored.isRestoring == false)
        let workspace = try #require(restored.workspace)
        #expect(workspace.identifierForTesting == workspaceIdentifier)
        #expect(workspace.draft.thread.threadID == "3836515")
        #expect(workspace.draft.text?.string == "[quote]lol[/quote]")
        #expect(workspace.compositionViewController.restorationIdentifier == "\(workspaceIdentifier) Reply composition")
        UIApplication.restorationManager = nil
        try journal.close()
    }

    @Test func theObjectKeysArchiveThemselvesThroughNSCoding() throws {
        let key = ThreadKey(threadID: "42")
        #expect(key == ThreadKey(threadID: "42"))
        #expect(key != ThreadKey(threadID: "43"))
    }
}
