import StateJournal

/// The structure the last preservation pass saw: which object is at which path, each node's
/// children, and which saved objects refer to which. It lets an incremental pass find a dirty
/// object's path, compare its children with the previous ones, and re-encode the objects whose
/// references a move made stale, without walking anything else.
final class StateTree {
    struct Node {
        weak var object: AnyObject?
        var kind: RestorableEntryKind
        /// Children in the hierarchy: embedded and presented controllers, registered objects.
        var children: [RestorationPath] = []
        /// Controllers outside the hierarchy that this object's encode referred to (a custom
        /// container encoding its children), saved under it.
        var adopted: [RestorationPath] = []
        /// Whether the node is one of its parent's ``adopted`` children rather than a hierarchy child.
        var isAdopted = false
    }

    /// The virtual root above the root controllers and the objects registered without a parent.
    static let rootPath = RestorationPath([String]())

    // A pass reads and writes these for every object; they are exempt from dynamic exclusivity
    // checks (see PreservationPass): a tree is used by one pass on one thread.
    @exclusivity(unchecked) var nodes: [RestorationPath: Node] = [:]
    @exclusivity(unchecked) var paths: [ObjectIdentifier: RestorationPath] = [:]
    /// For each saved object, the paths its last encode referred to.
    @exclusivity(unchecked) var references: [RestorationPath: Set<RestorationPath>] = [:]
    /// For each path, the saved objects whose last encode referred to it.
    @exclusivity(unchecked) var referrers: [RestorationPath: Set<RestorationPath>] = [:]
    /// Controllers with an identifier that sit below a controller without one: in the hierarchy,
    /// but not saved, so a reference to them is not an adoption.
    @exclusivity(unchecked) var hidden: [ObjectIdentifier: Hidden] = [:]

    struct Hidden {
        weak var object: AnyObject?
    }

    /// The objects inserted since the last ``takeInserted()``, but those known to be recorded.
    @exclusivity(unchecked) private var inserted: [AnyObject] = []

    /// Returns the objects inserted since the last call, and forgets them.
    func takeInserted() -> [AnyObject] {
        defer { inserted = [] }
        return inserted
    }

    /// - Parameter capacity: How many objects the tree is expected to hold (a full pass reserves the
    ///   previous tree's count, so that building it does not rehash as it grows).
    init(reservingCapacity capacity: Int = 0) {
        if capacity > 0 {
            nodes.reserveCapacity(capacity)
            paths.reserveCapacity(capacity)
        }
        nodes[Self.rootPath] = Node(object: nil, kind: .application)
    }

    /// The path of `object` when it is in the tree.
    func path(of object: AnyObject) -> RestorationPath? {
        guard let path = paths[ObjectIdentifier(object)], nodes[path]?.object === object else { return nil }
        return path
    }

    func isHidden(_ object: AnyObject) -> Bool { hidden[ObjectIdentifier(object)]?.object === object }

    /// Places `object` at `path`.
    ///
    /// - Parameter isRecorded: Whether the object is known to be recorded for the manager already
    ///   (it was in the tree this one replaces, at the same path); otherwise ``takeInserted()``
    ///   lists it.
    func insert(
        _ object: AnyObject, kind: RestorableEntryKind, at path: RestorationPath, adopted: Bool = false,
        isRecorded: Bool = false
    ) {
        var node = Node(object: object, kind: kind)
        node.isAdopted = adopted
        nodes[path] = node
        paths[ObjectIdentifier(object)] = path
        if !hidden.isEmpty { hidden[ObjectIdentifier(object)] = nil }
        if !isRecorded { inserted.append(object) }
    }

    /// Records the paths the object at `path` referred to in its latest encode.
    func setReferences(_ targets: Set<RestorationPath>, from path: RestorationPath) {
        // Most objects refer to nothing, in a tree that records no reference from them.
        if targets.isEmpty && (references.isEmpty || references[path] == nil) { return }
        for old in references[path] ?? [] where !targets.contains(old) {
            referrers[old]?.remove(path)
            if referrers[old]?.isEmpty == true { referrers[old] = nil }
        }
        for target in targets { referrers[target, default: []].insert(path) }
        references[path] = targets.isEmpty ? nil : targets
    }

    /// Removes the node at `path` and everything under it, adding each removed path to `removed`.
    func removeSubtree(at path: RestorationPath, into removed: inout Set<RestorationPath>) {
        removeSubtree(at: path, into: &removed) { _, _ in }
    }

    /// Removes the node at `path` and everything under it, adding each removed path to `removed`
    /// and calling `departing` with each object still alive and its path: objects that may only
    /// have moved.
    func removeSubtree(
        at path: RestorationPath, into removed: inout Set<RestorationPath>,
        departing: (RestorationPath, AnyObject) -> Void
    ) {
        guard let node = nodes.removeValue(forKey: path) else { return }
        removed.insert(path)
        if let object = node.object {
            if paths[ObjectIdentifier(object)] == path { paths[ObjectIdentifier(object)] = nil }
            departing(path, object)
        }
        setReferences([], from: path)
        for child in node.children { removeSubtree(at: child, into: &removed, departing: departing) }
        for child in node.adopted { removeSubtree(at: child, into: &removed, departing: departing) }
    }
}
