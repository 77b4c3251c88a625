// Ported app: the restoration pattern of WordPress for iOS (wordpress-mobile/WordPress-iOS): the
// post list and the post editor have restoration classes that re-create them from the Core Data
// object URIs they saved (the blog's as an absolute string, the post's as a URL), and the editor
// also saves the unsaved draft as an `NSCoding` model object. The post list is pushed on the My
// Site tab's navigation stack and presents the editor modally; the tab bar restores its selection.
//
// Method bodies: 9 of 13 compiled unchanged (the draft's `encode(with:)`
// and `init?(coder:)`, `controllerWithBlog`, the post list's restoration class, the editor's
// restoration class, whose `decodeObject(forKey:) as? URL` gets the URL the editor encoded, the
// editor's encode and decode, should-save, should-restore). Edited: 4: the two inits
// (`super.init(nibName:bundle:)` became `super.init(restorationIdentifier:)`); the post list's encode
// and decode, which gained the reference to the presented editor, since the base class does not
// present it again as UIKit does. Set-up, not a method body: the app registers its draft class (`registerCodingClass`), as
// secure coding lists the classes an archive may hold; no other class is made from saved state.
import Foundation
import StateJournal
import StateRestoration
import Testing

extension PortedApps {
    @Suite struct PortedAppWordPressTests {}
}

private final class Blog {
    let uriRepresentation: URL
    let name: String

    init(uriRepresentation: URL, name: String) {
        self.uriRepresentation = uriRepresentation
        self.name = name
    }
}

private final class Post {
    let uriRepresentation: URL
    let postTitle: String

    init(uriRepresentation: URL, postTitle: String) {
        self.uriRepresentation = uriRepresentation
        self.postTitle = postTitle
    }
}

/// The persistent store, which a relaunched process opens again from disk.
private final class ContextManager {
    nonisolated(unsafe) static var shared = ContextManager()

    var blogs: [URL: Blog] = [:]
    var posts: [URL: Post] = [:]

    func existingBlog(with uri: URL) -> Blog? { blogs[uri] }
    func existingPost(with uri: URL) -> Post? { posts[uri] }
}

/// The editor's unsaved changes, an `NSCoding` model object.
final class PostDraft: NSObject, NSCoding {
    let title: String
    let content: String
    let dateModified: Date
    let wordCount: Int
    let isPrivate: Bool
    let featuredImageURL: URL?

    init(title: String, content: String, dateModified: Date, wordCount: Int, isPrivate: Bool, featuredImageURL: URL?) {
        self.title = title
        self.content = content
        self.dateModified = dateModified
        self.wordCount = wordCount
        self.isPrivate = isPrivate
        self.featuredImageURL = featuredImageURL
    }

    func encode(with coder: NSCoder) {
        coder.encode(title, forKey: "title")
        coder.encode(content, forKey: "content")
        coder.encode(dateModified, forKey: "dateModified")
        coder.encode(wordCount, forKey: "wordCount")
        coder.encode(isPrivate, forKey: "isPrivate")
        coder.encode(featuredImageURL, forKey: "featuredImageURL")
    }

    required init?(coder: NSCoder) {
        guard let title = coder.decodeObject(forKey: "title") as? String,
            let content = coder.decodeObject(forKey: "content") as? String,
            let dateModified = coder.decodeObject(forKey: "dateModified") as? Date
        else {
            return nil
        }
        self.title = title
        self.content = content
        self.dateModified = dateModified
        wordCount = coder.decodeInteger(forKey: "wordCount")
        isPrivate = coder.decodeBool(forKey: "isPrivate")
        featuredImageURL = coder.decodeObject(of: NSURL.self, forKey: "featuredImageURL") as URL?
    }
}

private final class BlogDetailsViewController: RestorableViewController {}

private final class ReaderViewController: RestorableViewController {}

private final class PostListViewController: RestorableViewController, ControllerRestoration {
    static let blogRestorationKey = "BlogRestorationKey"

    let blog: Blog
    var filterIndex = 0

    init(blog: Blog) {
        self.blog = blog
        super.init(restorationIdentifier: "PostListViewController")
        restorationClass = PostListViewController.self
    }

    static func controllerWithBlog(_ blog: Blog) -> PostListViewController {
        PostListViewController(blog: blog)
    }

    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        guard let blogID = coder.decodeObject(forKey: blogRestorationKey) as? String,
            let objectURL = URL(string: blogID),
            let restoredBlog = ContextManager.shared.existingBlog(with: objectURL)
        else {
            return nil
        }
        return self.controllerWithBlog(restoredBlog)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        let objectString = blog.uriRepresentation.absoluteString
        coder.encode(objectString, forKey: Self.blogRestorationKey)
        coder.encode(filterIndex, forKey: "filterIndex")
        // Edited: UIKit presents the restored editor again by itself; here the presenter does.
        coder.encode(presentedViewController, forKey: "presentedViewController")
        super.encodeRestorableState(with: coder)
    }

    override func decodeRestorableState(with coder: NSCoder) {
        filterIndex = coder.decodeInteger(forKey: "filterIndex")
        // Edited: as in encodeRestorableState(with:).
        presentedViewController = coder.decodeObject(forKey: "presentedViewController") as? RestorableViewController
        super.decodeRestorableState(with: coder)
    }
}

