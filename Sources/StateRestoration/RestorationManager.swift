import Foundation
import StateJournal

/// Runs preservation and restoration over a journal: UIApplication's role in UIKit's model.
///
/// Create one per journal right after opening it, and make it the journal's only writer. Set a
/// ``delegate`` (preservation and restoration are opt-in), register restoration classes and
/// custom objects, then at launch call ``restoreState(roots:asOf:)`` and, whenever state changed,
/// ``preserveState(roots:mode:)``. Each preservation pass is one epoch of the journal, so every
/// saved state stays in its history.
///
/// When the journal fails to write or sync, the manager recovers while the app runs: it reports
/// its ``health``, refuses saves until it has reopened the journal, and then saves every live
/// object again in a catch-up pass.
///
/// A manager is used from one thread (the app's main thread, typically); it is not `Sendable`.
/// ``preserveStateInBackground(roots:mode:isolation:)`` and ``submitPreservation(roots:mode:)`` run the encode
/// step on that thread and leave compression, writing and syncing to the journal's background
/// committer.
public final class RestorationManager {
    /// The path of the application coder's entry: the keys written in
    /// ``ApplicationRestorationDelegate/willEncodeRestorableState(_:)``. Root identifiers starting
    /// with `@` are reserved.
    public static let applicationPath = RestorationPath(["@application"])

    /// The journal the manager writes to and restores from.
    public let journal: Journal
    /// The values recorded in the archive keys of every pass.
    public let configuration: RestorationConfiguration
    /// The app-level decisions; without one, nothing is saved or restored. Held weakly.
    public weak var delegate: (any ApplicationRestorationDelegate)?

    var registry = RestorationRegistry()
    /// The structure of the last pass; valid only when ``needsFullPass`` is false. Whenever a pass
    /// installs its tree, the objects it placed are recorded for
    /// ``StateRestoring/invalidateRestorableState()`` (but those the tree it replaces held at the
    /// same path, recorded when that tree was installed).
    var tree = StateTree() {
        didSet { PreservingManagers.shared.record(tree.takeInserted(), for: self) }
    }
    var needsFullPass = true
    /// The digest of every entry the journal's latest state holds, counting the epochs of
    /// ``submitted`` passes as if they had committed.
    let written = DigestTable()
    /// The passes handed to the journal's background committer and not yet seen to commit, oldest
    /// first.
    var submitted: [SubmittedPass] = []
    var dirty: [ObjectIdentifier: any StateRestoring] = [:]
    /// Called on the invalidating thread after an object invalidated itself
    /// (``StateRestoring/invalidateRestorableState()``, a ``Preserved`` property): a service that
    /// runs the passes sets it to schedule one.
    package var selfInvalidationHandler: (() -> Void)?
    var lastPreservationMetadata: [String: String]?
    var restoration: RestorationProgress?
    /// The scene whose tree, pass state and restoration the properties above hold (``tree``,
    /// ``needsFullPass``, ``lastPreservationMetadata``, ``restoration``): `nil` for the default
    /// scene. Every public method activates its scene first (``activate(_:)``).
    private(set) var activeScene: SceneSession?
    /// The same state for every other scene the manager has met.
    var inactiveScenes: [SceneSession?: SceneState] = [:]
    /// The restorations of each scene that began and have not completed, as the scene's bookkeeping
    /// entry (at the scene's own path) records them.
    var sceneAttempts: [SceneSession: CrashLoopGuard.RecordedAttempts] = [:]
    /// The scenes whose own path holds an entry: a session record (``sessionRecordTypeName``),
    /// written when a scene's pass leaves it without saved objects so that the scene stays open, or
    /// the bookkeeping of an unfinished restoration.
    var recordedSessions: Set<SceneSession> = []
    /// While a restoration pass runs, the scene it restores (`.some(nil)` for the default scene).
    var sceneBeingRestored: SceneSession??
    /// The crash-loop fallback a service set for the manager it runs, over the configuration's.
    package var crashLoopFallbackOverride: CrashLoopFallback?
    /// Whether the store holds, or this manager saved, a named scene's tree.
    var hasNamedScenes = false
    let typeNames = TypeNameCache()
    let metrics: RestorationMetrics
    /// Where the manager is in recovering from a failed write or sync (see ``health``).
    var recovery = StoreRecovery()
    /// Time on ``RestorationConfiguration/recovery``'s clock since the manager was created.
    let recoveryClock: Stopwatch

