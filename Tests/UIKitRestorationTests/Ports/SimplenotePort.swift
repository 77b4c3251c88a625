// Port of the state restoration code of Simplenote for iOS.
// Source: https://github.com/Automattic/simplenote-ios @ d3e2599cd16485a4b75a4a62882056351c18a0c7
//   Simplenote/SPAppDelegate+Extensions.swift (SPAppDelegate as every controller's UIViewControllerRestoration)
//   Simplenote/Classes/SPNoteEditorViewController+Extensions.swift (encodeRestorableState in an extension)
//   Simplenote/Classes/EditorFactory.swift (the editor's restoration class and identifier)
//   Simplenote/Classes/UIViewController+Helpers.swift (defaultRestorationIdentifier)
// SPAppDelegate, SPNoteEditorViewController, SPNoteListViewController, SPNavigationController and
// SPSidebarContainerViewController are Objective-C classes in the app: they are declared here as
// Swift stand-ins with the members the Swift restoration code uses. Simperium is a stand-in too.
import Foundation
import StateJournal
import Testing
import UIKitRestoration

// MARK: - Simplenote/Classes/UIViewController+Helpers.swift

extension UIViewController {

    /// YES! You guessed right! By default, the restorationIdentifier will be the class name 🎯
    ///
    class var defaultRestorationIdentifier: String {
        classNameWithoutNamespaces
    }
}

// MARK: - Simplenote/Classes/EditorFactory.swift

// PORT EDIT: @objcMembers needs the Objective-C runtime; @MainActor added: the factory makes main-actor
// controllers, which Swift 6 language mode (the app builds in Swift 5 mode) refuses from a nonisolated
// class, and a non-Sendable `shared` global with it.
@MainActor
class EditorFactory: NSObject {

    /// Yet another Singleton
    ///
    static let shared = EditorFactory()

    /// Editor's Restoration Class
    ///
    var restorationClass: UIViewControllerRestoration.Type?

    /// You shall not pass!
    ///
    private override init() {
        super.init()
    }

    /// Returns a new Editor Instance
    ///
    func build(with note: Note?) -> SPNoteEditorViewController {
        assert(restorationClass != nil)

        let controller = SPNoteEditorViewController(note: note ?? newNote())
        controller.restorationClass = restorationClass
        controller.restorationIdentifier = SPNoteEditorViewController.defaultRestorationIdentifier
        return controller
    }

    private func newNote() -> Note {
        Note(simperiumKey: UUID().uuidString)
    }
}

// MARK: - Simplenote/Classes/SPNoteEditorViewController+Extensions.swift

extension SPNoteEditorViewController {

    /// NSCoder Keys
    ///
    enum CodingKeys: String {
        case currentNoteKey
    }

    private var simperium: Simperium {
        SPAppDelegate.shared().simperium
    }

    // PORT EDIT: a Swift extension can override only @objc members (Objective-C runtime); the override
    // moved into the class (the stand-in below), calling this method.
    func encodeRestorableStateFromExtension(with coder: NSCoder) {
        // Always make sure the object is persisted before proceeding
        if note.objectID.isTemporaryID {
            simperium.save()
        }

        coder.encode(note.simperiumKey, forKey: CodingKeys.currentNoteKey.rawValue)
    }
}

// MARK: - Simplenote/SPAppDelegate+Extensions.swift

// PORT EDIT: @objc needs the Objective-C runtime (three attributes removed in this extension).
extension SPAppDelegate: UIViewControllerRestoration {

    func configureStateRestoration() {
        EditorFactory.shared.restorationClass = SPAppDelegate.self

        tagListViewController.restorationIdentifier = TagListViewController.defaultRestorationIdentifier
        tagListViewController.restorationClass = SPAppDelegate.self

        noteListViewController.restorationIdentifier = SPNoteListViewController.defaultRestorationIdentifier
        noteListViewController.restorationClass = SPAppDelegate.self

        navigationController.restorationIdentifier = SPNavigationController.defaultRestorationIdentifier
        navigationController.restorationClass = SPAppDelegate.self

        sidebarViewController.restorationIdentifier = SPSidebarContainerViewController.defaultRestorationIdentifier
        sidebarViewController.restorationClass = SPAppDelegate.self
    }

    func viewController(restorationIdentifier: String, coder: NSCoder) -> UIViewController? {
        switch restorationIdentifier {
        case tagListViewController.restorationIdentifier:
            return tagListViewController

        case noteListViewController.restorationIdentifier:
            return noteListViewController

        case SPNoteEditorViewController.defaultRestorationIdentifier:
            guard
                let simperiumKey = coder.decodeObject(
                    forKey: SPNoteEditorViewController.CodingKeys.currentNoteKey.rawValue) as? String,
                let note = simperium.bucket(forName: Note.classNameWithoutNamespaces)?.object(forKey: simperiumKey)
                    as? Note
            else {
                return nil
            }
            return EditorFactory.shared.build(with: note)

        case navigationController.restorationIdentifier:
            return navigationController

        case sidebarViewController.restorationIdentifier:
            return sidebarViewController

        default:
            return nil
        }
    }

