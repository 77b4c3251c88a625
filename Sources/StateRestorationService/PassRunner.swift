import Logging
import StateJournal
import StateRestoration

/// Which pass a request asks for.
enum PassRequest: Sendable, Hashable {
    case incremental
    case full

    var mode: PreservationMode { self == .full ? .full : .incremental }
}

/// The service's state on the main actor: the manager, the roots, and which passes are pending.
///
/// At most one request of each kind is pending, so the service's queue of requests stays bounded
/// however fast the app invalidates.
@MainActor
final class PassRunner {
    let manager: RestorationManager
    let roots: @MainActor () -> [any RestorableController]
    /// The open windows besides the main one, each with its roots; every pass saves each of them.
    let scenes: @MainActor () -> [SceneSession: [any RestorableController]]
    /// What restoring each window at start did.
    private(set) var sceneRestorationReports: [SceneSession: RestorationReport] = [:]
    let logger: Logger
    private var pending: Set<PassRequest> = []
    private(set) var restorationReport: RestorationReport?
    /// Whether the start-up restoration ran (or was not asked for), and who waits for it.
    private(set) var isRestorationFinished = false
    private var restorationWaiters: [CheckedContinuation<RestorationReport?, Never>] = []

    init(
        manager: RestorationManager, roots: @escaping @MainActor () -> [any RestorableController],
        scenes: @escaping @MainActor () -> [SceneSession: [any RestorableController]] = { [:] }, logger: Logger
    ) {
        self.manager = manager
        self.roots = roots
        self.scenes = scenes
        self.logger = logger
    }

    /// Marks a pass as pending; returns whether it was not already.
    func request(_ request: PassRequest) -> Bool {
        pending.insert(request).inserted
    }

    /// Restores the saved state; a failure is logged, and the app starts without it.
    func restore() {
        restoreMainWindow()
        // Then each other window, as UIKit restores the app before its scenes.
        restoreScenes()
        finishRestoration()
    }

    /// The windows whose restoration at start failed (`nil`: the main window). No pass runs until
    /// restoring them succeeds: the app started without their state, and a pass would save that
    /// empty start over every acknowledged change.
    private(set) var unrestored: [SceneSession?] = []

    /// Restores the default scene's state; a failure is logged, the app starts without it, and no
    /// pass runs until a later attempt restores it (``restoreWhatFailedAtStart()``).
    private func restoreMainWindow() {
        do {
            let report = try manager.restoreState(roots: roots())
            restorationReport = report
            logger.info(
                "Restoration at start finished",
                metadata: [
                    "outcome": "\(report.outcome)", "epoch": "\(report.epoch.map { "\($0.epoch)" } ?? "none")",
                    "reason": "\(report.reason.map { "\($0)" } ?? "none")", "restored": "\(report.restored.count)",
                    "skipped": "\(report.skipped.count)", "diagnostics": "\(report.diagnostics.count)",
                ])
        } catch {
            unrestored.append(nil)
            let store = manager.journal.directory.path
            logger.error(
                """
                Restoring the saved state failed, so the app starts without it, and nothing is saved until restoring \
                it succeeds: each pass tries again first (a full disk freed, a directory mounted again). The store \
                keeps its history: check it with `statejournal verify \(store)`, list its epochs with \
                `statejournal log \(store)`, and write a store as of an earlier epoch with `statejournal rewind`.
                """,
                metadata: ["error": "\(error)", "store": "\(store)"])
        }
    }

    /// Restores each window the app opened for the scenes it found, each on its own: a window whose
    /// restoration fails starts without its state, and the others are restored.
    private func restoreScenes() {
        for (scene, sceneRoots) in scenes().sorted(by: { $0.key < $1.key }) {
            do {
                let report = try manager.restoreState(roots: sceneRoots, scene: scene)
                sceneRestorationReports[scene] = report
                logger.info(
                    "Restoration of a window at start finished",
                    metadata: [
                        "scene": "\(scene)", "outcome": "\(report.outcome)",
                        "epoch": "\(report.epoch.map { "\($0.epoch)" } ?? "none")",
                        "restored": "\(report.restored.count)", "skipped": "\(report.skipped.count)",
                    ])
            } catch {
                unrestored.append(scene)
                logger.error(
                    """
                    Restoring a window's saved state failed, so it starts without it, and nothing is saved until \
                    restoring it succeeds
                    """,
                    metadata: ["scene": "\(scene)", "error": "\(error)"])
            }
        }
    }

