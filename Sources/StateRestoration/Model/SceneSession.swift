import Foundation
import StateJournal

/// One window's (or scene's) saved state in a store that holds several: UIKit's `UISceneSession`,
/// AppKit's restorable window.
///
/// A store holds one tree of saved state per scene, each restored, saved and discarded on its own
/// (``RestorationManager/restoreState(roots:scene:asOf:)``,
/// ``RestorationManager/preserveState(roots:scene:mode:)``,
/// ``RestorationManager/discardSceneSessions(_:)``), beside the tree of the *default scene* that
/// the methods without a `scene` parameter save and restore. Apps with one window need no scene.
///
/// A scene's tree lives under one path component of its own, `@scene:` followed by its
/// ``persistentIdentifier``: its root controller `Main` is saved at `@scene:<identifier>/Main`. Keep
/// the identifier with the window (UIKit keeps it with the session), and create the same windows
/// again at launch from ``RestorationManager/openSessions``.
public struct SceneSession: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The prefix of the path component under which a scene's tree is saved.
    static let componentPrefix = "@scene:"

    /// The identifier the scene's state is saved under, stable across launches: UIKit's
    /// `UISceneSession.persistentIdentifier`. Never empty.
    public let persistentIdentifier: String

    /// Creates a session for a window whose state is saved under `persistentIdentifier`.
    ///
    /// The identifier becomes one path component, `@scene:` and the identifier, and a component
    /// holds at most ``JournalLimits/maximumComponentLength`` bytes of UTF-8: an identifier of up to
    /// ``maximumIdentifierLength`` bytes fits. UIKit sets no limit; here a longer one is refused when
    /// the session is created, rather than every pass of the window failing to save it. Derive a
    /// shorter identifier (a UUID, or a digest of a long bookmark) and keep the long one in the
    /// window's own state.
    ///
    /// - Parameter persistentIdentifier: The window's identifier, stable across launches and unique
    ///   in the store, such as a UUID string; `nil` when it is empty or longer than
    ///   ``maximumIdentifierLength`` bytes of UTF-8.
    public init?(persistentIdentifier: String) {
        guard !persistentIdentifier.isEmpty,
            persistentIdentifier.utf8.count <= Self.maximumIdentifierLength
        else { return nil }
        self.persistentIdentifier = persistentIdentifier
    }

    /// The longest ``persistentIdentifier``, in bytes of UTF-8: what a path component holds, less
    /// the `@scene:` prefix.
    public static let maximumIdentifierLength = JournalLimits.maximumComponentLength - componentPrefix.utf8.count

    /// Creates a session for a new window, with a new random identifier, as UIKit creates a session
    /// when the user opens a window.
    public init() {
        persistentIdentifier = UUID().uuidString
    }

    /// The path component the scene's tree is saved under.
    var pathComponent: String { Self.componentPrefix + persistentIdentifier }

    /// The path of the scene's tree: the parent of its root controllers' paths.
    var basePath: RestorationPath { RestorationPath([pathComponent]) }

    /// The scene whose tree holds `path`, or `nil` for a path of the default scene.
    static func owning(_ path: RestorationPath) -> SceneSession? {
        guard let first = path.components.first, first.hasPrefix(componentPrefix) else { return nil }
        return SceneSession(persistentIdentifier: String(first.dropFirst(componentPrefix.count)))
    }

    /// The identifier.
    public var description: String { persistentIdentifier }

    /// Orders sessions by identifier.
    public static func < (lhs: SceneSession, rhs: SceneSession) -> Bool {
        lhs.persistentIdentifier < rhs.persistentIdentifier
    }
}

extension Optional where Wrapped == SceneSession {
    /// Whether `path` belongs to this scene's tree (the default scene's when `nil`). The
    /// application coder's path belongs to no scene.
    func holds(_ path: RestorationPath) -> Bool {
        guard path != RestorationManager.applicationPath else { return false }
        guard let first = path.components.first else { return false }
        switch self {
        case nil: return !first.hasPrefix(SceneSession.componentPrefix)
        case let scene?: return first == scene.pathComponent
        }
    }

    /// The path the scene's root controllers are saved under: the store's root for the default scene.
    var basePath: RestorationPath { self?.basePath ?? RestorationPath([String]()) }
}
