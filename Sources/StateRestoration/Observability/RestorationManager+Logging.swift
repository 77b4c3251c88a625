import Logging
import StateJournal

extension RestorationManager {
    /// Logs what a restoration skipped (notice; warning for a restoration class that is not
    /// registered, a mistake in the app) and what went wrong with restored objects (warning).
    func log(_ report: RestorationReport) {
        let logger = configuration.logger
        let epoch = report.epoch.map { String($0.epoch) } ?? "none"
        logger.info(
            "Restored the saved state",
            metadata: [
                "epoch": "\(epoch)", "reason": "\(report.reason.map { "\($0)" } ?? "none")",
                "restored": "\(report.restored.count)", "skipped": "\(report.skipped.count)",
            ])
        for skipped in report.skipped {
            var level = Logger.Level.notice
            if case .unregisteredRestorationClass = skipped.reason { level = .warning }
            logger.log(
                level: level, "Skipped a saved object during restoration",
                metadata: [
                    "path": "\(skipped.path)", "type": "\(skipped.savedTypeName ?? "unknown")",
                    "reason": "\(skipped.reason)",
                ])
        }
        for diagnostic in report.diagnostics {
            switch diagnostic {
            case .classMismatch(let path, let saved, let obtained):
                logger.warning(
                    "Restored an object of another class than the saved one; its state was not decoded",
                    metadata: ["path": "\(path)", "saved_type": "\(saved)", "obtained_type": "\(obtained)"])
            case .decodeFailed(let path, let message):
                logger.warning(
                    "A restored object failed to decode its state",
                    metadata: ["path": "\(path)", "error": "\(message)"])
            case .createdObjectWithoutParent(let path):
                logger.warning(
                    "An object its restoration class created has no restored parent, so it was not registered",
                    metadata: ["path": "\(path)"])
            case .restoredControllerOutsideHierarchy(let path):
                logger.warning(
                    "A restored controller has no parent holding it, so the next preservation pass drops its state",
                    metadata: ["path": "\(path)"])
            }
        }
    }

    /// Logs what a preservation pass could not save as asked (warning).
    func log(_ problems: [PreservationProblem]) {
        for problem in problems {
            configuration.logger.warning("A preservation pass met a problem", metadata: ["problem": "\(problem)"])
        }
    }
}

extension RestorationSkipReason: CustomStringConvertible {
    /// The reason in a few words, as logs show it.
    public var description: String {
        switch self {
        case .declinedByRestorationClass: "its restoration class returned nil"
        case .ancestorDeclined(let path):
            "its ancestor \(path) was not restored (its restoration class returned nil or is not registered)"
        case .unregisteredRestorationClass(let name): "its restoration class \(name) is not registered"
        case .notFound: "no restoration class, delegate or existing object provided it"
        case .corruptEntry(let message): "its entry could not be read: \(message)"
        case .migrationFailed(let message): "a migration failed: \(message)"
        }
    }
}
