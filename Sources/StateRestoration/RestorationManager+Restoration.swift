import Foundation
import StateJournal

extension RestorationManager {
    /// Restores the saved state into the app, ending with the finish pass.
    ///
    /// The order, as in UIKit:
    /// 1. Choose the state: the latest, or `epoch`, or (after two restorations of it in a row that
    ///    crashed in the app's restoration code or were held open and never completed, under
    ///    ``CrashLoopFallback/restoreEarlierState``) the state before the one that failed; see
    ///    ``RestorationReason`` and ``CrashLoopFallback``.
    /// 2. Ask ``ApplicationRestorationDelegate/shouldRestoreApplicationState(_:)`` with the archive
    ///    keys. Declining changes nothing in the journal.
    /// 3. Commit a `restorationBegan` marker epoch (no entries), and arm the journal's crash note
    ///    until the app's restoration code (steps 4 to 7) returns.
    /// 4. For each saved path, parents before children: apply registered migrations, then obtain
    ///    the object: its restoration class (whose `nil` skips the path and everything under it,
    ///    with no other lookup), else the delegate, else what already exists at the path (a root,
    ///    a child of the restored parent, a registered object). Custom objects: their object
    ///    restoration class, else a registered object.
    /// 5. Decode every obtained object with its own coder, parents first, unless its type is
    ///    neither the saved type nor a subclass of it (reported as a class mismatch).
    /// 6. Call `applicationFinishedRestoringState()` on every restored object, once each.
    /// 7. Call the delegate's ``ApplicationRestorationDelegate/didDecodeRestorableState(_:)``.
    ///    Then report each controller that a restoration class or the delegate returned and that no
    ///    parent holds (``RestorationDiagnostic/restoredControllerOutsideHierarchy(_:)``): the next
    ///    preservation pass would drop its state.
    /// 8. Release the restoration's own hold: unless ``extendStateRestoration()`` was called, the
    ///    restoration completes now and a `restorationCompleted` marker epoch is committed. The
    ///    marker records the report (``EpochMetadataKey/restorationReport``), bounded in size.
    ///
    /// Errors thrown by objects while decoding are reported, never propagated.
    ///
    /// - Parameters:
    ///   - roots: The root controllers the app created at launch, found by their identifiers.
    ///   - epoch: The epoch whose state to restore (time travel), or `nil` for the automatic choice.
    /// - Returns: What was restored, what was skipped and why.
    /// - Throws: ``RestorationError/Code/restorationInProgress`` when a restoration has not
    ///   completed, or `JournalError` (`noSuchEpoch`
    ///   for an epoch that is not retained).
    @discardableResult
    public func restoreState(roots: [any RestorableController], asOf epoch: UInt64? = nil) throws -> RestorationReport {
        try restore(roots: roots, scene: nil, asOf: epoch)
    }

    /// Restores one scene's saved state into its window, ending with the finish pass, as
    /// ``restoreState(roots:asOf:)`` does for the default scene.
    ///
    /// The restoration reads only the scene's paths, finds `roots` at the scene's top level, and
    /// gives restoration classes and the delegate identifier paths that start at the scene's root
    /// controller (without the scene's own component), as UIKit does. Its markers name the scene
    /// (``EpochMetadataKey/scene``), so each scene's crash-loop protection is its own: a scene whose
    /// restorations began and never completed twice in a row falls back to the state its previous
    /// pass saved, while the other scenes restore their latest. Its `restorationBegan` marker also
    /// writes the attempts in an entry at the scene's own path, which its `restorationCompleted`
    /// marker removes: compaction may fold every marker of one scene while others write, and keeps
    /// that entry.
    ///
    /// Scenes restore independently: while one scene's restoration is in progress (extended with
    /// ``extendStateRestoration(scene:)``), other scenes restore, save and are discarded as usual;
    /// only that scene's passes are skipped until ``completeStateRestoration(scene:)``. Restore
    /// several scenes one after another, in any order.
    ///
    /// - Parameters:
    ///   - roots: The root controllers of the scene's window, found by their identifiers.
    ///   - scene: The scene, typically one of ``openSessions``.
    ///   - epoch: The epoch whose state of the scene to restore, or `nil` for the automatic choice.
    /// - Returns: What was restored in this scene, what was skipped and why.
    /// - Throws: ``RestorationError/Code/restorationInProgress`` when a restoration of this scene has
    ///   not completed, or `JournalError` (`noSuchEpoch` for an epoch that is not retained).
    @discardableResult
    public func restoreState(roots: [any RestorableController], scene: SceneSession, asOf epoch: UInt64? = nil)
        throws -> RestorationReport
    {
        try restore(roots: roots, scene: scene, asOf: epoch)
    }

