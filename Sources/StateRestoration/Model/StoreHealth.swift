import Foundation
import StateJournal

/// Whether a manager's journal accepts saves: what a server exposes as its readiness probe.
///
/// A failed write or sync makes the store ``degraded(reason:since:)``: every save fails, with a
/// ``RestorationError`` of code ``RestorationError/Code/storeUnavailable`` or the journal's own
/// error, until the manager has opened the store again and a catch-up pass has saved the app's
/// current state as durably as the journal's policy promises; then it is ``healthy`` again. A
/// failure that cannot clear by itself (`JournalError.isTransient` is `false`) makes it
/// ``failed(_:)``, which only a person can fix.
public enum StoreHealth: Sendable, CustomStringConvertible {
    /// Saves succeed.
    case healthy
    /// Saves fail since `since` because of `reason`; the manager retries with backoff
    /// (``StoreRecoveryPolicy``).
    case degraded(reason: JournalError, since: Date)
    /// Saves fail, and the manager no longer retries: the store was replaced, is locked by another
    /// writer, cannot be read, or denies access. Fix the cause and restart the app.
    case failed(JournalError)

    /// Whether saves succeed: `true` only when ``healthy``.
    public var isHealthy: Bool {
        if case .healthy = self { return true }
        return false
    }

    /// The state in a word, with the reason: `healthy`, `degraded(ioFailure, errno 5) since …`,
    /// `failed(storeReplaced)`.
    public var description: String {
        switch self {
        case .healthy: "healthy"
        case .degraded(let reason, let since):
            "degraded(\(reason.code)\(reason.errno.map { ", errno \($0)" } ?? "")) since \(since)"
        case .failed(let reason): "failed(\(reason.code))"
        }
    }
}
