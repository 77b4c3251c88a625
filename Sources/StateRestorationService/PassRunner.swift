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
    let logger: Logger
    private var pending: Set<PassRequest> = []
    private(set) var restorationReport: RestorationReport?

    init(manager: RestorationManager, roots: @escaping @MainActor () -> [any RestorableController], logger: Logger) {
        self.manager = manager
        self.roots = roots
        self.logger = logger
    }

    /// Marks a pass as pending; returns whether it was not already.
    func request(_ request: PassRequest) -> Bool {
        pending.insert(request).inserted
    }

    /// Restores the saved state; a failure is logged, and the app starts without it.
    func restore() {
        do {
            let report = try manager.restoreState(roots: roots())
            restorationReport = report
            logger.info(
                "Restoration at start finished",
                metadata: ["outcome": "\(report.outcome)", "epoch": "\(report.epoch.map { "\($0.epoch)" } ?? "none")"])
        } catch {
            logger.error("Restoring the saved state failed; the app starts without it", metadata: ["error": "\(error)"])
        }
    }

    /// Runs a pass. A failure is logged here, once; `isFinal` marks the pass run at shutdown, after
    /// which no pass follows.
    func preserve(_ request: PassRequest, isFinal: Bool = false) throws {
        pending.remove(request)
        do {
            let report = try manager.preserveState(roots: roots(), mode: request.mode)
            logger.debug(
                "Preservation pass finished",
                metadata: [
                    "mode": "\(report.mode)", "epoch": "\(report.epoch.map { "\($0.epoch)" } ?? "none")",
                    "written": "\(report.writtenPaths.count)", "removed": "\(report.removedPaths.count)",
                ])
        } catch {
            if isFinal {
                logger.error("The final preservation pass failed; the saved state is the last epoch that committed", metadata: ["error": "\(error)"])
            } else {
                logger.error("A preservation pass failed; the next one is full", metadata: ["error": "\(error)"])
            }
            throw error
        }
    }
}