    private func restore(roots: [any RestorableController], scene: SceneSession?, asOf epoch: UInt64?) throws
        -> RestorationReport
    {
        settleSubmittedPasses(waiting: true)
        activate(scene)
        guard restoration == nil else {
            throw RestorationError(
                .restorationInProgress,
                scene == nil
                    ? "A restoration is in progress; call completeStateRestoration() before restoring again."
                    : "A restoration of scene \(scene!) is in progress; call completeStateRestoration(scene:) before "
                        + "restoring it again.")
        }
        try recordCrashedRestoration()
        var (history, choice, state) = try chooseState(asOf: epoch, scene: scene)
        noteCrashLoop(choice, scene: scene)
        var report = RestorationReport(outcome: .nothingToRestore, epoch: nil, reason: choice.reason)
        report.scene = scene
        guard let target = choice.stateEpoch, let info = state?.epoch, var state else { return report }
        report.epoch = info
        let savedMetadata = Self.savedMetadata(of: info, restoring: target)
        let applicationBytes = state[Self.applicationPath]
        if hasNamedScenes || scene != nil { state = Self.state(of: scene, in: state) }
        guard state.count > (applicationBytes == nil ? 0 : 1) else { return report }

        var appValues: [String: RestorableValue] = [:]
        if let bytes = applicationBytes, let entry = try? RestorableEntry(decoding: bytes) {
            appValues = entry.values
        }
        let coder = applicationCoder(
            metadata: savedMetadata, timestamp: info.timestamp, appValues: appValues, reason: choice.reason)
        guard let delegate, delegate.shouldRestoreApplicationState(coder) else {
            report.outcome = .declined
            return report
        }

        let latestState = history.last(where: CrashLoopGuard.changesState)?.epoch
        let restoredLatest = latestState.map { target >= $0 } ?? true
        var progress = RestorationProgress(
            epoch: target, restoredLatest: restoredLatest, savedMetadata: savedMetadata, count: 1)
        var began = markerMetadata(.restorationBegan, progress)
        began[EpochMetadataKey.unfinishedAttempts] = String(choice.unfinishedAttempts)
        // From here until the app's restoration code returns, a crash signal leaves a note that the
        // next launch records as a failed restoration; a kill from outside leaves none.
        let token = armCrashNote(restoring: target, scene: scene)
        defer { journal.disarmCrashNote() }
        began[EpochMetadataKey.restorationToken] = token
        // A scene's failed attempts are also kept in an entry at its own path, which compaction keeps:
        // in a store with several scenes, it may fold every marker of one scene while others write.
        var bookkeeping: [JournalChange] = []
        var attempts: CrashLoopGuard.RecordedAttempts?
        if let scene, choice.unfinishedAttempts > 0 || token == nil {
            // Without a crash note, the attempt counts as failed until it completes, as before notes.
            let recorded = CrashLoopGuard.RecordedAttempts(
                epoch: target, attempts: choice.unfinishedAttempts + (token == nil ? 1 : 0),
                restoredLatest: restoredLatest)
            bookkeeping = [.put(scene.basePath, Self.encodeAttempts(recorded))]
            attempts = recorded
        }
        try journal.commit(bookkeeping, metadata: began)
        if let scene, let attempts {
            sceneAttempts[scene] = attempts
            recordedSessions.insert(scene)
        }
        progress.token = token
        restoration = progress
        // Until the pass returns, the calls without a scene made from it are this scene's.
        sceneBeingRestored = .some(scene)
        defer { sceneBeingRestored = nil }
        // What this scene's last save wrote, so that a first pass that changes nothing commits
        // nothing (the open knows it only when that save was the store's last epoch).
        if let latest = history.last(where: {
            $0.metadata[EpochMetadataKey.kind] == RestorationEpochKind.preservation.rawValue
        }) {
            lastPreservationMetadata = latest.metadata
        }
        history = []

        // Registered objects are found under the parent their restorationParent names now.
        registry.rescopeAll()
        let pass = RestorationPass(
            RestorationPass.Input(
                state: state, roots: roots, registry: registry, typeNames: typeNames, delegate: delegate,
                savedBundleVersion: savedMetadata[EpochMetadataKey.bundleVersion],
                currentBundleVersion: configuration.bundleVersion, base: scene.basePath),
            report: report)
        pass.run()
        PreservingManagers.shared.record(pass.obtained.values.lazy.map { $0 as AnyObject }, for: self)
        for (object, identifier, parent) in pass.created where registry.registration(of: object) == nil {
            registry.register(object, identifier: identifier, parent: parent)
        }
        report = pass.report
        report.outcome = .restored
        if case .crashLoopFallback(let avoided) = choice.reason {
            report.diagnostics.append(.unfinishedRestoration(epoch: avoided, attempts: choice.avoidedAttempts))
        }
        if choice.reportedAttempts > 0 {
            report.diagnostics.append(.unfinishedRestoration(epoch: target, attempts: choice.reportedAttempts))
        }
        if !report.skipped.isEmpty { metrics.skips.increment(by: report.skipped.count) }
        delegate.didDecodeRestorableState(coder)
        journal.disarmCrashNote()
        // After the finish pass and didDecode, where the app attaches what it restored.
        for path in pass.controllersNoParentHolds(roots: roots) {
            report.diagnostics.append(.restoredControllerOutsideHierarchy(path))
        }
        log(report)
        // The app's code during the pass may have run another scene's pass.
        activate(scene)
        restoration?.encodedReport = RecordedRestorationReport(report).encoded()
        try completeRestoration(scene: scene)
        if let held = restoration, held.token != nil {
            // Held open by extendStateRestoration(): failed, unless a completion follows.
            var metadata = markerMetadata(.restorationHeld, held)
            metadata[EpochMetadataKey.restorationToken] = held.token
            metadata[EpochMetadataKey.unfinishedAttempts] = String(choice.unfinishedAttempts + 1)
            try journal.commit(failureBookkeeping(scene: scene, restoring: held.epoch), metadata: metadata)
        }
        return report
    }

