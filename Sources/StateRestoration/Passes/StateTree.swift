import StateJournal

/// The structure the last preservation pass saw: which object is at which path, and each node's
/// children. It lets an incremental pass find a dirty object's path and compare its children with
/// the previous ones without walking anything else.
final class StateTree {
    struct Node {
        weak var object: AnyObject?
        var kind: RestorableEntryKind
        var children: [RestorationPath] = []
    }

    /// The virtual root above the root controllers and the objects registered without a parent.
    static let rootPath = RestorationPath([String]())

    var nodes: [RestorationPath: Node] = [:]
    var paths: [ObjectIdentifier: RestorationPath] = [:]

    init() {
        nodes[Self.rootPath] = Node(object: nil, kind: .application)
    }

    /// The path of `object` when it is in the tree.
    func path(of object: AnyObject) -> RestorationPath? {
        guard let path = paths[ObjectIdentifier(object)], nodes[path]?.object === object else { return nil }
        return path
    }

    func insert(_ object: AnyObject, kind: RestorableEntryKind, at path: RestorationPath) {
        nodes[path] = Node(object: object, kind: kind)
        paths[ObjectIdentifier(object)] = path
    }

    /// Removes the node at `path` and everything under it, adding each removed path to `removed`.
    func removeSubtree(at path: RestorationPath, into removed: inout Set<RestorationPath>) {
        guard let node = nodes.removeValue(forKey: path) else { return }
        removed.insert(path)
        if let object = node.object, paths[ObjectIdentifier(object)] == path {
            paths[ObjectIdentifier(object)] = nil
        }
        for child in node.children { removeSubtree(at: child, into: &removed) }
    }
}
