import Foundation
import Logging
import ServiceLifecycle
import StateJournal
import StateRestoration

/// Runs state restoration as a service of a swift-service-lifecycle `ServiceGroup`: restores at
/// start, preserves as objects are invalidated, preserves on a timer as a floor, and preserves a
/// final epoch and syncs on graceful shutdown.
///
/// ## Concurrency
///
/// A `RestorationManager` and the objects it walks belong to one isolation domain. This service
/// requires that domain to be the **main actor**: create the manager and the roots there, create
/// the service there, and call ``invalidate(_:)`` there, where the app changes its objects. The
/// service itself is `Sendable`; ``run()`` runs on the service group's task and hops to the main
/// actor for each pass, so a pass never overlaps the app's own main-actor code and never touches an
/// object from another thread. A pass holds the main actor only while it encodes: the journal's
/// background thread compresses, writes and syncs the epoch (`RestorationManager.submitPreservation`),
/// so even `Durability.everyCommit` does not make the main actor wait for the disk. At most one pass
/// is in flight; callers and scheduled passes that arrive meanwhile share the next one.
///
/// ## Passes
///
/// - At start, ``run()`` restores the saved state with
///   `RestorationManager.restoreState(roots:asOf:)`.
/// - ``invalidate(_:)`` marks an object dirty and, if no pass is pending, schedules an
///   incremental pass ``Configuration/coalescingDelay`` later; every invalidation until then is
///   saved by that one pass, as one epoch. So do an object's own `invalidateRestorableState()`
///   and setting a `@Preserved` property; after the manager's `invalidateRestorableState(for:)`,
///   call ``setNeedsPreservation()``.
/// - Every ``Configuration/fullPassInterval``, a full pass saves whatever changed without being
///   invalidated.
/// - Both are measured on ``Configuration/clock``, a `ContinuousClock` unless a test passes a
///   clock of its own.
/// - On graceful shutdown (or cancellation), a final full pass runs, then `Journal.sync()` makes
///   everything durable, whatever the durability policy; then ``run()`` returns. The app owns the
///   journal and closes it afterwards.
///
/// A pass that throws is logged and the next one is full; only the final pass and sync make
/// ``run()`` throw. When the journal fails to write or sync, the service reopens it and saves the
/// app's state again by itself (see ``health``).
public final class StateRestorationService: Service {
    /// How the service schedules its passes.
    public struct Configuration: Sendable {
        /// How long after the first invalidation the incremental pass runs; invalidations in that
        /// window share its epoch. Defaults to half a second.
        public var coalescingDelay: Duration
        /// How often a full pass runs even without invalidations, or `nil` for never. Defaults to
        /// one minute.
        public var fullPassInterval: Duration?
        /// Whether ``StateRestorationService/run()`` restores the saved state before preserving.
        /// Defaults to `true`; set it to `false` when the app restores by itself first.
        public var restoresAtStart: Bool
        /// Where the service logs its passes (debug), restoration (info) and failures (error).
        /// Defaults to a logger that discards everything.
        public var logger: Logger
        /// The clock that measures ``coalescingDelay`` and ``fullPassInterval``. Defaults to a
        /// `ContinuousClock`; a test passes a clock it advances by hand, so that what a pass saves
        /// does not depend on how fast the machine runs.
        public var clock: any Clock<Duration>
        /// What restoring at start does when the same state crashed the app twice in a row.
        /// ``CrashLoopFallback/never`` by default: a service's state is data, and an older state
        /// restored in its place would undo acknowledged changes at the next save. The service sets
        /// it on the manager it runs, over the manager's configuration. Choose
        /// ``CrashLoopFallback/restoreEarlierState`` for state the user can rebuild, as UIKit does for
        /// screens.
        public var crashLoopFallback = CrashLoopFallback.never

        /// Creates a configuration; every parameter has a default.
        ///
        /// - Parameters:
        ///   - coalescingDelay: How long invalidations are gathered into one epoch.
        ///   - fullPassInterval: How often a full pass runs, or `nil` for never.
        ///   - restoresAtStart: Whether to restore before preserving.
        ///   - logger: Where the service logs; by default nothing is logged.
        ///   - clock: The clock the delay and the interval are measured on.
        ///   - crashLoopFallback: What restoring at start does after two crashes in a row; never
        ///     falling back, by default.
        public init(
            coalescingDelay: Duration = .milliseconds(500),
            fullPassInterval: Duration? = .seconds(60),
            restoresAtStart: Bool = true,
            logger: Logger = Logger(label: "StateRestorationService", factory: { _ in SwiftLogNoOpLogHandler() }),
            clock: any Clock<Duration> = ContinuousClock(),
            crashLoopFallback: CrashLoopFallback = .never
        ) {
            self.coalescingDelay = coalescingDelay
            self.fullPassInterval = fullPassInterval
            self.restoresAtStart = restoresAtStart
            self.logger = logger
            self.clock = clock
            self.crashLoopFallback = crashLoopFallback
        }
    }

