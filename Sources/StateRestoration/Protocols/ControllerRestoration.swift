import StateJournal

/// A type that creates or finds controllers during restoration: UIKit's
/// `UIViewControllerRestoration`.
///
/// Register the type with ``RestorationManager/register(restorationClass:)``; a type name on disk
/// that was not registered is never used to create anything.
public protocol ControllerRestoration {
    /// Returns the controller for a saved restoration path, or `nil` to skip it.
    ///
    /// Returning `nil` skips the controller and every path under it, and no other lookup is tried
    /// for them (not the delegate, not the existing hierarchy).
    ///
    /// - Parameters:
    ///   - identifierComponents: The restoration identifiers from the root controller down to this
    ///     one.
    ///   - coder: The controller's saved state; it decodes the rest later in
    ///     ``StateRestoring/decodeRestorableState(with:)``.
    /// - Returns: A new or existing controller. If its type is neither the saved type nor a subclass
    ///   of it, it is kept but its state is not decoded.
    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
}