    /// Restores again the windows whose restoration at start failed, before any pass saves: the app's
    /// empty start must never be saved over the state it could not restore. Reopens a journal that a
    /// failed write poisoned first.
    ///
    /// - Throws: ``RestorationError`` with code ``RestorationError/Code/storeUnavailable`` while a
    ///   window still cannot be restored; the pass then saves nothing.
    private func restoreWhatFailedAtStart() throws {
        guard !unrestored.isEmpty else { return }
        if let failure = manager.journal.failure, failure.isTransient { _ = try? manager.journal.reopen() }
        var failed: [SceneSession?] = []
        var lastError: (any Error)?
        let open = scenes()
        for window in unrestored {
            do {
                if let scene = window {
                    // A window the app no longer shows is not saved by any pass: nothing to hold.
                    guard let sceneRoots = open[scene] else { continue }
                    sceneRestorationReports[scene] = try manager.restoreState(roots: sceneRoots, scene: scene)
                } else {
                    restorationReport = try manager.restoreState(roots: roots())
                }
                logger.notice(
                    "Restored the saved state that could not be restored at start; passes save again",
                    metadata: ["scene": "\(window.map { "\($0)" } ?? "main")"])
            } catch {
                failed.append(window)
                lastError = error
            }
        }
        unrestored = failed
        guard failed.isEmpty else {
            throw RestorationError(
                .storeUnavailable,
                """
                The saved state could not be restored at start, and still cannot be, so nothing was saved: a pass \
                now would replace every acknowledged change with the app's empty start. Passes save again once \
                restoring succeeds.
                """,
                cause: lastError as? (any Error & Sendable))
        }
    }

    /// Marks the start-up restoration as done and wakes whoever waits for it.
    func finishRestoration() {
        isRestorationFinished = true
        let waiters = restorationWaiters
        restorationWaiters = []
        for waiter in waiters { waiter.resume(returning: restorationReport) }
    }

    /// Waits until the start-up restoration has run; returns its report.
    func waitUntilRestored() async -> RestorationReport? {
        if isRestorationFinished { return restorationReport }
        return await withCheckedContinuation { restorationWaiters.append($0) }
    }

    /// Runs a pass, or joins the next one when a pass is running: at most one pass is in flight,
    /// and every caller that arrives meanwhile shares the one after it (full if any of them asked
    /// for full), as commits share a sync. The main actor is held only for the pass's encode step;
    /// the journal compresses, writes and syncs the epoch off it, while this call is suspended.
    ///
    /// A failure is logged here, once per pass; `isFinal` marks the pass run at shutdown, after
    /// which no pass follows.
    @discardableResult
    func preserve(_ request: PassRequest, isFinal: Bool = false) async throws -> PreservationReport {
        if isPassRunning {
            let next = queued ?? QueuedPass()
            queued = next
            if request == .full { next.request = .full }
            if isFinal { next.isFinal = true }
            return try await withCheckedThrowingContinuation { next.callers.append($0) }
        }
        isPassRunning = true
        defer { startQueuedPass() }
        return try await runPass(request, isFinal: isFinal)
    }

    /// The callers waiting for the pass after the running one, and what they asked for.
    private final class QueuedPass {
        var request = PassRequest.incremental
        var isFinal = false
        var callers: [CheckedContinuation<PreservationReport, any Error>] = []
    }

    private var isPassRunning = false
    private var queued: QueuedPass?

    /// How many callers wait for the pass after the running one (for tests).
    var queuedCallerCount: Int { queued?.callers.count ?? 0 }