    /// How the service schedules its passes.
    public let configuration: Configuration
    /// The journal the manager writes to.
    public let journal: Journal

    /// Internal rather than private so that tests can watch the callers waiting for a pass.
    let passes: PassRunner
    private let events: AsyncStream<PassRequest>
    private let requests: AsyncStream<PassRequest>.Continuation

    /// Creates the service over a manager whose delegate, restoration classes and registered
    /// objects are set up.
    ///
    /// - Parameters:
    ///   - manager: The manager; from now on, run passes through the service only.
    ///   - roots: Returns the root controllers, read at each pass.
    ///   - configuration: How passes are scheduled.
    @MainActor
    public convenience init(
        manager: RestorationManager, roots: @escaping @MainActor () -> [any RestorableController],
        configuration: Configuration = Configuration()
    ) {
        self.init(manager: manager, roots: roots, scenes: { [:] }, configuration: configuration)
    }

    /// Creates the service over a manager for an app with several windows: the main window's
    /// roots (the default scene) and each other open window's, by scene session.
    ///
    /// At start, the service restores the main window, then each window `scenes` returns (create
    /// them at launch for `RestorationManager.openSessions`). Every pass, scheduled or final,
    /// saves the main window and then each window `scenes` returns at that moment, each as an epoch
    /// of its own, so no window's change waits for another's. When the user closes a window, stop
    /// returning it and discard it with `RestorationManager.discardSceneSessions(_:)`, on the main
    /// actor.
    ///
    /// - Parameters:
    ///   - manager: The manager; from now on, run passes through the service only.
    ///   - roots: Returns the main window's root controllers, read at each pass.
    ///   - scenes: Returns the other open windows' root controllers by scene session, read at each
    ///     pass.
    ///   - configuration: How passes are scheduled.
    @MainActor
    public init(
        manager: RestorationManager, roots: @escaping @MainActor () -> [any RestorableController],
        scenes: @escaping @MainActor () -> [SceneSession: [any RestorableController]],
        configuration: Configuration = Configuration()
    ) {
        self.configuration = configuration
        self.journal = manager.journal
        manager.crashLoopFallbackOverride = configuration.crashLoopFallback
        (events, requests) = AsyncStream.makeStream(of: PassRequest.self)
        passes = PassRunner(manager: manager, roots: roots, scenes: scenes, logger: configuration.logger)
        // An object that invalidates itself (its own invalidateRestorableState(), a @Preserved
        // property) schedules a pass too.
        manager.selfInvalidationHandler = { [weak self] in
            guard let self else { return }
            if Thread.isMainThread {
                MainActor.assumeIsolated { self.setNeedsPreservation() }
            } else {
                Task { @MainActor in self.setNeedsPreservation() }
            }
        }
    }

    /// Marks an object's state as changed and schedules an incremental pass: the service's
    /// counterpart of `RestorationManager.invalidateRestorableState(for:)`.
    ///
    /// - Parameter object: The object whose state changed.
    /// - Complexity: O(1).
    @MainActor
    public func invalidate(_ object: any StateRestoring) {
        passes.manager.invalidateRestorableState(for: object)
        setNeedsPreservation()
    }

    /// Schedules an incremental pass for objects the app invalidated through the manager itself.
    ///
    /// An object's own `invalidateRestorableState()` and setting a `@Preserved` property call it
    /// already.
    @MainActor
    public func setNeedsPreservation() {
        if passes.request(.incremental) { requests.yield(.incremental) }
    }

    /// What the restoration at start did, once it ran.
    @MainActor
    public var restorationReport: RestorationReport? { passes.restorationReport }

    /// What restoring each window besides the main one at start did, by scene session; empty until
    /// the restoration at start finished.
    @MainActor
    public var sceneRestorationReports: [SceneSession: RestorationReport] { passes.sceneRestorationReports }

