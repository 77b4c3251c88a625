import StateJournal

extension StateRestoring {
    /// Marks the object's state as changed in every manager that preserves it, so that their next
    /// incremental pass encodes it: AppKit's `invalidateRestorableState()`.
    ///
    /// A manager knows the objects its passes placed or restored and the objects registered with
    /// it, so a controller deep in the hierarchy needs no reference to the manager. Before a
    /// manager has seen the object, the call does nothing; that manager's first pass is full and
    /// encodes the object anyway. Invalidate a controller also when its children change (a push, a
    /// pop, a presentation), so that the pass re-reads them. Setting a ``Preserved`` property calls
    /// it. Under a `StateRestorationService`, it also schedules the service's next pass.
    ///
    /// Call it on the thread that uses those managers, as every call to a manager.
    /// ``RestorationManager/invalidateRestorableState(for:)`` does the same for one manager.
    ///
    /// - Complexity: O(*m*) in the managers that preserve the object (usually one).
    public func invalidateRestorableState() {
        for manager in PreservingManagers.shared.managers(of: self) {
            manager.invalidateRestorableState(for: self)
            manager.selfInvalidationHandler?()
        }
    }
}
