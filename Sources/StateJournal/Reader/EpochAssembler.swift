/// Applies decoded changes epoch by epoch: the changes of the epoch being read wait in an overlay
/// and reach the state only when its commit record is read, so an epoch applies wholly or not at all.
struct EpochAssembler {
    private(set) var state: [RestorationPath: [UInt8]] = [:]
    private var overlay: [RestorationPath: [UInt8]?] = [:]
    private var overlayCleared = false
    private(set) var pendingChanges: [JournalChange] = []
    let keepsChanges: Bool

    init(keepsChanges: Bool) { self.keepsChanges = keepsChanges }

    /// Starts from a checkpoint's state.
    mutating func load(_ entries: [RestorationPath: [UInt8]]) { state = entries }

    /// A path's state as of the last change read, committed or not.
    func current(_ path: RestorationPath) -> [UInt8]? {
        if let pending = overlay[path] { return pending }
        return overlayCleared ? nil : state[path]
    }

    mutating func apply(_ changes: [JournalChange]) {
        for change in changes {
            switch change {
            case .put(let path, let bytes): overlay[path] = .some(bytes)
            case .remove(let path): overlay[path] = .some(nil)
            case .removeAll:
                overlay.removeAll()
                overlayCleared = true
            }
        }
        if keepsChanges { pendingChanges.append(contentsOf: changes) }
    }

    /// Makes the pending changes part of the state and returns them.
    mutating func commit() -> [JournalChange] {
        if overlayCleared { state.removeAll() }
        for (path, value) in overlay {
            if let value { state[path] = value } else { state.removeValue(forKey: path) }
        }
        return discard()
    }

    /// Drops the pending changes.
    @discardableResult
    mutating func discard() -> [JournalChange] {
        overlay.removeAll(keepingCapacity: true)
        overlayCleared = false
        defer { pendingChanges.removeAll(keepingCapacity: true) }
        return pendingChanges
    }
}
