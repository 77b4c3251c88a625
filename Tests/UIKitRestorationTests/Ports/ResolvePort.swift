// Port of the state restoration code of Resolve, The App Studio's open-sourced sample app for iOS,
// tvOS and macOS (published on the App Store).
// Source: https://github.com/theappstudiollc/Resolve @ d249e6063e50e17038bbd131fcf666365d099203
//   Common/CustomRestorable.swift (UIObjectRestoration + UIStateRestoring, registerObject)
//   Common/CustomViewController.swift (children, presentation style and transitioning delegate by #keyPath)
//   UIKit/RootViewController.swift (the active child, applicationFinishedRestoringState)
//   UIKit/ConversationViewController-UIKit.swift (a text field's text under its restoration identifier)
//   UIKit/NavigationController.swift (navigation bar state by #keyPath)
// ResolveKit's base classes (CoreViewController, CoreContainerViewController…) and the views are
// replaced by the stand-ins at the bottom of the file.
import Foundation
import StateJournal
import Testing
import UIKitRestoration

// MARK: - Common/CustomRestorable.swift

open class CustomRestorable: NSObject, UIObjectRestoration, UIStateRestoring {

    // MARK: - NSObject overrides

    required override public init() {
        super.init()
        UIApplication.registerObject(forStateRestoration: self, restorationIdentifier: "\(self)")
    }

    // MARK: - Public properties and methods

    /// Whether the object was made by its restoration class.
    public private(set) var isRestoring = false

    // MARK: - UIObjectRestoration properties and methods

    /// Makes the object again at launch (UIObjectRestoration).
    public static func object(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIStateRestoring?
    {
        let retVal = self.init()
        retVal.isRestoring = true
        return retVal
    }

    // MARK: - UIStateRestoring properties and methods

    /// The class that makes the object again (UIStateRestoring).
    public var objectRestorationClass: UIObjectRestoration.Type? {
        return type(of: self)
    }
}

// MARK: - Common/CustomViewController.swift

open class CustomViewController: CoreViewController {

    // MARK: - UIViewController overrides

    open override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        // PORT EDIT: #keyPath needs the Objective-C runtime: the key paths' strings instead; and
        // UIViewControllerTransitioningDelegate is not in the package: a stand-in named Resolve… below.
        modalPresentationStyle = UIModalPresentationStyle(
            rawValue: coder.decodeInteger(forKey: "modalPresentationStyle"))!
        #if os(iOS)
            modalPresentationCapturesStatusBarAppearance = coder.decodeBool(
                forKey: "modalPresentationCapturesStatusBarAppearance")
        #endif
        transitioningDelegate =
            coder.decodeObject(forKey: "transitioningDelegate") as? ResolveViewControllerTransitioningDelegate
    }

    open override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        for childViewController in children {
            if let restorationIdentifier = childViewController.restorationIdentifier {
                coder.encode(childViewController, forKey: restorationIdentifier)
            }
        }
        // PORT EDIT: #keyPath needs the Objective-C runtime: the key paths' strings instead.
        coder.encode(modalPresentationStyle.rawValue, forKey: "modalPresentationStyle")
        #if os(iOS)
            coder.encode(
                modalPresentationCapturesStatusBarAppearance, forKey: "modalPresentationCapturesStatusBarAppearance")
        #endif
        if let restorableTransitioningDelegate = transitioningDelegate as? UIStateRestoring {
            coder.encode(restorableTransitioningDelegate, forKey: "transitioningDelegate")
        }
    }

    // PORT EDIT: UIViewControllerTransitioningDelegate is not in the package (stand-in below).
    open override var transitioningDelegate: ResolveViewControllerTransitioningDelegate? {
        didSet {
            strongTransitioningDelegate = transitioningDelegate
        }
    }

    // MARK: - Private properties and methods

    private var strongTransitioningDelegate: ResolveViewControllerTransitioningDelegate?
}

// MARK: - UIKit/RootViewController.swift

final class RootViewController: CoreContainerViewController {

    var isRestoringState = false

    // MARK: - ContainerViewController overrides

    override func applicationFinishedRestoringState() {
        super.applicationFinishedRestoringState()
        isRestoringState = false
        // PORT EDIT: the package has no UIAccessibility; the app's line was:
        //     UIAccessibility.post(notification: .screenChanged, argument: nil)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        guard let activeChild = activeChild, let identifier = activeChild.restorationIdentifier else { return }
        // TODO: Maybe encode the storyboard segue?
        coder.encode(activeChild, forKey: identifier)
    }
}

// MARK: - UIKit/ConversationViewController-UIKit.swift

/// UIKit version of ConversationViewController. UIStoryboards will use this instead of ConversationViewController
final class UIKitConversationViewController: ConversationViewController {

