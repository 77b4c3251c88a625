import Foundation
import Logging
import StateJournal

/// Where a manager is in recovering from a failed write or sync.
struct StoreRecovery {
    enum Phase: Equatable {
        /// Nothing to recover.
        case none
        /// The journal is poisoned: the next attempt reopens it.
        case reopen
        /// The journal accepts commits: the next pass is the catch-up.
        case catchUp
        /// The catch-up pass was handed to the journal's committer; passes after it wait behind it.
        case catchingUp
    }

    var health = StoreHealth.healthy
    var phase = Phase.none
    /// When the store became unavailable, on the recovery clock.
    var degradedAt = Duration.zero
    /// Whether the journal was reopened since the store became unavailable: the catch-up pass then
    /// clears the store and writes every object, trusting nothing the journal held.
    var reopened = false
    /// Attempts (reopens, catch-up passes) that failed since then.
    var failedAttempts = 0
    /// When the next attempt may run, on the recovery clock.
    var nextAttemptAt = Duration.zero
    /// Callers of ``RestorationManager/waitUntilHealthy(isolation:)``.
    var waiters: [CheckedContinuation<Void, any Error>] = []
}

extension RestorationManager {
    /// Whether the journal accepts saves: healthy, degraded while the manager recovers from a
    /// failed write or sync, or failed for good.
    ///
    /// ## Recovery
    ///
    /// When a commit fails, or the journal is poisoned by a failed sync, the store becomes
    /// ``StoreHealth/degraded(reason:since:)``. From then on, each pass first tries to recover, as
    /// often as ``RestorationConfiguration/recovery`` allows (passes in between throw
    /// ``RestorationError/Code/storeUnavailable`` at once, without encoding anything):
    ///
    /// 1. If the journal is poisoned, it reopens it (`Journal.reopen()`), which cuts what the
    ///    failed sync did not confirm and trusts nothing the page cache still shows.
    /// 2. It runs a *catch-up pass*: a full pass whose epoch clears the store and writes every
    ///    object again from the live objects, so that the store holds the app's current state
    ///    whatever the failure lost (including epochs acknowledged under `Durability.interval`
    ///    whose sync failed).
    /// 3. Once the catch-up epoch is as durable as the journal's policy promises, the store is
    ///    ``StoreHealth/healthy`` again.
    ///
    /// A failure that is not transient (`JournalError.isTransient`: another store in the
    /// directory, a lock held by another writer, an unreadable format, a permission denied) makes it
    /// ``StoreHealth/failed(_:)``, and the manager stops trying.
    ///
    /// The manager recovers during the passes the app runs; `StateRestorationService` runs them by
    /// itself while the store is degraded.
    public var health: StoreHealth {
        settleSubmittedPasses(waiting: false)
        return recovery.health
    }

    /// Waits until the store is healthy again after a failure (``health``); returns at once when
    /// it is healthy.
    ///
    /// The manager recovers only during passes: call it while something runs passes (a
    /// `StateRestorationService`, or the app's own saves), or it waits until one does.
    ///
    /// - Parameter isolation: The actor the manager belongs to; the caller's, by default.
    /// - Throws: ``RestorationError`` with code ``RestorationError/Code/storeUnavailable`` when the
    ///   store fails for good (``StoreHealth/failed(_:)``).
    public func waitUntilHealthy(isolation: isolated (any Actor)? = #isolation) async throws {
        settleSubmittedPasses(waiting: false)
        switch recovery.health {
        case .healthy: return
        case .failed(let reason): throw unavailable(reason)
        case .degraded: try await withCheckedThrowingContinuation { recovery.waiters.append($0) }
        }
    }

    /// How long until the next recovery attempt may run, on ``RestorationConfiguration/recovery``'s
    /// clock: `nil` when nothing is to be recovered (healthy, failed, or a catch-up in flight).
    package var delayBeforeRecoveryAttempt: Duration? {
        settleSubmittedPasses(waiting: false)
        guard case .degraded = recovery.health, recovery.phase != .catchingUp else { return nil }
        return max(.zero, recovery.nextAttemptAt - recoveryClock.elapsed())
    }

    /// Lets the next pass try to recover at once, whatever the backoff: the service's final pass at
    /// shutdown, after which no pass follows.
    package func makeRecoveryAttemptDue() {
        recovery.nextAttemptAt = .zero
    }

    /// Called at the start of every pass: lets it run, runs a recovery attempt first, or throws.
    ///
    /// - Returns: Whether the pass is the catch-up pass: full, and, after a reopen, clearing the store
    ///   first (``clearsStore``).
    func prepareStoreForPass() throws -> CatchUp? {
        switch recovery.health {
        case .healthy: return nil
        case .failed(let reason): throw unavailable(reason)
        case .degraded(let reason, let since):
            if recovery.phase == .catchingUp { return nil }
            guard recoveryClock.elapsed() >= recovery.nextAttemptAt else { throw unavailable(reason) }
            if recovery.phase == .reopen || journal.failure != nil {
                do {
                    let report = try journal.reopen()
                    configuration.logger.info(
                        "Reopened the journal; the next pass saves the app's state again",
                        metadata: [
                            "epoch": "\(journal.lastCommitted.map { String($0.epoch) } ?? "none")",
                            "truncated_bytes": "\(report.truncatedTailBytes)",
                        ])
                } catch {
                    recordFailedAttempt(error)
                    throw unavailable((error as? JournalError) ?? reason)
                }
                recovery.reopened = true
            }
            recovery.phase = .catchUp
            updateEveryScene { _, state in state.needsFullPass = true }
            // After a reopen nothing the journal held before the failure is trusted: the pass
            // clears the store and writes every object. A failed write the journal cut cleanly
            // left it as it was: a full pass saves what changed.
            if recovery.reopened {
                written.digests.removeAll()
                // With several scenes the pass cannot write the others' objects, so it clears nothing:
                // every path the store holds is distrusted instead, and each scene's next full pass
                // writes all its objects again and removes its paths that are gone.
                if hasNamedScenes, let state = try? journal.state() {
                    // A scene's own path holds a session record or bookkeeping, which no pass
                    // writes or removes.
                    state.forEachEntry { path, _ in
                        if SceneSession.owning(path) == nil || path.components.count > 1 { written[path] = .unknown }
                    }
                    return CatchUp(clearsStore: false, outageStarted: since, failure: reason)
                }
            }
            return CatchUp(clearsStore: recovery.reopened, outageStarted: since, failure: reason)
        }
    }

