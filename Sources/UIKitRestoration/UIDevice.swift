import Foundation
import StateRestoration

/// UIKit's `UIUserInterfaceIdiom`, with UIKit's raw values: the numbers saved under
/// `UIApplication.stateRestorationUserInterfaceIdiomKey`.
public enum UIUserInterfaceIdiom: Int, Sendable {
    /// An idiom UIKit does not name, such as Linux's `desktop`.
    case unspecified = -1
    /// A phone.
    case phone = 0
    /// A tablet.
    case pad = 1
    /// A television.
    case tv = 2
    /// CarPlay.
    case carPlay = 3
    /// A Mac.
    case mac = 5
    /// Vision.
    case vision = 6
}

/// UIKit's `UIDevice`, as far as restoration goes: the interface idiom that restoration code checks
/// (`UIDevice.current.userInterfaceIdiom == .pad`) and saves.
///
/// Linux differs: the idiom is the app's own, the ``RestorationConfiguration/interfaceIdiom`` of
/// `UIApplication.restorationManager` (``unspecified`` for a name UIKit does not know, or while no
/// manager is set), not the hardware's.
@MainActor
public final class UIDevice {
    /// The device the app runs on; UIKit's property.
    public static let current = UIDevice()

    private init() {}

    /// The interface idiom: the restoration manager's, as UIKit's number names it.
    public var userInterfaceIdiom: UIUserInterfaceIdiom {
        guard let name = UIApplication.restorationManager?.configuration.interfaceIdiom else { return .unspecified }
        return UIUserInterfaceIdiom(rawValue: ArchiveKey.userInterfaceIdiomNumber(for: name)) ?? .unspecified
    }

    /// The operating system's name; UIKit's property (`"Linux"`).
    public var systemName: String { "Linux" }

    /// The operating system's version; UIKit's property, from `ProcessInfo`.
    public var systemVersion: String {
        let version = ProcessInfo.processInfo.operatingSystemVersion
        return "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"
    }
}