    // MARK: - UIViewController overrides

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        if let restorationIdentifier = textField.restorationIdentifier,
            let text = coder.decodeObject(forKey: restorationIdentifier) as? String
        {
            textField.text = text  // UITextField only preserves the selected range, so we need to restore the text
        }
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        guard let restorationIdentifier = textField.restorationIdentifier else { return }
        coder.encode(textField.text, forKey: restorationIdentifier)
    }
}

// MARK: - UIKit/NavigationController.swift

/// NavigationController base class for the Resolve app
class NavigationController: ResolveNavigationController {

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        #if os(iOS)
            hidesBarsOnTap = coder.decodeBool(forKey: #keyPath(hidesBarsOnTap))
        #endif
        // PORT EDIT: #keyPath needs the Objective-C runtime: the key path's string instead.
        setNavigationBarHidden(coder.decodeBool(forKey: "isNavigationBarHidden"), animated: false)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        #if os(iOS)
            coder.encode(hidesBarsOnTap, forKey: #keyPath(hidesBarsOnTap))
        #endif
        // PORT EDIT: #keyPath needs the Objective-C runtime: the key path's string instead.
        coder.encode(isNavigationBarHidden, forKey: "isNavigationBarHidden")
    }
}

// MARK: - Stand-ins for ResolveKit and the app's other classes

/// ResolveKit's CoreViewController, with the UIViewController member the package lacks.
open class CoreViewController: UIViewController {
    open var transitioningDelegate: ResolveViewControllerTransitioningDelegate?
}
open class ResolveViewController: CustomViewController {}
/// UIKit/ResolveNavigationController.swift.
open class ResolveNavigationController: UINavigationController {}

/// Stands in for UIViewControllerTransitioningDelegate.
public protocol ResolveViewControllerTransitioningDelegate: AnyObject {}

class CoreContainerViewController: CustomViewController {
    var activeChild: UIViewController? {
        didSet {
            oldValue?.willMove(toParent: nil)
            oldValue?.removeFromParent()
            if let activeChild {
                addChild(activeChild)
                activeChild.didMove(toParent: self)
            }
        }
    }
}

class ConversationViewController: ResolveViewController {
    var textField: TextField! = TextField()
}

final class TextField: UIView {
    var text: String?
}

/// A transitioning delegate of the kind the app keeps through restoration (SplitViewController-iOS.swift).
final class ResolveTransitioningDelegate: CustomRestorable, ResolveViewControllerTransitioningDelegate {}

// MARK: - Tests

@MainActor @Suite(.serialized) struct ResolvePortTests {
    private func launch(_ store: TestStore, delegate: AlwaysRestore) throws -> (Journal, RestorationManager) {
        let journal = try store.open()
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "2.0", interfaceIdiom: "phone"))
        manager.delegate = delegate
        manager.register(objectRestorationClass: ResolveTransitioningDelegate.self)
        UIApplication.restorationManager = manager
        return (journal, manager)
    }

    private func makeHierarchy() -> (RootViewController, NavigationController, UIKitConversationViewController) {
        let root = RootViewController()
        root.restorationIdentifier = "RootViewController"
        let conversation = UIKitConversationViewController()
        conversation.restorationIdentifier = "ConversationViewController"
        conversation.textField.restorationIdentifier = "ConversationTextField"
        let navigation = NavigationController()
        navigation.viewControllers = [conversation]
        navigation.restorationIdentifier = "ConversationNavigationController"
        root.activeChild = navigation
        return (root, navigation, conversation)
    }

    @Test func theUnsentMessageTheBarsAndThePresentationStyleComeBack() throws {
        let store = TestStore()
        let delegate = AlwaysRestore()
        do {
            let (journal, manager) = try launch(store, delegate: delegate)
            let (root, navigation, conversation) = makeHierarchy()
            conversation.textField.text = "On my way"
            conversation.modalPresentationStyle = .formSheet
            conversation.transitioningDelegate = ResolveTransitioningDelegate()
            navigation.setNavigationBarHidden(true, animated: false)
            let report = try manager.preserveState(roots: [root])
            #expect(report.problems.isEmpty)
            UIApplication.restorationManager = nil
            try journal.close()
        }

        let (journal, manager) = try launch(store, delegate: delegate)
        let (root, navigation, conversation) = makeHierarchy()
        root.isRestoringState = true
        let report = try manager.restoreState(roots: [root])
        #expect(report.diagnostics.isEmpty)
        #expect(conversation.textField.text == "On my way")
        #expect(conversation.modalPresentationStyle == .formSheet)
        #expect((conversation.transitioningDelegate as? ResolveTransitioningDelegate)?.isRestoring == true)
        #expect(navigation.isNavigationBarHidden)
        #expect(root.isRestoringState == false)
        UIApplication.restorationManager = nil
        try journal.close()
    }
}
