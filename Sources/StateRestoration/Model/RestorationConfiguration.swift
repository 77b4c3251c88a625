import Foundation

/// What the manager records about the running app in every preservation pass: the values of the
/// archive keys (``ArchiveKey``).
public struct RestorationConfiguration: Sendable, Hashable {
    /// The app's build version, compared with the saved one by migrations and by
    /// ``ApplicationRestorationDelegate/shouldRestoreApplicationState(_:)``.
    public var bundleVersion: String
    /// The kind of interface the app runs with, chosen by the app: `desktop`, `terminal`, `server`…
    public var interfaceIdiom: String
    /// The operating system's version. Defaults to the one `ProcessInfo` reports.
    public var systemVersion: String

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - bundleVersion: The app's build version.
    ///   - interfaceIdiom: The kind of interface.
    ///   - systemVersion: The operating system's version.
    public init(
        bundleVersion: String, interfaceIdiom: String,
        systemVersion: String = ProcessInfo.processInfo.operatingSystemVersionString
    ) {
        self.bundleVersion = bundleVersion
        self.interfaceIdiom = interfaceIdiom
        self.systemVersion = systemVersion
    }
}