    /// What a catch-up pass does.
    struct CatchUp {
        /// Whether its epoch removes every path before writing every object.
        var clearsStore: Bool
        /// When the store became unavailable, and why.
        var outageStarted: Date
        var failure: JournalError

        /// `metadata` with the outage's start and cause added, for the catch-up epoch alone.
        func marking(_ metadata: [String: String]) -> [String: String] {
            var marked = metadata
            marked[EpochMetadataKey.outageStarted] = JSONRendering.format(outageStarted)
            marked[EpochMetadataKey.outageReason] = ErrnoName.of(failure.errno)
            return marked
        }
    }

    /// Records a failed commit, write or sync: the store becomes degraded (or stays so, with the
    /// next attempt further away), or failed when the failure cannot clear by itself.
    func noteStoreFailure(_ error: any Error) {
        let poison = journal.failure
        guard let failure = poison ?? (error as? JournalError), poison != nil || failure.isTransient else { return }
        guard case .healthy = recovery.health else {
            recordFailedAttempt(failure)
            return
        }
        let now = recoveryClock.elapsed()
        recovery.health = .degraded(reason: failure, since: Date())
        recovery.phase = poison != nil ? .reopen : .catchUp
        recovery.reopened = false
        recovery.degradedAt = now
        recovery.failedAttempts = 0
        recovery.nextAttemptAt = now
        metrics.recordFault(errno: failure.errno)
        metrics.health.record(1)
        configuration.logger.error(
            "The store is unavailable: saves fail until it recovers, then a full pass saves the app's state again",
            metadata: [
                "error": "\(failure)", "errno": "\(ErrnoName.of(failure.errno))",
                "store": "\(journal.directory.path)",
            ])
    }

    /// A recovery attempt failed: waits longer before the next, or stops for good.
    private func recordFailedAttempt(_ error: any Error) {
        guard case .degraded(let reason, _) = recovery.health else { return }
        let failure = (error as? JournalError) ?? reason
        metrics.recordFault(errno: failure.errno)
        recovery.phase = journal.failure != nil ? .reopen : .catchUp
        guard failure.isTransient || failure.code == .storePoisoned else {
            fail(failure)
            return
        }
        recovery.failedAttempts += 1
        let delay = configuration.recovery.delay(afterFailedAttempts: recovery.failedAttempts)
        recovery.nextAttemptAt = recoveryClock.elapsed() + delay
        configuration.logger.debug(
            "Recovering the store failed; trying again later",
            metadata: [
                "error": "\(failure)", "attempts": "\(recovery.failedAttempts)", "retry_in": "\(delay)",
            ])
    }

    private func fail(_ failure: JournalError) {
        recovery.health = .failed(failure)
        recovery.phase = .none
        metrics.health.record(2)
        configuration.logger.error(
            """
            The store cannot recover while the app runs, so saves fail from now on: fix the cause, then restart the \
            app
            """,
            metadata: ["error": "\(failure)", "store": "\(journal.directory.path)"])
        let waiters = recovery.waiters
        recovery.waiters = []
        for waiter in waiters { waiter.resume(throwing: unavailable(failure)) }
    }

    /// The catch-up pass is as durable as the policy promises: the store is healthy again.
    func noteCatchUpCommitted(_ epoch: EpochInfo?, writtenPaths: Int) {
        guard case .degraded = recovery.health else { return }
        let duration = recoveryClock.elapsed() - recovery.degradedAt
        recovery.health = .healthy
        recovery.phase = .none
        recovery.reopened = false
        metrics.catchUpPasses.increment()
        metrics.degradedDuration.recordNanoseconds(
            duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
        metrics.health.record(0)
        configuration.logger.notice(
            "The store recovered: a catch-up pass saved the app's current state again",
            metadata: [
                "degraded_for": "\(duration)", "epoch": "\(epoch.map { String($0.epoch) } ?? "none")",
                "written_paths": "\(writtenPaths)", "bytes": "\(epoch?.bytes ?? 0)",
                "failed_attempts": "\(recovery.failedAttempts)",
            ])
        let waiters = recovery.waiters
        recovery.waiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// The error a pass throws while the store is unavailable.
    func unavailable(_ reason: JournalError) -> RestorationError {
        RestorationError(
            .storeUnavailable,
            """
            The store is unavailable since a write or sync failed, so nothing was saved; saves succeed again once \
            the manager has reopened it and saved the app's state again.
            """,
            cause: reason)
    }
}
