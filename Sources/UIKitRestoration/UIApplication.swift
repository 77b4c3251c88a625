import Foundation

/// UIKit's `UIApplication`, as far as restoration goes: the archive keys under Swift's names,
/// `registerObject(forStateRestoration:restorationIdentifier:)`, and a ``shared`` application whose
/// restoration calls forward to the ``RestorationManager`` the app names in ``restorationManager``.
///
/// Linux differs: the manager runs the passes, so call them on it; the application delegate's
/// restoration methods are an ``ApplicationRestorationDelegate`` (``UIApplicationDelegate`` only
/// names the app's delegate object, for code that reads ``delegate``).
@MainActor
public final class UIApplication {
    /// The app's application object; UIKit's property.
    public static let shared = UIApplication()

    /// The app's delegate object, as the app sets it; UIKit's property. Held weakly, as in UIKit.
    public weak var delegate: (any UIApplicationDelegate)?

    private init() {}

    /// Asks the system not to use the launch snapshot; UIKit's method.
    ///
    /// Linux differs: there is no launch snapshot, so it does nothing.
    public func ignoreSnapshotOnNextApplicationLaunch() {}

    /// Keeps the restoration open after the restoration pass returns, until
    /// ``completeStateRestoration()``; UIKit's method, forwarded to ``restorationManager``'s
    /// ``RestorationManager/extendStateRestoration()``. Does nothing while no manager is set.
    public func extendStateRestoration() {
        Self.restorationManager?.extendStateRestoration()
    }

    /// Completes a restoration that ``extendStateRestoration()`` kept open; UIKit's method,
    /// forwarded to ``restorationManager``'s ``RestorationManager/completeStateRestoration()``.
    /// Does nothing while no manager is set.
    ///
    /// Linux differs: completing commits a marker epoch, which can fail; as UIKit's method does not
    /// throw, the failure is logged at `error` with the manager's logger (the restoration counts as
    /// complete for this process all the same). Call the manager's method to handle it.
    public func completeStateRestoration() {
        guard let manager = Self.restorationManager else { return }
        do {
            try manager.completeStateRestoration()
        } catch {
            manager.configuration.logger.error(
                "completeStateRestoration(): the restoration's completion could not be recorded: \(error)")
        }
    }

    /// The bundle version (a string) of the app that saved the state, in the application coder;
    /// UIKit's key, ``ArchiveKey/bundleVersion``.
    public nonisolated static let stateRestorationBundleVersionKey = ArchiveKey.bundleVersion
    /// The interface idiom (a number, UIKit's `UIUserInterfaceIdiom` raw value) that saved the
    /// state; ``ArchiveKey/userInterfaceIdiom``. Linux differs: an idiom UIKit does not name (such as
    /// `desktop`) is -1; ``ArchiveKey/interfaceIdiom`` holds the name.
    public nonisolated static let stateRestorationUserInterfaceIdiomKey = ArchiveKey.userInterfaceIdiom
    /// When the state was saved (a `Date`); ``ArchiveKey/timestamp``: the commit time of the
    /// journal's epoch.
    public nonisolated static let stateRestorationTimestampKey = ArchiveKey.timestamp
    /// The system version (a string) that saved the state; ``ArchiveKey/systemVersion``.
    public nonisolated static let stateRestorationSystemVersionKey = ArchiveKey.systemVersion
    /// In a view controller's coder, the storyboard the controller came from;
    /// ``ArchiveKey/viewControllerStoryboard``.
    ///
    /// Linux differs: there are no storyboards and nothing writes this key by itself, where UIKit
    /// writes the `UIStoryboard` for every controller a storyboard made. A controller that stands
    /// for a storyboard's (one a factory registered with
    /// ``RestorationManager/registerController(forRestorationIdentifier:_:)`` makes, say) encodes a
    /// value under it, the storyboard's name for instance, and its restoration class decodes that
    /// value where UIKit code decodes a `UIStoryboard`. When the key is present in a root
    /// controller's saved state, a new controller its restoration class returns replaces the app's
    /// existing root; when it is absent, the existing root is kept and restored, as UIKit keeps the
    /// window's root controller.
    public nonisolated static let stateRestorationViewControllerStoryboardKey = ArchiveKey.viewControllerStoryboard

    /// The manager that ``registerObject(forStateRestoration:restorationIdentifier:)`` registers
    /// objects with: set it at launch, where UIKit had its shared application. Held weakly.
    ///
    /// Setting it registers the objects registered while it was `nil`, in order (UIKit code often
    /// registers an object in its initializer, before the app made its manager).
    public static var restorationManager: RestorationManager? {
        get { manager }
        set {
            manager = newValue
            guard let newValue else { return }
            let waiting = pending
            pending = []
            for (object, identifier) in waiting {
                newValue.registerObject(forStateRestoration: object, restorationIdentifier: identifier)
            }
        }
    }

    /// Registers a custom object for preservation and restoration under an identifier, scoped by
    /// its `restorationParent`; UIKit's class method.
    ///
    /// It calls ``RestorationManager/registerObject(forStateRestoration:restorationIdentifier:)`` on
    /// ``restorationManager``, or, while that is `nil`, holds the object and registers it when a
    /// manager is set.
    ///
    /// - Parameters:
    ///   - object: The object.
    ///   - restorationIdentifier: Its identifier, unique within its parent.
    public static func registerObject(forStateRestoration object: any UIStateRestoring, restorationIdentifier: String) {
        guard let manager else {
            pending.append((object, restorationIdentifier))
            return
        }
        manager.registerObject(forStateRestoration: object, restorationIdentifier: restorationIdentifier)
    }

    private static weak var manager: RestorationManager?
    private static var pending: [(any UIStateRestoring, String)] = []
}

/// UIKit's `UIApplicationDelegate`, as far as this package goes: what ``UIApplication/delegate``
/// holds, so that `UIApplication.shared.delegate as? AppDelegate` compiles.
///
/// Linux differs: its restoration methods are ``ApplicationRestorationDelegate``'s, under the
/// package's names. The app delegate, main-actor as in UIKit, adopts that protocol with an isolated
/// conformance (`extension AppDelegate: @MainActor ApplicationRestorationDelegate`), so that its
/// methods reach main-actor state, and is set as the manager's delegate from the main actor.
@MainActor
public protocol UIApplicationDelegate: AnyObject {}