    /// Logs a crash loop at error: the fallback and the history it holds, or, when the fallback is
    /// off, that the same state is restored again.
    private func noteCrashLoop(_ choice: CrashLoopGuard.Choice, scene: SceneSession?) {
        let sceneName = scene?.persistentIdentifier ?? "default"
        if case .crashLoopFallback(let avoided) = choice.reason {
            do {
                try journal.holdHistory(from: avoided)
            } catch {
                configuration.logger.error(
                    "Could not hold the history of the state a crash-loop fallback avoided",
                    metadata: ["avoided_epoch": "\(avoided)", "error": "\(error)"])
            }
            configuration.logger.error(
                """
                Restoring the saved state crashed the app twice in a row, so an earlier state is restored instead. \
                The avoided state stays in the store's history (held from its epoch on, whatever the retention \
                policy): restoreState(roots:asOf:) with that epoch, or `statejournal rewind`, brings it back; \
                Journal.releaseHistoryHold() lets retention drop it
                """,
                metadata: [
                    "avoided_epoch": "\(avoided)", "restored_epoch": "\(choice.stateEpoch.map(String.init) ?? "none")",
                    "scene": "\(sceneName)",
                ])
        } else if choice.unfinishedAttempts >= CrashLoopGuard.failureLimit, let epoch = choice.stateEpoch {
            configuration.logger.error(
                """
                Restoring the saved state crashed the app \(choice.unfinishedAttempts) times in a row; it is restored \
                again, since the crash-loop fallback is off (a service's state is data)
                """,
                metadata: ["epoch": "\(epoch)", "scene": "\(sceneName)"])
        }
    }