private final class EditPostViewController: RestorableViewController, ControllerRestoration {
    enum RestorationKey: String {
        case post = "EditPostViewControllerPostRestorationKey"
        case draft = "EditPostViewControllerDraftRestorationKey"
        case hasChanges = "EditPostViewControllerHasChangesRestorationKey"
    }

    let post: Post
    var draft: PostDraft?
    var hasUnsavedChanges = false

    init(post: Post) {
        self.post = post
        super.init(restorationIdentifier: "EditPostViewController")
        restorationClass = EditPostViewController.self
    }

    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        guard let postURL = coder.decodeObject(forKey: RestorationKey.post.rawValue) as? URL,
            let post = ContextManager.shared.existingPost(with: postURL)
        else {
            return nil
        }
        return EditPostViewController(post: post)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(post.uriRepresentation, forKey: RestorationKey.post.rawValue)
        coder.encode(draft, forKey: RestorationKey.draft.rawValue)
        coder.encode(hasUnsavedChanges, forKey: RestorationKey.hasChanges.rawValue)
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        draft = coder.decodeObject(forKey: RestorationKey.draft.rawValue) as? PostDraft
        hasUnsavedChanges = coder.decodeBool(forKey: RestorationKey.hasChanges.rawValue)
    }
}

private final class WordPressAppDelegate: ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }

    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }
}

private struct WordPressProcess {
    let journal: Journal
    let manager: RestorationManager
    let delegate = WordPressAppDelegate()

    init(_ store: TestStore) throws {
        ContextManager.shared = ContextManager()
        let blog = Blog(uriRepresentation: URL(string: "x-coredata://5A1C/Blog/p3")!, name: "Daily Prompts")
        let post = Post(uriRepresentation: URL(string: "x-coredata://5A1C/Post/p117")!, postTitle: "Hello Lisbon")
        ContextManager.shared.blogs[blog.uriRepresentation] = blog
        ContextManager.shared.posts[post.uriRepresentation] = post
        journal = try Journal.open(at: store.url)
        manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "25.1", interfaceIdiom: "phone"))
        manager.delegate = delegate
        manager.register(restorationClass: PostListViewController.self)
        manager.register(restorationClass: EditPostViewController.self)
        // Secure coding's counterpart: the one NSCoding class saved state may make.
        manager.registerCodingClass(PostDraft.self)
    }

    /// `WPTabBarController`'s tabs, as it builds them at launch.
    static func tabBarController() -> (RestorableTabBarController, RestorableNavigationController) {
        let tabs = RestorableTabBarController(restorationIdentifier: "WPTabBarControllerRestorationID")
        let mySite = RestorableNavigationController(restorationIdentifier: "WPBlogListNavigationRestorationID")
        mySite.viewControllers = [BlogDetailsViewController(restorationIdentifier: "BlogDetailsViewController")]
        let reader = RestorableNavigationController(restorationIdentifier: "WPReaderNavigationRestorationID")
        reader.viewControllers = [ReaderViewController(restorationIdentifier: "ReaderViewController")]
        tabs.viewControllers = [reader, mySite]
        return (tabs, mySite)
    }
}

extension PortedApps.PortedAppWordPressTests {
    @Test func thePostListAndThePresentedEditorWithItsDraftComeBack() throws {
        let store = TestStore()
        let modified = Date(timeIntervalSince1970: 1_764_150_000)
        do {
            let process = try WordPressProcess(store)
            let (tabs, mySite) = WordPressProcess.tabBarController()
            let blog = try #require(ContextManager.shared.blogs.values.first)
            let list = PostListViewController.controllerWithBlog(blog)
            list.filterIndex = 2
            mySite.viewControllers.append(list)
            let editor = EditPostViewController(post: try #require(ContextManager.shared.posts.values.first))
            editor.draft = PostDraft(
                title: "Hello Lisbon", content: "<p>Trams and tiles.</p>", dateModified: modified, wordCount: 3,
                isPrivate: true, featuredImageURL: URL(string: "https://dailyprompts.files.wordpress.com/tram.jpg"))
            editor.hasUnsavedChanges = true
            list.presentedViewController = editor
            tabs.selectedIndex = 1
            try process.manager.preserveState(roots: [tabs])
            try process.journal.close()
        }

        let process = try WordPressProcess(store)
        let (tabs, mySite) = WordPressProcess.tabBarController()
        let report = try process.manager.restoreState(roots: [tabs])

        #expect(report.diagnostics.isEmpty)
        #expect(tabs.selectedIndex == 1)
        #expect(tabs.selectedViewController === mySite)
        #expect(
            mySite.viewControllers.map(\.restorationIdentifier) == [
                "BlogDetailsViewController", "PostListViewController",
            ])
        let list = mySite.topViewController as? PostListViewController
        #expect(list?.blog.name == "Daily Prompts")
        #expect(list?.filterIndex == 2)
        let editor = list?.presentedViewController as? EditPostViewController
        #expect(editor?.post.postTitle == "Hello Lisbon")
        #expect(editor?.hasUnsavedChanges == true)
        #expect(editor?.draft?.title == "Hello Lisbon")
        #expect(editor?.draft?.content == "<p>Trams and tiles.</p>")
        #expect(editor?.draft?.dateModified == modified)
        #expect(editor?.draft?.wordCount == 3)
        #expect(editor?.draft?.isPrivate == true)
        #expect(editor?.draft?.featuredImageURL == URL(string: "https://dailyprompts.files.wordpress.com/tram.jpg"))
    }
}