    struct RestorationProgress {
        var epoch: UInt64
        var restoredLatest: Bool
        var savedMetadata: [String: String]
        var count: Int
        /// Whether a preservation pass skipped during this restoration was logged.
        var loggedSkippedPass = false
        /// The restoration's report, encoded for the `restorationCompleted` marker once the pass
        /// ran (``EpochMetadataKey/restorationReport``).
        var encodedReport: String?
        /// The token its markers carry while its crash note is armed (``EpochMetadataKey/restorationToken``).
        var token: String?
    }

    /// What the manager keeps per scene.
    struct SceneState {
        var tree = StateTree()
        var needsFullPass = true
        var lastPreservationMetadata: [String: String]?
        var restoration: RestorationProgress?
    }

    /// Makes `scene`'s state the one the pass properties hold, keeping the active scene's aside.
    ///
    /// - Complexity: O(1).
    func activate(_ scene: SceneSession?) {
        guard scene != activeScene else { return }
        inactiveScenes[activeScene] = SceneState(
            tree: tree, needsFullPass: needsFullPass, lastPreservationMetadata: lastPreservationMetadata,
            restoration: restoration)
        let next = inactiveScenes.removeValue(forKey: scene) ?? SceneState()
        activeScene = scene
        tree = next.tree
        needsFullPass = next.needsFullPass
        lastPreservationMetadata = next.lastPreservationMetadata
        restoration = next.restoration
        if scene != nil { hasNamedScenes = true }
    }

    /// Applies `change` to every scene's state, the active one included.
    func updateEveryScene(_ change: (SceneSession?, inout SceneState) -> Void) {
        for key in Array(inactiveScenes.keys) { change(key, &inactiveScenes[key]!) }
        var active = SceneState(
            tree: tree, needsFullPass: needsFullPass, lastPreservationMetadata: lastPreservationMetadata,
            restoration: restoration)
        change(activeScene, &active)
        if active.tree !== tree { tree = active.tree }
        needsFullPass = active.needsFullPass
        lastPreservationMetadata = active.lastPreservationMetadata
        restoration = active.restoration
    }

    /// The scenes whose state the store holds: UIKit's `UIApplication.openSessions`.
    ///
    /// At launch, create a window for each and restore it with
    /// ``restoreState(roots:scene:asOf:)``; a scene is open from its first saved pass until
    /// ``discardSceneSessions(_:)`` discards it, whether or not it saved any object: as UIKit keeps the
    /// session of a window with nothing to restore, a scene whose pass saves nothing (no roots, or
    /// roots without a restoration identifier) is kept by a record at its own path. The default
    /// scene is not listed.
    ///
    /// - Complexity: O(*n*) in the paths the store holds.
    public var openSessions: Set<SceneSession> {
        settleSubmittedPasses(waiting: false)
        var sessions = recordedSessions
        for path in written.digests.keys {
            if let scene = SceneSession.owning(path) { sessions.insert(scene) }
        }
        return sessions
    }

    /// Creates a manager over a journal, reading the digests of its latest state.
    ///
    /// - Parameters:
    ///   - journal: The journal, just opened.
    ///   - configuration: The bundle version, interface idiom and system version to record.
    /// - Complexity: O(*n*) in the entries of the journal's recovered state, once.
    public init(journal: Journal, configuration: RestorationConfiguration) {
        self.journal = journal
        self.configuration = configuration
        self.metrics = RestorationMetrics(factory: configuration.metricsFactory)
        self.recoveryClock = Stopwatch(configuration.recovery.clock)
        written.digests.reserveCapacity(journal.recoveredState.count)
        var sawScene = false
        var attempts: [SceneSession: CrashLoopGuard.RecordedAttempts] = [:]
        var recorded: Set<SceneSession> = []
        journal.recoveredState.forEachEntry { path, bytes in
            guard let scene = SceneSession.owning(path) else {
                written[path] = StateDigest(bytes)
                return
            }
            sawScene = true
            // A scene's own path holds its bookkeeping, which no pass writes or removes.
            guard path.components.count == 1 else {
                written[path] = StateDigest(bytes)
                return
            }
            recorded.insert(scene)
            if let unfinished = Self.decodeAttempts(Array(bytes)) { attempts[scene] = unfinished }
        }
        hasNamedScenes = sawScene
        sceneAttempts = attempts
        recordedSessions = recorded
        if let last = journal.lastCommitted,
            last.metadata[EpochMetadataKey.kind] == RestorationEpochKind.preservation.rawValue,
            last.metadata[EpochMetadataKey.scene] == nil
        {
            lastPreservationMetadata = last.metadata
        }
    }

