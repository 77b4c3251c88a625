import StateJournal

/// Which objects a preservation pass encodes.
///
/// ``full`` is the default: like UIKit's walk, it keeps every change of every reachable object
/// whether or not the app invalidated anything. ``incremental`` is a speed-up an app opts into when
/// it invalidates what it changes (``RestorationManager/invalidateRestorableState(for:)``,
/// `@Preserved`, or `@Observable` objects, which invalidate themselves): a change that nothing
/// invalidated waits for the next full pass.
public enum PreservationMode: Sendable, Hashable {
    /// Only objects marked with ``RestorationManager/invalidateRestorableState(for:)`` since the last
    /// pass, plus the structure that changed around them. The first pass of a manager is always full.
    case incremental
    /// Every object reachable from the roots; the default. Still writes only what changed.
    case full
}

/// Why a preservation pass walked the whole hierarchy (``PreservationMode/full``).
public enum FullPassReason: Sendable, Hashable, CustomStringConvertible {
    /// The caller asked for ``PreservationMode/full``.
    case requested
    /// The manager had no structure from an earlier pass to update: its first pass, or the first
    /// after a failed pass or a discard.
    case noPreviousPass
    /// An incremental pass found that the object saved at this path may have moved: an invalidated
    /// object (or an object it refers to) is no longer at its recorded place, a child left an
    /// invalidated parent and is still alive, a new child is already saved elsewhere, or a
    /// registered object's ``StateRestoring/restorationParent`` changed. Only a walk of the whole
    /// hierarchy can tell where it went, so the pass walked it before removing any path.
    case placeChanged(RestorationPath)

    /// The reason in a sentence.
    public var description: String {
        switch self {
        case .requested: "a full pass was requested"
        case .noPreviousPass: "no earlier pass of this manager to update"
        case .placeChanged(let path): "the object saved at \(path) may have moved"
        }
    }
}

/// Something a preservation pass could not save as asked; the rest of the pass went on.
public enum PreservationProblem: Sendable, Hashable, CustomStringConvertible {
    /// Two different objects claimed the same path; the first one was kept.
    case duplicatePath(RestorationPath, keptType: String, droppedType: String)
    /// Two instances of one type claimed the same path; the first one was kept. `kept` and
    /// `dropped` say where each came from, typically an object the app registered and another
    /// instance its restoration class created during restoration.
    case duplicateInstance(RestorationPath, type: String, kept: Origin, dropped: Origin)
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
    /// A value given to `encode(_:forKey:)` under `NSCoder`'s names could not be written (the
    /// rest of the object's state was); see the diagnostic.
    case coder(CoderDiagnostic)

    /// Where an object that claims a path came from, to tell two instances of one type apart.
    public enum Origin: Sendable, Hashable, CustomStringConvertible {
        /// A root controller, or a child (embedded or presented) of its parent controller.
        case child
        /// Registered by the app with
        /// ``RestorationManager/registerObject(forStateRestoration:restorationIdentifier:)``.
        case registered
        /// Created by its ``StateRestoring/objectRestorationClass`` during restoration, and
        /// registered by the manager at the path it was restored at.
        case createdDuringRestoration

        /// The origin in a few words.
        public var description: String {
            switch self {
            case .child: "listed as a child by its parent"
            case .registered: "registered by the app"
            case .createdDuringRestoration: "created by its restoration class during restoration"
            }
        }
    }

    /// The problem in a sentence.
    public var description: String {
        switch self {
        case .duplicatePath(let path, let kept, let dropped):
            "two objects claim \(path): kept the \(kept), dropped the \(dropped)"
        case .duplicateInstance(let path, let type, let kept, let dropped):
            "two instances of \(type) claim \(path): kept the one \(kept), dropped another instance of \(type) "
                + "\(dropped); \(Self.advice(kept: kept, dropped: dropped))"
        case .objectAtTwoPaths(let type, let kept, let dropped):
            "a \(type) is at \(kept) and at \(dropped); saved at \(kept) only"
        case .encodingFailed(let path, let message): "encoding \(path) failed: \(message)"
        case .unregisteredReference(let type, let path):
            """
            \(path) references an unregistered \(type); register it with \
            registerObject(forStateRestoration:restorationIdentifier:)
            """
        case .reservedIdentifier(let path): "\(path) uses a reserved identifier (starting with @)"
        case .referenceOutsideHierarchy(let type, let path):
            """
            \(path) references a \(type) that has no place in the saved hierarchy; give it and its ancestors \
            restoration identifiers
            """
        case .coder(let diagnostic): "encoding \(diagnostic)"
        }
    }

    private static func advice(kept: Origin, dropped: Origin) -> String {
        switch (kept, dropped) {
        case (.registered, .createdDuringRestoration), (.createdDuringRestoration, .registered):
            "register the object before restoring and return the registered object from its restoration class "
                + "(or give it no restoration class), so that restoration decodes the instance the app keeps"
        case (.registered, .registered), (.createdDuringRestoration, .createdDuringRestoration):
            "give each instance its own restoration identifier, or unregister the one that is no longer used"
        default:
            "give each instance its own restoration identifier"
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
    /// Why the pass walked the whole hierarchy, when ``mode`` is ``PreservationMode/full``; `nil`
    /// for an incremental pass.
    public var fullPassReason: FullPassReason? = nil
    /// The scene saved, or `nil` for the default scene.
    public var scene: SceneSession? = nil

    /// The committed epoch, if the pass committed one.
    public var epoch: EpochInfo? {
        if case .committed(let info) = outcome { return info }
        return nil
    }
}
