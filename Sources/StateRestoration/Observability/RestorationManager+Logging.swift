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
            case .unfinishedRestoration(let epoch, let attempts):
                logger.warning(
                    """
                    Restoring this state began before and never completed: the app exited or crashed first, or \
                    extendStateRestoration() was not balanced by completeStateRestoration()
                    """,
                    metadata: ["restoring_epoch": "\(epoch)", "attempts": "\(attempts)"])
            case .restoredControllerOutsideHierarchy(let path):
                logger.warning(
                    "A restored controller has no parent holding it, so the next preservation pass drops its state",
                    metadata: ["path": "\(path)"])
            case .coder(let diagnostic):
                logger.warning(
                    "A decode under NSCoder's names returned the zero value instead of the saved value",
                    metadata: [
                        "path": "\(diagnostic.path)", "key": "\(diagnostic.key)", "kind": "\(diagnostic.kind.rawValue)",
                        "problem": "\(diagnostic.message)",
                    ])
            }
        }
    }

    /// Logs what a preservation pass could not save as asked (warning), with the path concerned.
    func log(_ problems: [PreservationProblem]) {
        for problem in problems {
            var metadata: Logger.Metadata = ["problem": "\(problem)"]
            let message: Logger.Message
            switch problem {
            case .duplicatePath(let path, let kept, let dropped):
                message = "Two objects claim one restoration path; the second was not saved"
                metadata["path"] = "\(path)"
                metadata["kept_type"] = "\(kept)"
                metadata["dropped_type"] = "\(dropped)"
            case .duplicateInstance(let path, let type, let kept, let dropped):
                message = "Two instances of one type claim one restoration path; the second was not saved"
                metadata["path"] = "\(path)"
                metadata["type"] = "\(type)"
                metadata["kept"] = "\(kept)"
                metadata["dropped"] = "\(dropped)"
            case .objectAtTwoPaths(let type, let kept, let dropped):
                message = "An object was reached at a second restoration path; it is saved at the first only"
                metadata["path"] = "\(dropped)"
                metadata["kept_path"] = "\(kept)"
                metadata["type"] = "\(type)"
            case .encodingFailed(let path, let error):
                message = "An object failed to encode its state; its previous state was kept"
                metadata["path"] = "\(path)"
                metadata["error"] = "\(error)"
            case .unregisteredReference(let type, let path):
                message = "An object referred to an unregistered custom object; null was saved"
                metadata["path"] = "\(path)"
                metadata["type"] = "\(type)"
            case .reservedIdentifier(let path):
                message = "A root controller uses a reserved identifier (starting with @); it was not saved"
                metadata["path"] = "\(path)"
            case .referenceOutsideHierarchy(let type, let path):
                message = "An object referred to an object outside the saved hierarchy; null was saved"
                metadata["path"] = "\(path)"
                metadata["type"] = "\(type)"
            case .coder(let diagnostic):
                message = "A value encoded under NSCoder's names was not written; the rest of the state was"
                metadata["path"] = "\(diagnostic.path)"
                metadata["key"] = "\(diagnostic.key)"
                metadata["kind"] = "\(diagnostic.kind.rawValue)"
            }
            configuration.logger.warning(message, metadata: metadata)
        }
    }

    /// Logs, once per restoration, that a preservation pass was skipped because the restoration is
    /// still held open (notice: it may be an extension the app has not balanced yet).
    func logSkippedPassDuringRestoration() {
        guard var progress = restoration, !progress.loggedSkippedPass else { return }
        progress.loggedSkippedPass = true
        restoration = progress
        configuration.logger.notice(
            """
            A preservation pass was skipped: a restoration is still in progress; nothing is saved until \
            completeStateRestoration() balances every extendStateRestoration()
            """,
            metadata: sceneMetadata(["holds": "\(progress.count)", "restoring_epoch": "\(progress.epoch)"]))
    }

    /// `metadata` with the active scene's identifier, when it is not the default scene.
    private func sceneMetadata(_ metadata: Logger.Metadata) -> Logger.Metadata {
        guard let activeScene else { return metadata }
        return metadata.merging(["scene": "\(activeScene)"]) { $1 }
    }

    /// Logs each restoration still held open when the manager goes away (warning), in every scene.
    func logReleasedDuringRestoration() {
        var held = inactiveScenes.compactMap { scene, state in state.restoration.map { (scene, $0) } }
        if let restoration { held.append((activeScene, restoration)) }
        for (scene, progress) in held {
            var metadata: Logger.Metadata = ["holds": "\(progress.count)", "restoring_epoch": "\(progress.epoch)"]
            if let scene { metadata["scene"] = "\(scene)" }
            configuration.logger.warning(
                """
                The restoration manager was released while a restoration was in progress: extendStateRestoration() \
                was not balanced by completeStateRestoration()
                """,
                metadata: metadata)
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