    /// Runs the queued pass, if any, before any caller that comes later; otherwise marks the runner idle.
    private func startQueuedPass() {
        guard let next = queued else {
            isPassRunning = false
            return
        }
        queued = nil
        Task { @MainActor in
            let result: Result<PreservationReport, any Error>
            do {
                result = .success(try await runPass(next.request, isFinal: next.isFinal))
            } catch {
                result = .failure(error)
            }
            for caller in next.callers { caller.resume(with: result) }
            startQueuedPass()
        }
    }

    private func runPass(_ request: PassRequest, isFinal: Bool) async throws -> PreservationReport {
        pending.remove(request)
        // The final pass tries to recover whatever the backoff: no pass follows it.
        if isFinal { manager.makeRecoveryAttemptDue() }
        do {
            try restoreWhatFailedAtStart()
            // The encode step, on the main actor; the commit runs on the journal's committer. Each
            // open window is a pass (an epoch) of its own, after the main one's.
            let submitted = try manager.submitPreservation(roots: roots(), mode: request.mode)
            var sceneSubmissions: [PendingPreservation] = []
            for (scene, sceneRoots) in scenes().sorted(by: { $0.key < $1.key }) {
                sceneSubmissions.append(
                    try manager.submitPreservation(roots: sceneRoots, scene: scene, mode: request.mode))
            }
            let report = try await submitted.report()
            var held = report.outcome == .restorationInProgress
            for pending in sceneSubmissions {
                let sceneReport = try await pending.report()
                if sceneReport.outcome == .restorationInProgress { held = true }
            }
            if held && !isFinal {
                // The app extended the restoration: its changes wait, and are saved by a pass after it.
                pending.insert(request)
            }
            logger.debug(
                "Preservation pass finished",
                metadata: [
                    "mode": "\(report.mode)", "epoch": "\(report.epoch.map { "\($0.epoch)" } ?? "none")",
                    "written": "\(report.writtenPaths.count)", "removed": "\(report.removedPaths.count)",
                ])
            return report
        } catch {
            if !isFinal { startRecoveryIfNeeded() }
            if (error as? RestorationError)?.code == .storeUnavailable {
                logger.debug(
                    "A preservation pass was not run: the store is unavailable", metadata: ["error": "\(error)"])
                throw error
            }
            if isFinal {
                logger.error(
                    "The final preservation pass failed; the saved state is the last epoch that committed",
                    metadata: ["error": "\(error)"])
            } else {
                logger.error("A preservation pass failed; the next one is full", metadata: ["error": "\(error)"])
            }
            throw error
        }
    }

    // MARK: - Recovery

    private var recoveryTask: Task<Void, Never>?

    /// Starts running recovery attempts, unless they run already: while the store is degraded, a
    /// full pass as often as the manager's `StoreRecoveryPolicy` allows, until it is healthy or
    /// failed. One task at most, whatever the length of the outage.
    func startRecoveryIfNeeded() {
        guard recoveryTask == nil, manager.delayBeforeRecoveryAttempt != nil else { return }
        recoveryTask = Task { @MainActor in
            defer { recoveryTask = nil }
            let clock = manager.configuration.recovery.clock
            while !Task.isCancelled, let delay = manager.delayBeforeRecoveryAttempt {
                if delay > .zero {
                    guard (try? await Self.sleep(for: delay, on: clock)) != nil else { return }
                }
                let report = try? await preserve(.full)
                // A pass the delegate declined (or a restoration put off) saved nothing: the next
                // pass asked for is the catch-up.
                if let report, report.epoch == nil { return }
            }
        }
    }

    /// Stops the recovery attempts, at shutdown: the final pass makes the last one.
    func stopRecovery() {
        recoveryTask?.cancel()
    }

    private static func sleep(for delay: Duration, on clock: some Clock<Duration>) async throws {
        try await clock.sleep(until: clock.now.advanced(by: delay), tolerance: nil)
    }
}
