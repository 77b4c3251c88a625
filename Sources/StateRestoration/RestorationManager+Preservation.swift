import Foundation
import StateJournal

extension RestorationManager {
    /// Runs a preservation pass over the hierarchy under `roots` and commits what changed as one
    /// epoch.
    ///
    /// In order: asks ``ApplicationRestorationDelegate/shouldSaveApplicationState(_:)``; calls
    /// ``ApplicationRestorationDelegate/willEncodeRestorableState(_:)``; walks from the roots
    /// (skipping each controller without a restoration identifier, and its subtree), giving each
    /// object its own coder and recording its type and restoration class; writes an entry only
    /// where the encoded bytes differ from what the journal holds, and a tombstone for each saved
    /// path that is gone; commits the epoch. When nothing changed, no epoch is committed.
    ///
    /// By default the pass is full: it encodes every reachable object, as UIKit's walk does, and
    /// writes only the entries whose bytes changed, so that no change is lost whether or not
    /// anything was invalidated. An incremental pass, which an app opts into, encodes only the
    /// objects invalidated since the last pass (and the new children found under them); the first
    /// pass of a manager, and the first after a failure or a discard, is full whatever was asked.
    /// Nothing is saved while a restoration is in progress.
    ///
    /// A full pass reads every registered object's ``StateRestoring/restorationParent`` again. An
    /// incremental pass that finds that an object may have moved (an invalidated object, or one it
    /// refers to, is no longer where the last pass saw it; a child left an invalidated parent and is
    /// still alive; a new child is already saved elsewhere; a registered object's
    /// `restorationParent` changed) walks the whole hierarchy instead, before it removes any path,
    /// and says why in ``PreservationReport/fullPassReason``. A change of place that no invalidated
    /// object shows is seen by the next full pass.
    ///
    /// If the pass throws, or the process dies during it, the journal keeps the previous epoch
    /// exactly.
    ///
    /// - Parameters:
    ///   - roots: The root controllers, in order.
    ///   - mode: ``PreservationMode/full`` (the default), which saves every change of every reachable
    ///     object as UIKit's walk does, or ``PreservationMode/incremental``, the speed-up for apps
    ///     that invalidate what they change.
    /// - Returns: What the pass did, including the problems it met (duplicate paths, failed encodes).
    /// - Throws: `JournalError` when the journal cannot be written (the store is then degraded, see
    ///   ``health``); ``RestorationError`` with code ``RestorationError/Code/storeUnavailable`` while
    ///   it has not recovered, without running the pass.
    /// - Complexity: Incremental: proportional to the invalidated objects, their children and the
    ///   roots, not to the size of the hierarchy. Full: O(*n*).
    @discardableResult
    public func preserveState(roots: [any RestorableController], mode: PreservationMode = .full) throws
        -> PreservationReport
    {
        try preserve(roots: roots, scene: nil, mode: mode)
    }

    /// Runs a preservation pass over one scene's hierarchy and commits what changed as one epoch,
    /// as ``preserveState(roots:mode:)`` does for the default scene.
    ///
    /// The pass saves the tree under `roots` at the scene's paths and touches no other scene's: the
    /// paths it removes are only paths of this scene that its roots no longer reach. Its epoch names
    /// the scene (``EpochMetadataKey/scene``). The delegate's
    /// ``ApplicationRestorationDelegate/shouldSaveApplicationState(_:)`` and
    /// ``ApplicationRestorationDelegate/willEncodeRestorableState(_:)`` are asked for each pass, and
    /// the application coder's keys are shared by every scene. Objects registered without a
    /// ``StateRestoring/restorationParent`` belong to the default scene; objects registered under a
    /// scene's object are saved with it.
    ///
    /// Nothing is saved for the scene while its own restoration is in progress; other scenes save
    /// as usual.
    ///
    /// - Parameters:
    ///   - roots: The scene's root controllers, in order.
    ///   - scene: The scene.
    ///   - mode: ``PreservationMode/full`` (the default) or ``PreservationMode/incremental``; each scene
    ///     keeps its own structure, so a scene's first pass in a manager is full.
    /// - Returns: What the pass did.
    /// - Throws: As ``preserveState(roots:mode:)``.
    @discardableResult
    public func preserveState(
        roots: [any RestorableController], scene: SceneSession, mode: PreservationMode = .full
    ) throws -> PreservationReport {
        try preserve(roots: roots, scene: scene, mode: mode)
    }