    /// Makes the controller again at launch (UIViewControllerRestoration).
    public static func viewController(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIViewController?
    {
        guard
            let appDelegate = UIApplication.shared.delegate as? SPAppDelegate,
            let restorationIdentifier = identifierComponents.last
        else {
            return nil
        }

        return appDelegate.viewController(restorationIdentifier: restorationIdentifier, coder: coder)
    }
}

// MARK: - Stand-ins for the Objective-C classes and Simperium

extension NSObject {
    /// Simplenote/Classes/NSObject+Helpers.swift
    class var classNameWithoutNamespaces: String {
        return String(describing: self)
    }
}

/// SPAppDelegate.h: a UIResponder, so main-actor as in UIKit.
@MainActor
public class SPAppDelegate: NSObject, UIApplicationDelegate {
    nonisolated(unsafe) static var current: SPAppDelegate?
    static func shared() -> SPAppDelegate { current! }

    let simperium = Simperium()
    let tagListViewController = TagListViewController()
    let noteListViewController = SPNoteListViewController()
    let navigationController: SPNavigationController
    let sidebarViewController: SPSidebarContainerViewController

    override init() {
        navigationController = SPNavigationController(rootViewController: noteListViewController)
        sidebarViewController = SPSidebarContainerViewController(
            mainViewController: navigationController, sidebarViewController: tagListViewController)
        super.init()
    }
}

class SPNoteEditorViewController: UIViewController {
    let note: Note
    init(note: Note) {
        self.note = note
        super.init(nibName: nil, bundle: nil)
    }

    required init?(coder: NSCoder) {
        fatalError("init(coder:) has not been implemented")
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        encodeRestorableStateFromExtension(with: coder)
    }
}

final class SPNoteListViewController: UIViewController {}
final class TagListViewController: UIViewController {}
final class SPNavigationController: UINavigationController {}

final class SPSidebarContainerViewController: UIViewController {
    init(mainViewController: UIViewController, sidebarViewController: UIViewController) {
        super.init(nibName: nil, bundle: nil)
        for child in [mainViewController, sidebarViewController] {
            addChild(child)
            child.didMove(toParent: self)
        }
    }

    required init?(coder: NSCoder) {
        fatalError("init(coder:) has not been implemented")
    }
}

final class Note: NSObject {
    final class ObjectID {
        var isTemporaryID = true
    }
    let objectID = ObjectID()
    let simperiumKey: String
    init(simperiumKey: String) { self.simperiumKey = simperiumKey }
}

final class SimplenoteBucket {
    var objects: [String: AnyObject] = [:]
    func object(forKey key: String) -> AnyObject? { objects[key] }
}

final class Simperium {
    var buckets: [String: SimplenoteBucket] = [:]
    var saves = 0
    func save() { saves += 1 }
    func bucket(forName name: String) -> SimplenoteBucket? { buckets[name] }
}

// MARK: - Tests

@MainActor @Suite(.serialized) struct SimplenotePortTests {
    private func launch(_ store: TestStore, delegate: AlwaysRestore) throws -> (
        Journal, RestorationManager, SPAppDelegate
    ) {
        let journal = try store.open()
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "4.52", interfaceIdiom: "phone"))
        manager.delegate = delegate
        manager.register(restorationClass: SPAppDelegate.self)
        let appDelegate = SPAppDelegate()
        SPAppDelegate.current = appDelegate
        UIApplication.shared.delegate = appDelegate
        appDelegate.configureStateRestoration()
        return (journal, manager, appDelegate)
    }

    @Test func theOpenNoteComesBackInTheEditorPushedOnTheNoteList() throws {
        let store = TestStore()
        let delegate = AlwaysRestore()
        let note = Note(simperiumKey: "5b1c8e1e0f6a4f4d9c1a")
        do {
            let (journal, manager, appDelegate) = try launch(store, delegate: delegate)
            let editor = EditorFactory.shared.build(with: note)
            appDelegate.navigationController.pushViewController(editor, animated: false)
            let report = try manager.preserveState(roots: [appDelegate.sidebarViewController])
            #expect(report.problems.isEmpty)
            #expect(appDelegate.simperium.saves == 1)
            try journal.close()
        }

        let (journal, manager, appDelegate) = try launch(store, delegate: delegate)
        let bucket = SimplenoteBucket()
        bucket.objects[note.simperiumKey] = note
        appDelegate.simperium.buckets["Note"] = bucket
        let report = try manager.restoreState(roots: [appDelegate.sidebarViewController])
        #expect(report.diagnostics.isEmpty)
        #expect(appDelegate.navigationController.viewControllers.count == 2)
        let editor = try #require(appDelegate.navigationController.viewControllers.last as? SPNoteEditorViewController)
        #expect(editor.note === note)
        #expect(editor.restorationIdentifier == "SPNoteEditorViewController")
        try journal.close()
    }
}
