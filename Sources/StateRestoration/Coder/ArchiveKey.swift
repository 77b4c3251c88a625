import StateJournal

/// The reserved keys of the application coder, which the manager writes and the app can only read.
///
/// The counterparts of UIKit's `UIApplicationStateRestorationBundleVersionKey` and its siblings.
/// They are readable in ``ApplicationRestorationDelegate/shouldRestoreApplicationState(_:)`` and
/// ``ApplicationRestorationDelegate/shouldSaveApplicationState(_:)``; encoding any of them throws
/// ``RestorationError/Code/reservedKey``.
public enum ArchiveKey: Sendable {
    /// The app's bundle version (a string) when the state was saved.
    public static let bundleVersion = "StateRestorationBundleVersion"
    /// The interface idiom (a string the app chose, such as `desktop`, `terminal` or `server`).
    public static let interfaceIdiom = "StateRestorationInterfaceIdiom"
    /// When the state was saved (a `Date`), as the journal's commit time of its epoch, in UTC.
    public static let timestamp = "StateRestorationTimestamp"
    /// The operating system's version (a string) when the state was saved.
    public static let systemVersion = "StateRestorationSystemVersion"

    /// Every reserved key.
    public static let all: Set<String> = [bundleVersion, interfaceIdiom, timestamp, systemVersion]
}
