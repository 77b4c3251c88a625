// Port of the state restoration code of the WordPress app for iOS (the Reader).
// Source: https://github.com/wordpress-mobile/WordPress-iOS (the repository is too large to fetch
// here; read in the public code index):
//   WordPress/Classes/ViewRelated/Reader/Controllers/ReaderSearchViewController.swift
//     @ 559049cb02baac34356b1e87bb1f6aad3fa0f252 (UIViewControllerRestoration, awakeAfter(using:))
//   WordPress/Classes/ViewRelated/Reader/Controllers/ReaderStreamViewController.swift, the stored
//     version of the same era (index file id 1031856489, 72,996 characters; its commit is not named
//     by the index), whose restoration members match the search controller's.
// The restoration members are re-created line by line; Core Data (ContextManager,
// ReaderTopicService, the topics) and storyboards are replaced by the stand-ins at the bottom.
import Foundation
import StateJournal
import Testing
import UIKitRestoration

// MARK: - ReaderStreamViewController.swift

// PORT EDIT: @objc needs the Objective-C runtime (removed from the class and its members).
class ReaderStreamViewController: UIViewController, UIViewControllerRestoration {
    static let restorationClassIdentifier = "ReaderStreamViewControllerRestorationIdentifier"
    static let restorableTopicPathKey: String = "RestorableTopicPathKey"

    /// The topic can be nil while a site or tag topic is being fetched, hence, optional.
    var readerTopic: ReaderAbstractTopic? {
        didSet {
            if let oldValue = oldValue {
                oldValue.inUse = false
            }
            if let newTopic = readerTopic {
                newTopic.inUse = true
            }
        }
    }

    // MARK: - State Restoration

    /// Makes the controller again at launch (UIViewControllerRestoration).
    public static func viewController(
        withRestorationIdentifierPath identifierComponents: [String],
        coder: NSCoder
    ) -> UIViewController? {
        guard let path = coder.decodeObject(forKey: restorableTopicPathKey) as? String else {
            return nil
        }

        let context = ContextManager.sharedInstance().mainContext
        let service = ReaderTopicService(managedObjectContext: context)
        guard let topic = service.find(withPath: path) else {
            return nil
        }

        // PORT EDIT: there is no UIStoryboard; WordPressStoryboard stands in for the Reader storyboard.
        let storyboard = WordPressStoryboard(name: "Reader", bundle: Bundle.main)
        let controller =
            storyboard.instantiateViewController(withIdentifier: "ReaderStreamViewController")
            as! ReaderStreamViewController
        controller.readerTopic = topic
        return controller
    }

    override func encodeRestorableState(with coder: NSCoder) {
        if let topic = readerTopic {
            coder.encode(topic.path, forKey: type(of: self).restorableTopicPathKey)
        }
        super.encodeRestorableState(with: coder)
    }

    // MARK: - LifeCycle Methods

    // PORT EDIT: NSObject.awakeAfter(using:) is not in Foundation on Linux nor in the package (there are
    // no nibs): not an override; the stand-in storyboard calls this method after making the controller.
    func awakeAfter(using aDecoder: NSCoder?) -> Any? {
        restorationIdentifier = type(of: self).restorationClassIdentifier
        restorationClass = type(of: self)

        return self
    }
}

// MARK: - ReaderSearchViewController.swift

// PORT EDIT: @objc needs the Objective-C runtime (removed from the class and its members).
open class ReaderSearchViewController: UIViewController, UIViewControllerRestoration {
    static let restorationClassIdentifier = "ReaderSearchViewControllerRestorationIdentifier"
    static let restorableSearchTopicPathKey: String = "RestorableSearchTopicPathKey"

    fileprivate var streamController: ReaderStreamViewController?
    fileprivate var restoredSearchTopic: ReaderSearchTopic?
    var searchBarText: String?

