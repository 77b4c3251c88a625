import Foundation
import Logging
import Metrics

/// What the manager records about the running app in every preservation pass: the values of the
/// archive keys (``ArchiveKey``), and where the manager reports what it does.
///
/// Two configurations are equal when their archive keys are; the logger and the recovery policy
/// are not compared.
public struct RestorationConfiguration: Sendable, Hashable {
    /// The app's build version, compared with the saved one by migrations and by
    /// ``ApplicationRestorationDelegate/shouldRestoreApplicationState(_:)``.
    public var bundleVersion: String
    /// The kind of interface the app runs with, chosen by the app: `desktop`, `terminal`, `server`…
    public var interfaceIdiom: String
    /// The operating system's version. Defaults to the one `ProcessInfo` reports.
    public var systemVersion: String
    /// Where the manager logs restorations (info), skipped objects with their reason (notice;
    /// warning for an unregistered restoration class), class mismatches, failed decodes,
    /// preservation problems (duplicate paths, references outside the hierarchy…) and restorations
    /// whose `extendStateRestoration()` was not balanced (warning).
    ///
    /// Defaults to a logger that discards everything.
    public var logger: Logger
    /// How the manager retries after its journal failed to write or sync; see ``StoreHealth``.
    public var recovery = StoreRecoveryPolicy()
    /// What a restoration does when restoring the same state crashed twice in a row; by default,
    /// as in UIKit, it restores the state saved before. `StateRestorationService` sets its own
    /// (``CrashLoopFallback/never`` by default) on the manager it runs.
    public var crashLoopFallback = CrashLoopFallback.restoreEarlierState
    /// The factory metrics are created with; `nil` (the default) means the global `MetricsSystem`.
    package var metricsFactory: (any MetricsFactory)?

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - bundleVersion: The app's build version.
    ///   - interfaceIdiom: The kind of interface.
    ///   - systemVersion: The operating system's version.
    ///   - logger: Where the manager logs; by default nothing is logged.
    public init(
        bundleVersion: String, interfaceIdiom: String,
        systemVersion: String = ProcessInfo.processInfo.operatingSystemVersionString,
        logger: Logger = Logger(label: "StateRestoration", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.logger = logger
        self.bundleVersion = bundleVersion
        self.interfaceIdiom = interfaceIdiom
        self.systemVersion = systemVersion
    }

    /// Whether two configurations record the same archive keys.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.bundleVersion == rhs.bundleVersion && lhs.interfaceIdiom == rhs.interfaceIdiom
            && lhs.systemVersion == rhs.systemVersion
    }

    /// Hashes the archive keys.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bundleVersion)
        hasher.combine(interfaceIdiom)
        hasher.combine(systemVersion)
    }
}