    private func preserve(roots: [any RestorableController], scene: SceneSession?, mode: PreservationMode) throws
        -> PreservationReport
    {
        // Epochs submitted before this pass commit first, and this pass relies on their digests.
        settleSubmittedPasses(waiting: true)
        activate(scene)
        let catchUp = try prepareStoreForPass()
        let started = startPass(mode)
        guard case .run(var report, let metadata, let applicationCoder) = started else {
            return started.finishedReport!
        }
        let epoch: EpochWriter
        do {
            epoch = try journal.beginEpoch()
        } catch {
            needsFullPass = true
            noteStoreFailure(error)
            throw error
        }
        let pass = makePass(report.mode, requested: mode, writingInto: epoch)
        let tombstones: [RestorationPath]
        var recorded: SceneSession?
        do {
            if catchUp?.clearsStore == true { try epoch.removeAll() }
            tombstones = try encode(pass, roots: roots, applicationCoder: applicationCoder)
            recorded = sceneToRecord(after: pass.tree)
            if let recorded { try epoch.put(recorded.basePath, Self.sessionRecord) }
            if pass.writtenPaths.isEmpty && tombstones.isEmpty && recorded == nil
                && metadata == lastPreservationMetadata
            {
                epoch.abort()
                report.outcome = .unchanged
            } else {
                report.outcome = .committed(try epoch.commit(metadata: catchUp?.marking(metadata) ?? metadata))
            }
        } catch {
            epoch.abort()
            needsFullPass = true
            noteStoreFailure(error)
            throw error
        }
        _ = record(pass, tombstones: tombstones, metadata: metadata, into: &report)
        if let recorded { recordedSessions.insert(recorded) }
        if catchUp != nil { noteCatchUpCommitted(report.epoch, writtenPaths: report.writtenPaths.count) }
        return report
    }

    /// Runs the encode step of a preservation pass on the calling thread and hands what changed to
    /// the journal's background committer; returns before anything is compressed, written or synced.
    ///
    /// The pass is the one ``preserveState(roots:mode:)`` runs, with the same decisions (should-save,
    /// the archive keys, the walk, which entries changed, the tombstones), except that the changed
    /// entries are gathered into a snapshot instead of being written as they are encoded. Await
    /// ``PendingPreservation/report()`` to learn when the epoch is as durable as the journal's
    /// policy promises, or use ``preserveStateInBackground(roots:mode:isolation:)``, which does both.
    ///
    /// Passes submitted one after another commit in submission order, each as one epoch. Each pass
    /// compares its entries with the digests of the passes submitted before it, as if they had
    /// committed, so that it writes only what changed since them. If one of them fails, every pass
    /// submitted after it fails too without writing anything (its entries may rely on the failed
    /// one's), and the manager forgets their digests: the journal never holds a later epoch without
    /// the one it built on, the manager's digests never claim an epoch that did not commit, and the
    /// next pass is full. A synchronous pass, a discard and a restoration first wait for the
    /// submitted passes to finish.
    ///
    /// - Parameters:
    ///   - roots: The root controllers, in order.
    ///   - mode: ``PreservationMode/full`` (the default), which saves every change of every reachable
    ///     object as UIKit's walk does, or ``PreservationMode/incremental``, the speed-up for apps
    ///     that invalidate what they change.
    /// - Returns: The submitted pass. Its report is at hand at once when the pass wrote nothing
    ///   (declined, restoration in progress) and after the epochs submitted before it otherwise.
    /// - Throws: `JournalError` when a path cannot be recorded at all (the next pass is then full);
    ///   ``RestorationError`` with code ``RestorationError/Code/storeUnavailable`` while the store has
    ///   not recovered from a failure (``health``), without running the pass.
    ///   Failures of the journal's commit reach the caller through ``PendingPreservation/report()``.
    /// - Complexity: The encode step of ``preserveState(roots:mode:)``, plus a copy of the changed
    ///   entries' bytes; compression and I/O happen on the committer's thread.
    public func submitPreservation(roots: [any RestorableController], mode: PreservationMode = .full) throws
        -> PendingPreservation
    {
        try submit(roots: roots, scene: nil, mode: mode)
    }