    /// A convenience method for instantiating the controller from the storyboard.
    ///
    /// - Returns: An instance of the controller.
    ///
    open class func controller() -> ReaderSearchViewController {
        // PORT EDIT: there is no UIStoryboard; WordPressStoryboard stands in for the Reader storyboard.
        let storyboard = WordPressStoryboard(name: "Reader", bundle: Bundle.main)
        let controller =
            storyboard.instantiateViewController(withIdentifier: "ReaderSearchViewController")
            as! ReaderSearchViewController
        return controller
    }

    // MARK: - State Restoration

    /// Makes the controller again at launch (UIViewControllerRestoration).
    public static func viewController(
        withRestorationIdentifierPath identifierComponents: [String],
        coder: NSCoder
    ) -> UIViewController? {
        guard let path = coder.decodeObject(forKey: restorableSearchTopicPathKey) as? String else {
            return ReaderSearchViewController.controller()
        }

        let context = ContextManager.sharedInstance().mainContext
        let service = ReaderTopicService(managedObjectContext: context)
        guard let topic = service.find(withPath: path) as? ReaderSearchTopic else {
            return ReaderSearchViewController.controller()
        }

        // PORT EDIT: there is no UIStoryboard; WordPressStoryboard stands in for the Reader storyboard.
        let storyboard = WordPressStoryboard(name: "Reader", bundle: Bundle.main)
        let controller =
            storyboard.instantiateViewController(withIdentifier: "ReaderSearchViewController")
            as! ReaderSearchViewController
        controller.restoredSearchTopic = topic
        return controller
    }

    open override func encodeRestorableState(with coder: NSCoder) {
        if let topic = streamController?.readerTopic {
            coder.encode(topic.path, forKey: type(of: self).restorableSearchTopicPathKey)
        }
        super.encodeRestorableState(with: coder)
    }

    // MARK: Lifecycle methods

    // PORT EDIT: NSObject.awakeAfter(using:) is not in Foundation on Linux nor in the package (there are
    // no nibs): not an override; the stand-in storyboard calls this method after making the controller.
    open func awakeAfter(using aDecoder: NSCoder?) -> Any? {
        restorationIdentifier = type(of: self).restorationClassIdentifier
        restorationClass = type(of: self)

        return self
    }

    open func viewDidLoad() {
        configureForRestoredTopic()
    }

    func configureForRestoredTopic() {
        guard let topic = restoredSearchTopic else {
            return
        }
        searchBarText = topic.title
        streamController?.readerTopic = topic
    }

    /// From performPostsSearch(for:).
    func performPostsSearch(for phrase: String) {
        let context = ContextManager.sharedInstance().mainContext
        let service = ReaderTopicService(managedObjectContext: context)

        let topic = service.searchTopic(forSearchPhrase: phrase)
        streamController?.readerTopic = topic
    }
}

// MARK: - Stand-ins for Core Data and the storyboard

class ReaderAbstractTopic: NSObject {
    var path: String
    var title: String
    var inUse = false
    init(path: String, title: String) {
        self.path = path
        self.title = title
    }
}

final class ReaderTagTopic: ReaderAbstractTopic {}
final class ReaderSearchTopic: ReaderAbstractTopic {}

final class WordPressManagedObjectContext: @unchecked Sendable {
    var topics: [String: ReaderAbstractTopic] = [:]
}

final class ContextManager: @unchecked Sendable {
    private static let shared = ContextManager()
    static func sharedInstance() -> ContextManager { shared }
    let mainContext = WordPressManagedObjectContext()
}

final class ReaderTopicService {
    let context: WordPressManagedObjectContext
    init(managedObjectContext: WordPressManagedObjectContext) { context = managedObjectContext }

    func find(withPath path: String) -> ReaderAbstractTopic? { context.topics[path] }

    func searchTopic(forSearchPhrase phrase: String) -> ReaderSearchTopic {
        let path = "https://public-api.wordpress.com/rest/v1.2/read/search?q=\(phrase)"
        let topic = ReaderSearchTopic(path: path, title: phrase)
        context.topics[path] = topic
        return topic
    }
}