    /// Holds the restoration open past ``restoreState(roots:asOf:)``, for state that finishes
    /// loading later: UIKit's `extendStateRestoration()`.
    ///
    /// Called while ``restoreState(roots:scene:asOf:)`` runs (from a decode, the finish pass or the
    /// delegate), it holds that scene's restoration, as ``extendStateRestoration(scene:)`` does;
    /// otherwise the default scene's.
    ///
    /// Balance each call with ``completeStateRestoration()``. Until then no preservation pass runs
    /// (the first one skipped is logged at notice), and a restoration that never completes counts as
    /// failed for crash-loop protection: the next restoration of the same state reports it
    /// (``RestorationDiagnostic/unfinishedRestoration(epoch:attempts:)``, logged at warning), as
    /// does a manager released while the restoration is held.
    public func extendStateRestoration() {
        activate(sceneBeingRestored ?? nil)
        restoration?.count += 1
    }

    /// Holds one scene's restoration open past ``restoreState(roots:scene:asOf:)``:
    /// ``extendStateRestoration()`` for a scene. Only that scene's passes wait for it.
    ///
    /// - Parameter scene: The scene.
    public func extendStateRestoration(scene: SceneSession) {
        activate(scene)
        restoration?.count += 1
    }

    /// Releases one hold on the restoration; the last release completes it and commits a
    /// `restorationCompleted` marker epoch (no entries): UIKit's `completeStateRestoration()`.
    ///
    /// Calls without a restoration in progress do nothing but log a warning: each call balances one
    /// ``extendStateRestoration()``. Called while ``restoreState(roots:scene:asOf:)`` runs, it
    /// releases that scene's restoration; otherwise the default scene's.
    ///
    /// - Throws: `JournalError` when the marker cannot be written; the restoration
    ///   still counts as complete for this process.
    public func completeStateRestoration() throws {
        try completeRestoration(scene: sceneBeingRestored ?? nil)
    }

    /// Releases one hold on a scene's restoration; the last release completes it and commits the
    /// scene's `restorationCompleted` marker: ``completeStateRestoration()`` for a scene.
    ///
    /// - Parameter scene: The scene.
    /// - Throws: `JournalError` when the marker cannot be written; the restoration still counts as
    ///   complete for this process.
    public func completeStateRestoration(scene: SceneSession) throws {
        try completeRestoration(scene: scene)
    }

    private func completeRestoration(scene: SceneSession?) throws {
        activate(scene)
        guard var progress = restoration else {
            configuration.logger.warning(
                """
                completeStateRestoration() was called with no restoration in progress; call it once per \
                extendStateRestoration()
                """,
                metadata: scene.map { ["scene": "\($0)"] } ?? [:]
            )
            return
        }
        progress.count -= 1
        guard progress.count == 0 else {
            restoration = progress
            return
        }
        restoration = nil
        var metadata = markerMetadata(.restorationCompleted, progress)
        metadata[EpochMetadataKey.restorationReport] = progress.encodedReport
        let bookkeeping: [JournalChange] =
            scene.flatMap { sceneAttempts.removeValue(forKey: $0) }.map { _ in [.remove(scene!.basePath)] } ?? []
        try journal.commit(bookkeeping, metadata: metadata)
        // The scene's own path is empty again; its saved objects keep it open.
        if let scene, !bookkeeping.isEmpty { recordedSessions.remove(scene) }
    }