    /// Runs the encode step of one scene's preservation pass on the calling thread and hands what
    /// changed to the journal's background committer: ``submitPreservation(roots:mode:)`` for a scene.
    ///
    /// Passes of every scene commit in submission order, each as one epoch; a failure makes every
    /// pass submitted after it fail too, whichever scene it saved, and the next pass of every scene
    /// full.
    ///
    /// - Parameters:
    ///   - roots: The scene's root controllers, in order.
    ///   - scene: The scene.
    ///   - mode: ``PreservationMode/full`` (the default) or ``PreservationMode/incremental``.
    /// - Returns: The submitted pass.
    /// - Throws: As ``submitPreservation(roots:mode:)``.
    public func submitPreservation(
        roots: [any RestorableController], scene: SceneSession, mode: PreservationMode = .full
    ) throws -> PendingPreservation {
        try submit(roots: roots, scene: scene, mode: mode)
    }

    private func submit(roots: [any RestorableController], scene: SceneSession?, mode: PreservationMode) throws
        -> PendingPreservation
    {
        settleSubmittedPasses(waiting: false)
        activate(scene)
        let catchUp = try prepareStoreForPass()
        let started = startPass(mode)
        guard case .run(var report, let metadata, let applicationCoder) = started else {
            return PendingPreservation(report: started.finishedReport!, epoch: nil, predecessor: nil)
        }
        let snapshot = ChangeSnapshot()
        let pass = makePass(report.mode, requested: mode, writingInto: snapshot)
        let tombstones: [RestorationPath]
        let recorded: SceneSession?
        do {
            if catchUp?.clearsStore == true { snapshot.removeAll() }
            tombstones = try encode(pass, roots: roots, applicationCoder: applicationCoder)
            recorded = sceneToRecord(after: pass.tree)
            if let recorded { try snapshot.put(recorded.basePath, Self.sessionRecord) }
        } catch {
            // Only a limit the snapshot checks can throw here, and the pass reports those itself.
            needsFullPass = true
            throw error
        }
        let predecessor = submitted.last?.pending
        if pass.writtenPaths.isEmpty && tombstones.isEmpty && recorded == nil && metadata == lastPreservationMetadata {
            report.outcome = .unchanged
            _ = record(pass, tombstones: tombstones, metadata: metadata, into: &report)
            // A catch-up that found nothing to write follows no failed pass: the store holds the state.
            if catchUp != nil && predecessor == nil { noteCatchUpCommitted(nil, writtenPaths: 0) }
            return PendingPreservation(report: report, epoch: nil, predecessor: predecessor)
        }
        let previousMetadata = lastPreservationMetadata
        let replaced = record(pass, tombstones: tombstones, metadata: metadata, into: &report)
        if let recorded { recordedSessions.insert(recorded) }
        // Last, so that the committer's thread, once woken, finds the caller done.
        let pending = journal.submit(
            snapshot.changes, metadata: catchUp?.marking(metadata) ?? metadata, after: predecessor)
        submitted.append(
            SubmittedPass(
                pending: pending, scene: scene, replaced: replaced, previousMetadata: previousMetadata,
                recordedSession: recorded, catchUpPaths: catchUp != nil ? report.writtenPaths.count : nil))
        if catchUp != nil { recovery.phase = .catchingUp }
        return PendingPreservation(report: report, epoch: pending, predecessor: nil)
    }