    deinit { logReleasedDuringRestoration() }

    /// Whether a restoration has begun and not completed yet, in the default scene or any other.
    public var isRestoring: Bool {
        restoration != nil || inactiveScenes.values.contains { $0.restoration != nil }
    }

    /// Whether a restoration of `scene` has begun and not completed yet.
    ///
    /// - Parameter scene: The scene.
    public func isRestoring(scene: SceneSession) -> Bool {
        scene == activeScene ? restoration != nil : inactiveScenes[scene]?.restoration != nil
    }

    // MARK: - Registration

    /// Gives a class a stable name in saved state: the counterpart of `@objc(Name)` on a UIKit class.
    ///
    /// Saved state names the type of each object, its restoration class and each `NSCoding` object's
    /// class by the type's fully qualified name (`String(reflecting:)`). The name of a `private` or
    /// `fileprivate` class, or of a class nested in a function, contains
    /// `(unknown context at $…)`, an address that changes between builds and can change between
    /// processes: such a class saved in one process is not recognized in the next (its restoration
    /// class is not found, an `NSCoding` object is not made again, the class-mismatch rule skips its
    /// decode). A coding name replaces the type's name wherever saved state records or compares it.
    ///
    /// The names are process-wide, as Objective-C class names are. Register them at launch, before
    /// the first manager is created and before any `register` call that names the same class
    /// (``register(restorationClass:)``, ``register(objectRestorationClass:)``,
    /// ``registerCodingClass(_:)``): a manager remembers the names it has computed. State saved under
    /// the type's former name is recognized again only under that name (register a migration, or
    /// keep the former name as the coding name).
    ///
    /// - Parameters:
    ///   - codingName: The name, unique among the app's classes; a module prefix
    ///     (`"MyApp.DocumentState"`) keeps it apart from other modules' names.
    ///   - type: The class (or the restoration type, which can be an enumeration or a structure).
    ///     Registering the same name again for it does nothing; registering a new name for it
    ///     replaces the former one.
    /// - Precondition: No other type has this coding name.
    public static func register(codingName: String, for type: Any.Type) {
        let holder = TypeNames.codingNames.register(codingName, for: ObjectIdentifier(type))
        precondition(holder == nil, "The coding name \"\(codingName)\" is already registered for another type.")
    }

    /// The coding name registered for a type with ``register(codingName:for:)``, or `nil`.
    ///
    /// - Parameter type: The type.
    /// - Returns: Its registered coding name.
    public static func codingName(for type: Any.Type) -> String? {
        TypeNames.codingNames[ObjectIdentifier(type)]
    }

    /// Registers a type that creates controllers during restoration.
    ///
    /// Only registered types are ever called for a restoration class name read from the journal.
    ///
    /// - Parameter restorationClass: The type.
    public func register(restorationClass: any ControllerRestoration.Type) {
        registry.controllerClasses[typeNames.name(of: restorationClass)] = restorationClass
    }

    /// Registers how to create the controller saved with a restoration identifier, as a storyboard
    /// creates a controller by its identifier in UIKit, for controllers without a restoration class.
    ///
    /// During restoration, a saved controller with no restoration class that neither the delegate
    /// nor the existing hierarchy provides is created by the factory registered for the last
    /// component of its path, as UIKit falls back on the storyboard. Its parent attaches it, as
    /// with a controller a restoration class created: decode the reference the parent encoded.
    ///
    /// - Parameters:
    ///   - identifier: The controller's restoration identifier.
    ///   - factory: Creates a controller, whose state is then decoded.
    public func registerController(
        forRestorationIdentifier identifier: String, _ factory: @escaping () -> any RestorableController
    ) {
        registry.controllerFactories[identifier] = factory
    }

