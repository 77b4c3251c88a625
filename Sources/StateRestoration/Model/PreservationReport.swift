import StateJournal

/// Which objects a preservation pass encodes.
public enum PreservationMode: Sendable, Hashable {
    /// Only objects marked with ``RestorationManager/invalidateRestorableState(for:)`` since the last
    /// pass, plus the structure that changed around them. The first pass of a manager is always full.
    case incremental
    /// Every object reachable from the roots. Still writes only what changed.
    case full
}

/// Something a preservation pass could not save as asked; the rest of the pass went on.
public enum PreservationProblem: Sendable, Hashable, CustomStringConvertible {
    /// Two different objects claimed the same path; the first one was kept.
    case duplicatePath(RestorationPath, keptType: String, droppedType: String)
    /// One object was reached at a second path; it is saved at the first one only.
    case objectAtTwoPaths(type: String, kept: RestorationPath, dropped: RestorationPath)
    /// The object's `encodeRestorableState(with:)` threw, or its state exceeds the journal's
    /// limits; its previously saved state was kept.
    case encodingFailed(RestorationPath, message: String)
    /// An object encoded a reference to a custom object that is not registered; null was written.
    case unregisteredReference(type: String, from: RestorationPath)
    /// A root controller used an identifier starting with `@`, which is reserved; it was skipped.
    case reservedIdentifier(RestorationPath)
    /// The object at `from` referred to an object that has no place in the saved hierarchy (a
    /// controller without a restoration identifier, or one below a controller without one): the
    /// reference is saved as null and restores as nil.
    case referenceOutsideHierarchy(type: String, from: RestorationPath)

    /// The problem in a sentence.
    public var description: String {
        switch self {
        case .duplicatePath(let path, let kept, let dropped):
            "two objects claim \(path): kept the \(kept), dropped the \(dropped)"
        case .objectAtTwoPaths(let type, let kept, let dropped):
            "a \(type) is at \(kept) and at \(dropped); saved at \(kept) only"
        case .encodingFailed(let path, let message): "encoding \(path) failed: \(message)"
        case .unregisteredReference(let type, let path):
            "\(path) references an unregistered \(type); register it with registerObject(forStateRestoration:restorationIdentifier:)"
        case .reservedIdentifier(let path): "\(path) uses a reserved identifier (starting with @)"
        case .referenceOutsideHierarchy(let type, let path):
            "\(path) references a \(type) that has no place in the saved hierarchy; give it and its ancestors restoration identifiers"
        }
    }
}

/// What a preservation pass did.
public struct PreservationReport: Sendable {
    /// How the pass ended.
    public enum Outcome: Sendable, Hashable {
        /// The pass committed this epoch.
        case committed(EpochInfo)
        /// Nothing changed since the last epoch, so nothing was written and no epoch was committed.
        case unchanged
        /// The delegate's ``ApplicationRestorationDelegate/shouldSaveApplicationState(_:)`` declined
        /// (or there is no delegate).
        case declined
        /// A restoration has not completed yet (see ``RestorationManager/completeStateRestoration()``).
        case restorationInProgress
    }

    /// How the pass ended.
    public var outcome: Outcome
    /// The mode the pass ran in (an incremental request can run as full; see ``PreservationMode``).
    public var mode: PreservationMode
    /// How many objects were encoded.
    public var encodedObjects: Int
    /// The paths whose entries were written, sorted.
    public var writtenPaths: [RestorationPath]
    /// The paths that got a tombstone, sorted.
    public var removedPaths: [RestorationPath]
    /// What could not be saved as asked.
    public var problems: [PreservationProblem]

    /// The committed epoch, if the pass committed one.
    public var epoch: EpochInfo? {
        if case .committed(let info) = outcome { return info }
        return nil
    }
}