    /// The history, the choice of what to restore, and the state to restore. Background compaction
    /// may fold the chosen epoch between reading the history and reading the state; the choice is
    /// then made again from the new history.
    private func chooseState(asOf epoch: UInt64?, scene: SceneSession?) throws
        -> (history: [EpochInfo], choice: CrashLoopGuard.Choice, state: JournalState?)
    {
        var attempt = 0
        while true {
            attempt += 1
            let allHistory = try journal.history()
            // Only the scene's own epochs count: its passes, its markers, and the discards that removed
            // it. In a store that never had scenes, that is every epoch.
            // Markers of events (a replication term's start) change nothing and belong to no scene:
            // the choice and the crash-loop count see the passes only.
            let passes = allHistory.filter { !$0.isEventMarker }
            let history = passes.filter { CrashLoopGuard.concerns($0, scene: scene) }
            if history.count < passes.count { hasNamedScenes = true }
            var choice =
                epoch.map { CrashLoopGuard.Choice(stateEpoch: $0, readEpoch: $0, reason: .requestedEpoch($0)) }
                ?? CrashLoopGuard.choose(
                    history: history, recoveredAfterCrash: !journal.recoveryReport.isClean,
                    retained: history.count < passes.count ? Set(allHistory.map(\.epoch)) : nil,
                    recorded: scene.flatMap { sceneAttempts[$0] },
                    fallsBack: effectiveCrashLoopFallback == .restoreEarlierState)
            // Compaction folded every epoch of the scene: its state is the one every retained epoch holds,
            // named by the oldest (the checkpoint's), which stays the same until the next compaction.
            // (Not after a crash-loop fallback that found no earlier state: that restores nothing.)
            var isFallback = false
            if case .crashLoopFallback = choice.reason { isFallback = true }
            if epoch == nil && choice.stateEpoch == nil && history.isEmpty && !isFallback,
                let oldest = allHistory.first?.epoch
            {
                choice.stateEpoch = oldest
                choice.readEpoch = oldest
            }
            guard let read = choice.readEpoch else { return (history, choice, nil) }
            do {
                return (history, choice, try journal.state(through: read))
            } catch let error as JournalError where error.code == .noSuchEpoch && epoch == nil && attempt < 4 {
                continue
            }
        }
    }

    /// The entries of `scene`'s tree in `state`, with the application coder's.
    ///
    /// - Complexity: O(*n*) in the entries of `state`.
    private static func state(of scene: SceneSession?, in state: JournalState) -> JournalState {
        var entries: [RestorationPath: [UInt8]] = [:]
        // A scene's own path holds its bookkeeping, not an object.
        for (path, bytes) in state
        where path == applicationPath || (scene.holds(path) && (scene == nil || path.components.count > 1)) {
            entries[path] = bytes
        }
        var filtered = JournalState(
            epoch: state.epoch, entries: entries, damage: state.damage, uncommittedTailBytes: state.uncommittedTailBytes
        )
        filtered.unsyncedTail = state.unsyncedTail
        return filtered
    }

    private func markerMetadata(_ kind: RestorationEpochKind, _ progress: RestorationProgress) -> [String: String] {
        var metadata = archiveMetadata(kind)
        metadata[EpochMetadataKey.restoringEpoch] = String(progress.epoch)
        metadata[EpochMetadataKey.restoredLatest] = progress.restoredLatest ? "1" : "0"
        metadata[EpochMetadataKey.restoredBundleVersion] = progress.savedMetadata[EpochMetadataKey.bundleVersion]
        metadata[EpochMetadataKey.restoredInterfaceIdiom] = progress.savedMetadata[EpochMetadataKey.interfaceIdiom]
        return metadata
    }

    /// The archive keys of the state restored: the epoch's own, or, when the state is read through a
    /// restoration marker because compaction folded `restoring`, the ones the marker copied from it.
    ///
    /// An event marker (a replication term's start) carries the metadata of the epoch before it; read
    /// through it, the state is that epoch's, so a restoration marker's copy is read as the marker.
    private static func savedMetadata(of info: EpochInfo, restoring: UInt64) -> [String: String] {
        let copiesRestorationMarker =
            info.isEventMarker && CrashLoopGuard.kind(of: info).map { !$0.changesState } == true
        guard info.epoch != restoring || copiesRestorationMarker else { return info.metadata }
        var metadata = info.metadata
        metadata[EpochMetadataKey.bundleVersion] = info.metadata[EpochMetadataKey.restoredBundleVersion]
        metadata[EpochMetadataKey.interfaceIdiom] = info.metadata[EpochMetadataKey.restoredInterfaceIdiom]
        return metadata
    }
}