    /// Runs a preservation pass whose encode step runs here, on the caller's actor, and whose
    /// epoch is compressed, written and synced off it; resumes once the epoch is as durable as the
    /// journal's policy promises.
    ///
    /// ``submitPreservation(roots:mode:)`` followed by ``PendingPreservation/report()``: the caller's
    /// actor (the main actor, in an app) is held only while the objects encode, and is free while
    /// the journal writes and waits for `fdatasync`. See ``submitPreservation(roots:mode:)`` for the
    /// order of passes and what a failure does.
    ///
    /// It has a name of its own, rather than being an `async` overload of
    /// ``preserveState(roots:mode:)``, so that existing calls of the synchronous pass from `async`
    /// code keep compiling and keep their meaning: in an `async` context Swift prefers an `async`
    /// overload, and would reject every such call that lacks `await`.
    ///
    /// ```swift
    /// import StateJournal
    /// import StateRestoration
    ///
    /// @MainActor
    /// func save(_ manager: RestorationManager, roots: [any RestorableController]) async throws {
    ///     let report = try await manager.preserveStateInBackground(roots: roots)
    ///     print("saved as epoch \(report.epoch?.epoch ?? 0)")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - roots: The root controllers, in order.
    ///   - mode: ``PreservationMode/full`` (the default), which saves every change of every reachable
    ///     object as UIKit's walk does, or ``PreservationMode/incremental``, the speed-up for apps
    ///     that invalidate what they change.
    ///   - isolation: The actor the manager and its objects belong to; the caller's, by default.
    /// - Returns: What the pass did; ``PreservationReport/epoch`` is the committed epoch.
    /// - Throws: `JournalError` when the epoch could not be committed (the journal keeps the previous
    ///   epoch, and the next pass is full), including ``JournalError/Code/precedingEpochFailed`` when
    ///   a pass submitted before this one failed; ``RestorationError`` with code
    ///   ``RestorationError/Code/storeUnavailable`` while the store has not recovered from a failure
    ///   (``health``).
    @discardableResult
    public func preserveStateInBackground(
        roots: [any RestorableController], mode: PreservationMode = .full,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> PreservationReport {
        let pending = try submitPreservation(roots: roots, mode: mode)
        defer { settleSubmittedPasses(waiting: false) }
        return try await pending.report()
    }

    /// Runs one scene's preservation pass whose encode step runs on the caller's actor and whose
    /// epoch is written off it: ``preserveStateInBackground(roots:mode:isolation:)`` for a scene.
    ///
    /// - Parameters:
    ///   - roots: The scene's root controllers, in order.
    ///   - scene: The scene.
    ///   - mode: ``PreservationMode/full`` (the default) or ``PreservationMode/incremental``.
    ///   - isolation: The actor the manager and its objects belong to; the caller's, by default.
    /// - Returns: What the pass did.
    /// - Throws: As ``preserveStateInBackground(roots:mode:isolation:)``.
    @discardableResult
    public func preserveStateInBackground(
        roots: [any RestorableController], scene: SceneSession, mode: PreservationMode = .full,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> PreservationReport {
        let pending = try submitPreservation(roots: roots, scene: scene, mode: mode)
        defer { settleSubmittedPasses(waiting: false) }
        return try await pending.report()
    }

    /// What starting a pass decided: run it, or return this report at once.
    enum PassStart {
        case run(PreservationReport, metadata: [String: String], applicationCoder: RestorationCoder)
        case finished(PreservationReport)

        var finishedReport: PreservationReport? {
            if case .finished(let report) = self { return report }
            return nil
        }
    }

    /// The start of every pass: the mode, the restoration check, the delegate's should-save and
    /// will-encode.
    private func startPass(_ mode: PreservationMode) -> PassStart {
        let runMode: PreservationMode = needsFullPass ? .full : mode
        var report = PreservationReport(
            outcome: .declined, mode: runMode, encodedObjects: 0, writtenPaths: [], removedPaths: [], problems: [])
        report.scene = activeScene
        guard restoration == nil else {
            report.outcome = .restorationInProgress
            logSkippedPassDuringRestoration()
            return .finished(report)
        }
        let metadata = archiveMetadata(.preservation)
        let applicationCoder = applicationCoder(metadata: metadata, timestamp: Date(), appValues: [:], reason: nil)
        guard let delegate, delegate.shouldSaveApplicationState(applicationCoder) else { return .finished(report) }
        delegate.willEncodeRestorableState(applicationCoder)
        return .run(report, metadata: metadata, applicationCoder: applicationCoder)
    }

    /// A pass of `runMode` (what `requested` became: full when the manager needs one) over the
    /// last pass's tree, or a new one for a full pass, writing its entries into `sink`.
    private func makePass(
        _ runMode: PreservationMode, requested: PreservationMode, writingInto sink: any EntrySink
    ) -> PreservationPass {
        PreservationPass(
            tree: runMode == .full ? StateTree(reservingCapacity: tree.nodes.count) : tree, registry: registry,
            written: written, sink: sink,
            typeNames: typeNames, isIncremental: runMode == .incremental,
            fullPassReason: requested == .full ? .requested : .noPreviousPass, base: activeScene.basePath,
            previous: tree)
    }

    /// Encodes the application coder and the objects into the pass's sink, and writes the
    /// tombstones; returns the paths removed.
    private func encode(
        _ pass: PreservationPass, roots: [any RestorableController], applicationCoder: RestorationCoder
    ) throws -> [RestorationPath] {
        var appValues = applicationCoder.values
        for key in ArchiveKey.all { appValues[key] = nil }
        var writer = EntryWriter()
        writer.writeHeader(kind: .application, typeName: "", restorationClassName: nil)
        writer.writeDictionary(appValues)
        try pass.write(writer.bytes, at: Self.applicationPath)
        pass.record(applicationCoderDiagnostics: applicationCoder.diagnostics)

        try pass.place(roots: roots, invalidated: pass.isIncremental ? Array(dirty.values) : [])
        try pass.encodeQueued()
        if pass.isIncremental {
            return try pass.writeTombstones(candidates: pass.removed)
        }
        // Only this scene's paths: a pass never removes another scene's state.
        let scene = activeScene
        return try pass.writeTombstones(candidates: written.digests.keys.filter { scene.holds($0) })
    }

    /// Makes a pass's digests, tree and metadata the manager's, and fills in the report; returns the
    /// digests it replaced, oldest first.
    private func record(
        _ pass: PreservationPass, tombstones: [RestorationPath], metadata: [String: String],
        into report: inout PreservationReport
    ) -> [(RestorationPath, StateDigest?)] {
        var replaced: [(RestorationPath, StateDigest?)] = []
        replaced.reserveCapacity(pass.digests.count + tombstones.count)
        for (path, digest) in pass.digests {
            replaced.append((path, written[path]))
            written[path] = digest
        }
        for path in tombstones {
            replaced.append((path, written[path]))
            written[path] = nil
        }
        // An incremental pass that found a moved object ran as a full pass, in a tree of its own.
        tree = pass.tree
        if !pass.isIncremental { registry.rescopeAll() }
        needsFullPass = false
        if inactiveScenes.values.allSatisfy({ $0.tree.nodes.count <= 1 }) {
            dirty.removeAll(keepingCapacity: true)
        } else {
            // Objects another scene saved keep their invalidation for that scene's next pass.
            let others = inactiveScenes.values.map(\.tree)
            dirty = dirty.filter { _, object in others.contains { $0.path(of: object) != nil } }
        }
        lastPreservationMetadata = metadata
        report.mode = pass.isIncremental ? .incremental : .full
        report.fullPassReason = pass.fullPassReason
        report.encodedObjects = pass.encodedObjects
        report.writtenPaths = PathOrder.sorted(pass.writtenPaths)
        report.removedPaths = PathOrder.sorted(tombstones)
        report.problems = pass.problems
        log(report.problems)
        return replaced
    }

    /// Forgets the submitted passes that committed, oldest first. At the first one that failed,
    /// undoes what it and every pass submitted after it (which fail too: they depend on it) put in
    /// the digest table, restores the metadata from before it, and makes the next pass full.
    ///
    /// - Parameter waiting: Whether to block until every submitted pass has finished.
    func settleSubmittedPasses(waiting: Bool) {
        while let first = submitted.first {
            if waiting { _ = try? first.pending.wait() }
            switch first.pending.result {
            case nil: return
            case .success(let info)?:
                submitted.removeFirst()
                if let paths = first.catchUpPaths { noteCatchUpCommitted(info, writtenPaths: paths) }
            case .failure(let error)?:
                var previousMetadata: [SceneSession?: [String: String]?] = [:]
                for pass in submitted.reversed() {
                    for (path, digest) in pass.replaced.reversed() { written[path] = digest }
                    previousMetadata[pass.scene] = .some(pass.previousMetadata)
                    if let scene = pass.recordedSession { recordedSessions.remove(scene) }
                }
                submitted.removeAll()
                updateEveryScene { scene, state in
                    if let metadata = previousMetadata[scene] { state.lastPreservationMetadata = metadata }
                    state.needsFullPass = true
                }
                noteStoreFailure(error)
                return
            }
        }
    }

    /// Discards the saved state, for instance when the user chose to start fresh: commits an epoch
    /// that removes every path, so the history keeps what came before it.
    ///
    /// The next preservation pass is full.
    ///
    /// - Returns: The discard epoch.
    /// - Throws: `JournalError` when the journal cannot be written.
    @discardableResult
    public func discardRestorableState() throws -> EpochInfo {
        settleSubmittedPasses(waiting: true)
        activate(nil)
        let info = try journal.commit([.removeAll], metadata: archiveMetadata(.discard))
        written.digests.removeAll()
        sceneAttempts.removeAll()
        recordedSessions.removeAll()
        updateEveryScene { _, state in
            state.tree = StateTree()
            state.needsFullPass = true
            state.lastPreservationMetadata = nil
        }
        return info
    }

    /// Discards the saved state of scenes the user closed: UIKit's
    /// `application(_:didDiscardSceneSessions:)`, called by the app rather than to it.
    ///
    /// Commits one `discard` epoch that removes every path of those scenes and names them
    /// (``EpochMetadataKey/discardedScenes``), so the history keeps what they held until compaction
    /// folds it away; no other scene's state changes. A scene whose restoration is in progress stops
    /// restoring without a `restorationCompleted` marker. The next pass of a discarded scene, if the
    /// app saves it again, is full and starts a new tree.
    ///
    /// ```swift
    /// // The user closed the window of `session`.
    /// try manager.discardSceneSessions([session])
    /// ```
    ///
    /// - Parameter sessions: The scenes to discard; the default scene's state is discarded with
    ///   ``discardRestorableState()``.
    /// - Returns: The discard epoch, or `nil` when `sessions` is empty.
    /// - Throws: `JournalError` when the journal cannot be written; nothing is discarded then.
    @discardableResult
    public func discardSceneSessions(_ sessions: Set<SceneSession>) throws -> EpochInfo? {
        guard !sessions.isEmpty else { return nil }
        settleSubmittedPasses(waiting: true)
        let components = Set(sessions.map(\.pathComponent))
        let removed = PathOrder.sorted(
            written.digests.keys.filter { path in path.components.first.map(components.contains) ?? false })
        var metadata = archiveMetadata(.discard)
        metadata[EpochMetadataKey.scene] = nil
        metadata[EpochMetadataKey.discardedScenes] = Self.encodeSceneList(sessions)
        // With the entries at the scenes' own paths: session records, and the bookkeeping of
        // restorations that never completed.
        let bookkeeping = sessions.filter { sceneAttempts[$0] != nil || recordedSessions.contains($0) }.sorted().map {
            JournalChange.remove($0.basePath)
        }
        let info = try journal.commit(removed.map { JournalChange.remove($0) } + bookkeeping, metadata: metadata)
        for path in removed { written[path] = nil }
        for session in sessions {
            sceneAttempts[session] = nil
            recordedSessions.remove(session)
        }
        updateEveryScene { scene, state in
            guard let scene, sessions.contains(scene) else { return }
            state = SceneState()
        }
        for session in sessions where session != activeScene { inactiveScenes[session] = nil }
        hasNamedScenes = true
        return info
    }

    /// The identifiers of `sessions`, sorted, as a JSON array.
    static func encodeSceneList(_ sessions: Set<SceneSession>) -> String {
        let identifiers = sessions.map(\.persistentIdentifier).sorted()
        let data =
            (try? JSONSerialization.data(withJSONObject: identifiers, options: [.withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The identifiers a ``EpochMetadataKey/discardedScenes`` item lists, or `nil` when it is not a
    /// JSON array of strings.
    static func decodeSceneList(_ text: String) -> Set<String>? {
        guard let list = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String] else { return nil }
        return Set(list)
    }
}

/// A pass handed to the journal's background committer, with what it changed in the manager's
/// digest table so that a failure can undo it.
struct SubmittedPass {
    let pending: PendingEpoch
    /// The scene the pass saved; `nil` for the default scene.
    let scene: SceneSession?
    /// The paths whose digests the pass set or cleared, and the digests they had before, oldest first.
    let replaced: [(RestorationPath, StateDigest?)]
    /// The metadata of the last preservation before the pass.
    let previousMetadata: [String: String]?
    /// The scene whose session record the pass wrote, if any.
    var recordedSession: SceneSession? = nil
    /// For the catch-up pass after a failure (see ``RestorationManager/health``), how many paths it
    /// wrote; `nil` for other passes.
    var catchUpPaths: Int? = nil
}