/// Stands in for UIStoryboard and the Reader storyboard's scenes. The search scene embeds a stream
/// controller through a container segue (prepare(for:sender:) keeps it in streamController).
@MainActor
struct WordPressStoryboard {
    let name: String
    init(name: String, bundle: Bundle) { self.name = name }

    func instantiateViewController(withIdentifier identifier: String) -> UIViewController {
        switch identifier {
        case "ReaderSearchViewController":
            let controller = ReaderSearchViewController()
            _ = controller.awakeAfter(using: nil)
            controller.streamController =
                instantiateViewController(withIdentifier: "ReaderStreamViewController")
                as? ReaderStreamViewController
            return controller
        default:
            let controller = ReaderStreamViewController()
            _ = controller.awakeAfter(using: nil)
            return controller
        }
    }
}

// MARK: - Tests

@MainActor @Suite(.serialized) struct WordPressPortTests {
    private func launch(_ store: TestStore, delegate: AlwaysRestore) throws -> (Journal, RestorationManager) {
        let journal = try store.open()
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "24.0", interfaceIdiom: "phone"))
        manager.delegate = delegate
        manager.register(restorationClass: ReaderStreamViewController.self)
        manager.register(restorationClass: ReaderSearchViewController.self)
        return (journal, manager)
    }

    @Test func aTagStreamPushedOnTheReaderComesBackWithItsTopic() throws {
        let context = ContextManager.sharedInstance().mainContext
        let tag = ReaderTagTopic(
            path: "https://public-api.wordpress.com/rest/v1.2/read/tags/swift/posts", title: "swift")
        context.topics[tag.path] = tag
        let store = TestStore()
        let delegate = AlwaysRestore()
        do {
            let (journal, manager) = try launch(store, delegate: delegate)
            let stream =
                WordPressStoryboard(name: "Reader", bundle: Bundle.main)
                .instantiateViewController(withIdentifier: "ReaderStreamViewController") as! ReaderStreamViewController
            stream.readerTopic = tag
            let nav = UINavigationController()
            nav.viewControllers = [stream]
            nav.restorationIdentifier = "ReaderNavigationController"
            let report = try manager.preserveState(roots: [nav])
            #expect(report.problems.isEmpty)
            try journal.close()
        }

        tag.inUse = false
        let (journal, manager) = try launch(store, delegate: delegate)
        let nav = UINavigationController()
        nav.restorationIdentifier = "ReaderNavigationController"
        let report = try manager.restoreState(roots: [nav])
        #expect(report.diagnostics.isEmpty)
        let stream = try #require(nav.viewControllers.first as? ReaderStreamViewController)
        #expect(stream.readerTopic === tag)
        #expect(tag.inUse)
        #expect(stream.restorationIdentifier == "ReaderStreamViewControllerRestorationIdentifier")
        try journal.close()
    }

    @Test func aSearchComesBackWithItsPhraseAndAStreamOfItsResults() throws {
        let store = TestStore()
        let delegate = AlwaysRestore()
        do {
            let (journal, manager) = try launch(store, delegate: delegate)
            let search = ReaderSearchViewController.controller()
            search.performPostsSearch(for: "state restoration")
            let nav = UINavigationController()
            nav.viewControllers = [search]
            nav.restorationIdentifier = "ReaderNavigationController"
            let report = try manager.preserveState(roots: [nav])
            #expect(report.problems.isEmpty)
            try journal.close()
        }

        let (journal, manager) = try launch(store, delegate: delegate)
        let nav = UINavigationController()
        nav.restorationIdentifier = "ReaderNavigationController"
        let report = try manager.restoreState(roots: [nav])
        #expect(report.diagnostics.isEmpty)
        let search = try #require(nav.viewControllers.first as? ReaderSearchViewController)
        search.viewDidLoad()
        #expect(search.searchBarText == "state restoration")
        #expect(search.streamController?.readerTopic?.title == "state restoration")
        try journal.close()
    }
}
