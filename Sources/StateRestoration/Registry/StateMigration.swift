import StateJournal

/// The saved state of one object as a migration sees it: the values, which a migration rewrites
/// for the current version of the app.
public struct MigratingState: Sendable {
    /// The object's restoration path.
    public let path: RestorationPath
    /// The saved type name of the object.
    public let typeName: String
    /// The bundle version that saved the state, when recorded.
    public let savedBundleVersion: String?
    /// The bundle version restoring it (``RestorationConfiguration/bundleVersion``).
    public let currentBundleVersion: String
    /// The saved values, to be changed in place.
    public var values: [String: RestorableValue]

    /// Creates a state to migrate.
    ///
    /// - Parameters:
    ///   - path: The object's restoration path.
    ///   - typeName: The saved type name.
    ///   - savedBundleVersion: The version that saved the state.
    ///   - currentBundleVersion: The version restoring it.
    ///   - values: The saved values.
    public init(
        path: RestorationPath, typeName: String, savedBundleVersion: String?, currentBundleVersion: String,
        values: [String: RestorableValue]
    ) {
        self.path = path
        self.typeName = typeName
        self.savedBundleVersion = savedBundleVersion
        self.currentBundleVersion = currentBundleVersion
        self.values = values
    }
}

/// One registered migration.
struct StateMigration {
    let migrate: (inout MigratingState) throws -> Void
}