    /// Registers an `NSCoding` class whose objects the app encodes as values, so that
    /// `decodeObject(forKey:)` makes them again from saved state.
    ///
    /// Saved state names the class of each `NSCoding` object, and restoration makes an object from
    /// such a name only for a class registered here, or listed in the allowed classes of
    /// `decodeObject(of:forKey:)`, as secure coding requires: a saved state is never a way to make
    /// an instance of any other class linked into the app.
    ///
    /// - Parameter codingClass: The class, such as a model class that adopts `NSCoding`.
    public func registerCodingClass(_ codingClass: any (NSObject & NSCoding).Type) {
        registry.codingClasses[typeNames.name(of: codingClass)] = codingClass
    }

    /// Registers a type that creates custom objects during restoration.
    ///
    /// - Parameter objectRestorationClass: The type.
    public func register(objectRestorationClass: any ObjectRestoration.Type) {
        registry.objectClasses[typeNames.name(of: objectRestorationClass)] = objectRestorationClass
    }

    /// Registers a custom object for preservation and restoration under an identifier, scoped by its
    /// ``StateRestoring/restorationParent``.
    ///
    /// The object is preserved at its parent's path plus `restorationIdentifier` whenever the
    /// parent is preserved, or at the root when it has no parent. The parent is read now and again
    /// whenever the manager preserves, so the object follows it (invalidate the object when you
    /// change it). At launch, register it before restoring so that restoration finds it. The
    /// manager holds the object until ``unregisterObject(_:)``.
    ///
    /// - Parameters:
    ///   - object: The object.
    ///   - restorationIdentifier: Its identifier, unique within its parent.
    public func registerObject(forStateRestoration object: any StateRestoring, restorationIdentifier: String) {
        let registration = registry.register(object, identifier: restorationIdentifier)
        PreservingManagers.shared.record(CollectionOfOne(object), for: self)
        markStructureChanged(under: registration.parent)
    }

    /// Removes a custom object's registration; the next pass writes a tombstone for its path.
    ///
    /// - Parameter object: The object.
    public func unregisterObject(_ object: any StateRestoring) {
        if let registration = registry.unregister(object) { markStructureChanged(under: registration.parent) }
    }

    /// Registers a migration for the saved state of objects whose restoration class is `type`,
    /// applied when the saved bundle version differs from ``configuration``'s, before the object
    /// is obtained. Migrations for one class run in registration order.
    ///
    /// - Parameters:
    ///   - type: The restoration class.
    ///   - migrate: Rewrites the values; throwing skips the object (reported as
    ///     ``RestorationSkipReason/migrationFailed(_:)``).
    public func registerMigration(
        for type: any ControllerRestoration.Type, _ migrate: @escaping (inout MigratingState) throws -> Void
    ) {
        registry.migrations[typeNames.name(of: type), default: []].append(StateMigration(migrate: migrate))
    }

    /// Registers a migration for the saved state of custom objects whose restoration class is `type`.
    ///
    /// - Parameters:
    ///   - type: The object restoration class.
    ///   - migrate: Rewrites the values; throwing skips the object.
    public func registerMigration(
        for type: any ObjectRestoration.Type, _ migrate: @escaping (inout MigratingState) throws -> Void
    ) {
        registry.migrations[typeNames.name(of: type), default: []].append(StateMigration(migrate: migrate))
    }

    // MARK: - Invalidation

    /// Marks an object's state as changed, so that the next incremental pass encodes it: AppKit's
    /// `invalidateRestorableState`.
    ///
    /// ``StateRestoring/invalidateRestorableState()`` does the same from the object itself, in every
    /// manager that preserves it.
    ///
    /// Invalidate a controller also when its children change (a push, a pop, a presentation), so
    /// that the pass re-reads them, and a registered object when its `restorationParent` changes.
    /// When an incremental pass finds that an object it touches may have moved, it walks the whole
    /// hierarchy instead (see ``PreservationReport/fullPassReason``); a change that no invalidated
    /// object shows is saved by the next full pass.
    ///
    /// - Parameter object: The object; ignored by incremental passes until it is part of the saved
    ///   hierarchy.
    /// - Complexity: O(1).
    public func invalidateRestorableState(for object: any StateRestoring) {
        dirty[ObjectIdentifier(object)] = object
    }

    private func markStructureChanged(under parent: AnyObject?) {
        if let parent = parent as? any StateRestoring { invalidateRestorableState(for: parent) }
    }

    // MARK: - Archive keys

    /// The type name of a scene's bookkeeping entry.
    static let attemptsTypeName = "SceneRestorationAttempts"

