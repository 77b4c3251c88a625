import StateJournal

/// The app-level decisions of preservation and restoration: the part of `UIApplicationDelegate`
/// that concerns them.
///
/// Preservation and restoration are opt-in, as in UIKit: the defaults of
/// ``shouldSaveApplicationState(_:)`` and ``shouldRestoreApplicationState(_:)`` are `false`.
public protocol ApplicationRestorationDelegate: AnyObject {
    /// Whether a preservation pass may save the app's state now. Defaults to `false`.
    ///
    /// - Parameter coder: The application coder, holding the archive keys (``ArchiveKey``) this
    ///   pass will record.
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool

    /// Whether the saved state may be restored. Defaults to `false`.
    ///
    /// Refusing never destroys the saved state: it stays in the journal's history.
    ///
    /// - Parameter coder: The application coder of the state about to be restored: the archive keys
    ///   (bundle version, interface idiom, timestamp, system version), the keys the app wrote in
    ///   ``willEncodeRestorableState(_:)``, and ``RestorationCoder/restorationReason``.
    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool

    /// Lets the app write its own keys into the application coder at the start of each
    /// preservation pass. Defaults to doing nothing.
    ///
    /// - Parameter coder: The application coder. The archive keys cannot be overwritten.
    func willEncodeRestorableState(_ coder: RestorationCoder)

    /// Called last in a restoration, after every restored object's
    /// ``StateRestoring/applicationFinishedRestoringState()``. Defaults to doing nothing.
    ///
    /// - Parameter coder: The application coder of the restored state.
    func didDecodeRestorableState(_ coder: RestorationCoder)

    /// Returns the controller for a saved path that has no restoration class, or `nil` to let the
    /// manager look in the existing hierarchy. Defaults to `nil`.
    ///
    /// - Parameters:
    ///   - identifierComponents: The restoration identifiers from the root controller down.
    ///   - coder: The controller's saved state.
    func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
}

extension ApplicationRestorationDelegate {
    /// Declines: nothing is saved unless the app opts in.
    public func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { false }

    /// Declines: nothing is restored unless the app opts in.
    public func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { false }

    /// Writes no app keys.
    public func willEncodeRestorableState(_ coder: RestorationCoder) {}

    /// Does nothing.
    public func didDecodeRestorableState(_ coder: RestorationCoder) {}

    /// Finds nothing, so the manager looks in the existing hierarchy.
    public func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    { nil }
}
