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
    /// An incremental pass encodes only the objects invalidated since the last pass (and the new
    /// children found under them); the first pass of a manager, and the first after a failure or a
    /// discard, is full whatever was asked. Nothing is saved while a restoration is in progress.
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
    ///   - mode: ``PreservationMode/incremental`` (the default) or ``PreservationMode/full``.
    /// - Returns: What the pass did, including the problems it met (duplicate paths, failed encodes).
    /// - Throws: `JournalError` when the journal cannot be written.
    /// - Complexity: Incremental: proportional to the invalidated objects, their children and the
    ///   roots, not to the size of the hierarchy. Full: O(*n*).
    @discardableResult
    public func preserveState(roots: [any RestorableController], mode: PreservationMode = .incremental) throws
        -> PreservationReport
    {
        let runMode: PreservationMode = needsFullPass ? .full : mode
        var report = PreservationReport(
            outcome: .declined, mode: runMode, encodedObjects: 0, writtenPaths: [], removedPaths: [], problems: [])
        guard restoration == nil else {
            report.outcome = .restorationInProgress
            logSkippedPassDuringRestoration()
            return report
        }
        let metadata = archiveMetadata(.preservation)
        let applicationCoder = applicationCoder(metadata: metadata, timestamp: Date(), appValues: [:], reason: nil)
        guard let delegate, delegate.shouldSaveApplicationState(applicationCoder) else { return report }
        delegate.willEncodeRestorableState(applicationCoder)

        let passTree = runMode == .full ? StateTree() : tree
        let epoch = try journal.beginEpoch()
        let pass = PreservationPass(
            tree: passTree, registry: registry, written: written, epoch: epoch, typeNames: typeNames,
            isIncremental: runMode == .incremental, fullPassReason: mode == .full ? .requested : .noPreviousPass)
        let tombstones: [RestorationPath]
        do {
            var appValues = applicationCoder.values
            for key in ArchiveKey.all { appValues[key] = nil }
            var writer = EntryWriter()
            writer.writeHeader(kind: .application, typeName: "", restorationClassName: nil)
            writer.writeDictionary(appValues)
            try pass.write(writer.bytes, at: Self.applicationPath)

            try pass.place(roots: roots, invalidated: runMode == .incremental ? Array(dirty.values) : [])
            try pass.encodeQueued()
            if !pass.isIncremental {
                tombstones = try pass.writeTombstones(
                    candidates: written.digests.keys.filter { $0 != Self.applicationPath })
            } else {
                tombstones = try pass.writeTombstones(candidates: pass.removed)
            }
            if pass.writtenPaths.isEmpty && tombstones.isEmpty && metadata == lastPreservationMetadata {
                epoch.abort()
                report.outcome = .unchanged
            } else {
                report.outcome = .committed(try epoch.commit(metadata: metadata))
            }
        } catch {
            epoch.abort()
            needsFullPass = true
            throw error
        }
        for (path, digest) in pass.digests { written[path] = digest }
        for path in tombstones { written[path] = nil }
        tree = pass.tree
        if !pass.isIncremental { registry.rescopeAll() }
        needsFullPass = false
        dirty.removeAll(keepingCapacity: true)
        lastPreservationMetadata = metadata
        report.mode = pass.isIncremental ? .incremental : .full
        report.fullPassReason = pass.fullPassReason
        report.encodedObjects = pass.encodedObjects
        report.writtenPaths = PathOrder.sorted(pass.writtenPaths)
        report.removedPaths = PathOrder.sorted(tombstones)
        report.problems = pass.problems
        log(report.problems)
        return report
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
        let info = try journal.commit([.removeAll], metadata: archiveMetadata(.discard))
        written.digests.removeAll()
        tree = StateTree()
        needsFullPass = true
        lastPreservationMetadata = nil
        return info
    }
}