    /// The bytes of a scene's bookkeeping entry: an entry of the restoration layer's encoding, so that
    /// the tools show it as any other.
    static func encodeAttempts(_ recorded: CrashLoopGuard.RecordedAttempts) -> [UInt8] {
        var writer = EntryWriter()
        writer.writeHeader(kind: .object, typeName: attemptsTypeName, restorationClassName: nil)
        writer.writeDictionary([
            "restoringEpoch": .int(Int64(clamping: recorded.epoch)), "attempts": .int(Int64(recorded.attempts)),
            "restoredLatest": .bool(recorded.restoredLatest),
        ])
        return writer.bytes
    }

    /// The type name of a scene's session record.
    static let sessionRecordTypeName = "SceneSession"

    /// The bytes of a scene's session record, at its own path: an entry of the restoration layer's
    /// encoding with no values, which says that the scene is open while it has nothing saved.
    static let sessionRecord: [UInt8] = {
        var writer = EntryWriter()
        writer.writeHeader(kind: .object, typeName: sessionRecordTypeName, restorationClassName: nil)
        writer.writeDictionary([String: RestorableValue]())
        return writer.bytes
    }()

    /// The scene whose session a pass over `tree` must record: the active scene, when the pass
    /// leaves it without saved objects and nothing at its own path keeps it open; `nil` otherwise.
    func sceneToRecord(after tree: StateTree) -> SceneSession? {
        guard let scene = activeScene, tree.nodes.count <= 1, !recordedSessions.contains(scene) else { return nil }
        return scene
    }

    /// The attempts a bookkeeping entry records, or `nil` when the bytes are not one.
    static func decodeAttempts(_ bytes: [UInt8]) -> CrashLoopGuard.RecordedAttempts? {
        guard let entry = try? RestorableEntry(decoding: bytes), entry.typeName == attemptsTypeName,
            case .int(let epoch)? = entry.values["restoringEpoch"], epoch >= 0,
            case .int(let attempts)? = entry.values["attempts"], attempts > 0, attempts <= Int64(Int32.max)
        else { return nil }
        var restoredLatest = true
        if case .bool(let latest)? = entry.values["restoredLatest"] { restoredLatest = latest }
        return CrashLoopGuard.RecordedAttempts(
            epoch: UInt64(epoch), attempts: Int(attempts), restoredLatest: restoredLatest)
    }

    /// The metadata of an epoch of `kind`, naming the active scene when it is not the default one.
    func archiveMetadata(_ kind: RestorationEpochKind) -> [String: String] {
        var metadata = [
            EpochMetadataKey.kind: kind.rawValue,
            EpochMetadataKey.bundleVersion: configuration.bundleVersion,
            EpochMetadataKey.interfaceIdiom: configuration.interfaceIdiom,
            EpochMetadataKey.systemVersion: configuration.systemVersion,
        ]
        if let activeScene { metadata[EpochMetadataKey.scene] = activeScene.persistentIdentifier }
        return metadata
    }

    /// The application coder of a saved epoch: its archive keys, the app's keys, and the reason.
    func applicationCoder(
        metadata: [String: String], timestamp: Date, appValues: [String: RestorableValue], reason: RestorationReason?
    ) -> RestorationCoder {
        let coder = RestorationCoder(path: Self.applicationPath, values: appValues, isApplicationCoder: true)
        for key in ArchiveKey.all { coder.setReserved(key, nil) }
        coder.setReserved(
            ArchiveKey.bundleVersion, metadata[EpochMetadataKey.bundleVersion].map(RestorableValue.string))
        coder.setReserved(
            ArchiveKey.interfaceIdiom, metadata[EpochMetadataKey.interfaceIdiom].map(RestorableValue.string))
        coder.setReserved(
            ArchiveKey.userInterfaceIdiom,
            metadata[EpochMetadataKey.interfaceIdiom].map { .int(Int64(ArchiveKey.userInterfaceIdiomNumber(for: $0))) })
        coder.setReserved(
            ArchiveKey.systemVersion, metadata[EpochMetadataKey.systemVersion].map(RestorableValue.string))
        coder.setReserved(ArchiveKey.timestamp, .date(timestamp))
        coder.restorationReason = reason
        return coder
    }
}

@available(*, unavailable, message: "A RestorationManager is used from one thread, like UIApplication.")
extension RestorationManager: Sendable {}
