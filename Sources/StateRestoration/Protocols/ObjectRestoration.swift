import StateJournal

/// A type that creates or finds custom restorable objects during restoration: UIKit's
/// `UIObjectRestoration`.
///
/// Register the type with ``RestorationManager/register(objectRestorationClass:)``; a type name on
/// disk that was not registered is never used to create anything.
public protocol ObjectRestoration {
    /// Returns the object for a saved restoration path, or `nil` to leave it (and everything scoped
    /// under it) unrestored.
    ///
    /// - Parameters:
    ///   - identifierComponents: The object's restoration path, outermost identifier first.
    ///   - coder: The object's saved state, for what is needed to create it; the object decodes
    ///     the rest later from the same state in ``StateRestoring/decodeRestorableState(with:)``.
    /// - Returns: The object, which the manager registers at that path if it is not registered yet.
    static func object(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any StateRestoring)?
}
