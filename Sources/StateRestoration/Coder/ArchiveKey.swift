import StateJournal

/// The reserved keys of the application coder, which the manager writes and the app can only read.
///
/// The keys are UIKit's: ``bundleVersion`` is the string behind
/// `UIApplicationStateRestorationBundleVersionKey`, and so on, and each of UIKit's constants is
/// declared under its own name too, so that `shouldRestoreApplicationState` code ports as written.
/// They are readable in ``ApplicationRestorationDelegate/shouldRestoreApplicationState(_:)`` and
/// ``ApplicationRestorationDelegate/shouldSaveApplicationState(_:)``; writing any of them is not
/// done, and recorded as a ``CoderDiagnostic/Kind/reservedKey`` problem.
public enum ArchiveKey: Sendable {
    /// The app's bundle version (a string) when the state was saved; UIKit's
    /// `UIApplicationStateRestorationBundleVersionKey`.
    public static let bundleVersion = "UIApplicationStateRestorationBundleVersion"
    /// The interface idiom as a number (an `Int`, `NSNumber`-compatible), as UIKit gives it under
    /// `UIApplicationStateRestorationUserInterfaceIdiomKey`: see ``userInterfaceIdiomNumber(for:)``.
    public static let userInterfaceIdiom = "UIApplicationStateRestorationUserInterfaceIdiom"
    /// When the state was saved (a `Date`), as the journal's commit time of its epoch, in UTC;
    /// UIKit's `UIApplicationStateRestorationTimestampKey`.
    public static let timestamp = "UIApplicationStateRestorationTimestamp"
    /// The operating system's version (a string) when the state was saved; UIKit's
    /// `UIApplicationStateRestorationSystemVersionKey`.
    public static let systemVersion = "UIApplicationStateRestorationSystemVersion"
    /// The interface idiom as the app named it (a string such as `desktop`, `terminal` or
    /// `server`); UIKit has no such key.
    public static let interfaceIdiom = "StateRestorationInterfaceIdiom"

    /// The key under which a controller's own coder holds the storyboard it came from; UIKit's
    /// `UIStateRestorationViewControllerStoryboardKey`.
    ///
    /// It is not an application-coder key and not reserved: Linux has no storyboards, so nothing
    /// writes it unless the app does. A controller that stands for one created from a storyboard
    /// (a factory registered with ``RestorationManager/registerController(forRestorationIdentifier:_:)``,
    /// say) encodes a value here in its `encodeRestorableState(with:)`, typically the storyboard's
    /// name, and its restoration class reads it back as UIKit code reads the storyboard. Its presence
    /// also decides the root rule: a restoration class that returns a new object for a root
    /// controller's path replaces the app's existing root only when the saved state holds this key;
    /// without it, the existing root is kept, as UIKit keeps the window's root controller.
    public static let viewControllerStoryboard = "UIStateRestorationViewControllerStoryboard"

    /// Every reserved key.
    public static let all: Set<String> = [bundleVersion, userInterfaceIdiom, timestamp, systemVersion, interfaceIdiom]

    static func isReserved(_ key: String) -> Bool { all.contains(key) }

    /// The number stored under ``userInterfaceIdiom`` for an idiom name: UIKit's
    /// `UIUserInterfaceIdiom` raw value for its names (`phone` 0, `pad` 1, `tv` 2, `carPlay` 3,
    /// `mac` 5, `vision` 6), the number itself for a name written in decimal, and -1 (UIKit's
    /// `unspecified`) for any other name, such as `desktop`; compare ``interfaceIdiom`` to tell
    /// those apart.
    ///
    /// - Parameter name: The idiom of ``RestorationConfiguration/interfaceIdiom``.
    /// - Returns: The number.
    public static func userInterfaceIdiomNumber(for name: String) -> Int {
        switch name {
        case "phone": 0
        case "pad": 1
        case "tv": 2
        case "carPlay": 3
        case "mac": 5
        case "vision": 6
        default: Int(name) ?? -1
        }
    }
}

/// UIKit's name of ``ArchiveKey/bundleVersion``: the bundle version, a string.
public let UIApplicationStateRestorationBundleVersionKey = ArchiveKey.bundleVersion
/// UIKit's name of ``ArchiveKey/userInterfaceIdiom``: the interface idiom, a number.
public let UIApplicationStateRestorationUserInterfaceIdiomKey = ArchiveKey.userInterfaceIdiom
/// UIKit's name of ``ArchiveKey/timestamp``: when the state was saved, a `Date`.
public let UIApplicationStateRestorationTimestampKey = ArchiveKey.timestamp
/// UIKit's name of ``ArchiveKey/systemVersion``: the system version, a string.
public let UIApplicationStateRestorationSystemVersionKey = ArchiveKey.systemVersion
/// UIKit's name of ``ArchiveKey/viewControllerStoryboard``: in a controller's coder, the storyboard
/// it came from, which only the app writes on Linux.
public let UIStateRestorationViewControllerStoryboardKey = ArchiveKey.viewControllerStoryboard
