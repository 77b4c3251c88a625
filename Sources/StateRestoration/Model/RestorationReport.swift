import StateJournal

/// How an object was obtained during restoration, in UIKit's lookup order.
public enum RestorationSource: Sendable, Hashable {
    /// Its restoration class (controller or object) returned it.
    case restorationClass
    /// The delegate's `controller(withRestorationIdentifierPath:coder:)` returned it.
    case delegate
    /// It already existed: a root, a child in the existing hierarchy, or a registered object.
    case existing
    /// A factory registered for its restoration identifier created it, as a storyboard creates a
    /// controller in UIKit (``RestorationManager/registerController(forRestorationIdentifier:_:)``).
    case registeredFactory
}

/// One restored object.
public struct RestoredObject: Sendable, Hashable {
    /// Its restoration path.
    public var path: RestorationPath
    /// The saved type name.
    public var savedTypeName: String
    /// How it was obtained.
    public var source: RestorationSource
    /// Whether its `decodeRestorableState(with:)` ran without throwing (false on a class mismatch
    /// or a decode error; see ``RestorationReport/diagnostics``).
    public var decoded: Bool
    /// Whether registered migrations rewrote its saved values before it was decoded (the state
    /// was saved by another bundle version).
    public var migrated = false

    /// Creates a description of a restored object.
    ///
    /// - Parameters:
    ///   - path: Its restoration path.
    ///   - savedTypeName: The saved type name.
    ///   - source: How it was obtained.
    ///   - decoded: Whether it decoded its state.
    ///   - migrated: Whether registered migrations rewrote its saved values.
    public init(
        path: RestorationPath, savedTypeName: String, source: RestorationSource, decoded: Bool, migrated: Bool = false
    ) {
        self.path = path
        self.savedTypeName = savedTypeName
        self.source = source
        self.decoded = decoded
        self.migrated = migrated
    }
}

/// Why a saved path was not restored.
public enum RestorationSkipReason: Sendable, Hashable {
    /// Its restoration class returned `nil`.
    case declinedByRestorationClass
    /// An ancestor's restoration class returned `nil`, or is not registered, which skips
    /// everything under it.
    case ancestorDeclined(RestorationPath)
    /// The saved restoration class name is not registered, so nothing was created from it.
    case unregisteredRestorationClass(String)
    /// No restoration class, no delegate answer, and nothing existing at the path.
    case notFound
    /// The entry's bytes could not be decoded.
    case corruptEntry(String)
    /// A registered migration threw.
    case migrationFailed(String)
}

/// One saved path that was not restored.
public struct SkippedObject: Sendable, Hashable {
    /// The saved path.
    public var path: RestorationPath
    /// The saved type name, when the entry could be read.
    public var savedTypeName: String?
    /// Why it was skipped.
    public var reason: RestorationSkipReason

    /// Creates a description of a skipped path.
    ///
    /// - Parameters:
    ///   - path: The saved path.
    ///   - savedTypeName: The saved type name, when known.
    ///   - reason: Why it was skipped.
    public init(path: RestorationPath, savedTypeName: String?, reason: RestorationSkipReason) {
        self.path = path
        self.savedTypeName = savedTypeName
        self.reason = reason
    }
}

/// Something that went wrong with an object that was restored, or with the restoration itself.
public enum RestorationDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// The obtained object is neither of the saved type nor a subclass of it, so its decode was
    /// skipped (the object is kept).
    case classMismatch(RestorationPath, savedType: String, obtainedType: String)
    /// Its `decodeRestorableState(with:)` threw.
    case decodeFailed(RestorationPath, message: String)
    /// Its restoration class created the object, but nothing was restored at its parent path, so
    /// it is not registered (register it yourself to preserve it again).
    case createdObjectWithoutParent(RestorationPath)
    /// Restoring the state of `epoch` began `attempts` times in a row before this one and never
    /// completed: the app exited or crashed first, or an
    /// ``RestorationManager/extendStateRestoration()`` was never balanced by
    /// ``RestorationManager/completeStateRestoration()``. When `attempts` reaches the crash-loop
    /// limit, an older state is restored instead (``RestorationReason/crashLoopFallback(avoidedEpoch:)``).
    case unfinishedRestoration(epoch: UInt64, attempts: Int)
    /// A restoration class (or the delegate) returned a controller for this path, but at the end of
    /// the restoration no restored parent holds it: it is not among the children of the hierarchy
    /// under the roots, and no restored object decoded a reference to it. The next preservation
    /// pass does not find it, and removes its state. Attach it in its parent's
    /// `decodeRestorableState(with:)` (decode the references the parent encoded to its children) or
    /// in `applicationFinishedRestoringState()`.
    case restoredControllerOutsideHierarchy(RestorationPath)
    /// A decode under `NSCoder`'s names returned the zero value (or `nil`) instead of the saved
    /// value: a type mismatch, a number that does not fit, a class that is not allowed. The rest of
    /// the object's decode ran.
    case coder(CoderDiagnostic)

    /// The diagnostic in a sentence.
    public var description: String {
        switch self {
        case .classMismatch(let path, let saved, let obtained):
            """
            \(path) was saved as \(saved) but restored as \(obtained), which is not a subclass; its state was not \
            decoded
            """
        case .decodeFailed(let path, let message): "decoding \(path) failed: \(message)"
        case .createdObjectWithoutParent(let path):
            """
            \(path) was created by its restoration class but nothing was restored at its parent path; it is not \
            registered
            """
        case .unfinishedRestoration(let epoch, let attempts):
            """
            restoring epoch \(epoch) began \(attempts) time(s) before and never completed: the app exited or crashed \
            first, or extendStateRestoration() was not balanced by completeStateRestoration()
            """
        case .restoredControllerOutsideHierarchy(let path):
            """
            \(path) was restored but no parent holds it, so the next pass drops its state; attach it in its parent's \
            decode
            """
        case .coder(let diagnostic): "decoding \(diagnostic)"
        }
    }
}

/// What a restoration did: what was restored, what was skipped and why.
public struct RestorationReport: Sendable {
    /// How the restoration ended.
    public enum Outcome: Sendable, Hashable {
        /// The restoration ran.
        case restored
        /// The journal holds no state to restore.
        case nothingToRestore
        /// The delegate's should-restore declined (or there is no delegate). The state stays in
        /// the journal.
        case declined
    }

    /// How the restoration ended.
    public var outcome: Outcome
    /// The epoch whose state was offered, when there was one.
    public var epoch: EpochInfo?
    /// Why this state was chosen.
    public var reason: RestorationReason?
    /// The restored objects, in path order.
    public var restored: [RestoredObject] = []
    /// The saved paths not restored, in path order.
    public var skipped: [SkippedObject] = []
    /// Problems with restored objects, and earlier restorations of this state that never completed.
    public var diagnostics: [RestorationDiagnostic] = []
    /// The scene restored, or `nil` for the default scene.
    public var scene: SceneSession? = nil
}