    /// Waits until the start-up restoration has run, and returns its report (`nil` when it failed
    /// or was not asked for). Changes the app makes before then are kept and saved after it.
    ///
    /// Call it from a task that ``run()`` does not wait for, for instance before accepting
    /// requests in a server; it returns at once once the restoration has run.
    @discardableResult
    public func waitUntilRestored() async -> RestorationReport? {
        await passes.waitUntilRestored()
    }

    /// Saves every change invalidated before the call (``invalidate(_:)`` or the manager's
    /// `invalidateRestorableState(for:)`), and returns the epoch that holds them once it is as
    /// durable as the journal's policy promises: on stable storage under `Durability.everyCommit`,
    /// handed to the operating system otherwise (then `Journal.lastDurable` tells when it is on
    /// disk, or call `Journal.sync()`).
    ///
    /// Runs an incremental pass after the start-up restoration (and after any restoration the app
    /// extended): its encode step on the main actor, its commit on the journal's background thread,
    /// with the main actor free while this call waits. Callers that arrive while a pass is in flight
    /// share the next one, which starts once that one is durable: when nothing changed since, no
    /// epoch is written and the latest epoch is returned.
    ///
    /// - Returns: The epoch holding the changes, or `nil` when nothing was ever saved (the delegate
    ///   declined).
    /// - Throws: `JournalError` when the journal cannot be written, or `CancellationError`.
    @MainActor
    @discardableResult
    public func preserve() async throws -> EpochInfo? {
        _ = await passes.waitUntilRestored()
        while passes.manager.isRestoring {
            try await Task.sleep(for: .milliseconds(10))
        }
        let report = try await passes.preserve(.incremental)
        if let epoch = report.epoch { return epoch }
        if report.outcome == .declined { return nil }
        return journal.lastCommitted
    }

    /// Whether the journal accepts saves: `StoreHealth.healthy`, `degraded` while the service
    /// recovers from a failed write or sync, or `failed` for good. Expose it as a readiness probe.
    ///
    /// While the store is degraded, the service retries by itself as the manager's
    /// `RestorationConfiguration.recovery` allows: it reopens the journal and runs a full pass that
    /// saves every live object again, and ``preserve()`` throws at once (`RestorationError` with
    /// code `storeUnavailable`) until that pass is as durable as the journal's policy promises.
    @MainActor
    public var health: StoreHealth { passes.manager.health }

    /// Waits until the store is healthy again after a failure; returns at once when it is.
    ///
    /// - Throws: `RestorationError` with code `storeUnavailable` when the store fails for good.
    @MainActor
    public func waitUntilHealthy() async throws {
        try await passes.manager.waitUntilHealthy()
    }

    /// Restores, then preserves until graceful shutdown or cancellation, then preserves a final
    /// epoch and syncs the journal.
    ///
    /// Call it once, from a `ServiceGroup` or directly.
    ///
    /// - Throws: The error of the final pass or of the sync; the saved state is then the last
    ///   epoch that committed.
    public func run() async throws {
        if configuration.restoresAtStart { await passes.restore() } else { await passes.finishRestoration() }
        await cancelWhenGracefulShutdown { [self] in await preserveUntilCancelled() }
        requests.finish()
        await passes.stopRecovery()
        let logger = configuration.logger
        // The runner logs a failed pass itself.
        try await passes.preserve(.full, isFinal: true)
        do {
            try journal.sync()
        } catch {
            logger.error(
                "Syncing the journal after the final preservation pass failed", metadata: ["error": "\(error)"])
            throw error
        }
        logger.info(
            "Preserved the final state and synced the journal",
            metadata: ["epoch": "\(journal.lastCommitted?.epoch ?? 0)"])
    }

    /// Runs the passes that requests ask for, until the task is cancelled.
    private func preserveUntilCancelled() async {
        let clock = configuration.clock
        await withTaskGroup(of: Void.self) { group in
            if let interval = configuration.fullPassInterval {
                group.addTask { [passes, requests] in
                    while (try? await clock.sleep(for: interval)) != nil {
                        if await passes.request(.full) { requests.yield(.full) }
                    }
                }
            }
            for await request in events {
                if request == .incremental {
                    guard (try? await clock.sleep(for: configuration.coalescingDelay)) != nil else { break }
                }
                let report = try? await passes.preserve(request)
                if report?.outcome == .restorationInProgress {
                    // Saved after the restoration the app extended completes.
                    guard (try? await clock.sleep(for: configuration.coalescingDelay)) != nil else { break }
                    requests.yield(request)
                }
            }
            group.cancelAll()
        }
    }
}
