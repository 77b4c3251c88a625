import StateJournal

/// One preservation pass: encodes objects into an open epoch, compares each entry with the digest of
/// what the journal holds, and records the structure it saw in a ``StateTree``.
///
/// A full pass builds a new tree from the roots. An incremental pass updates the previous tree at
/// the dirty objects only: re-encode each, compare its children with the recorded ones, walk the new
/// children, and drop the subtrees of the removed ones. Its cost depends on the dirty objects and
/// their children, never on the size of the tree.
final class PreservationPass: ReferenceResolving {
    let tree: StateTree
    let registry: RestorationRegistry
    let written: DigestTable
    let epoch: EpochWriter
    let typeNames: TypeNameCache
    /// Whether the pass updates an existing tree (and must not encode an object twice).
    let isIncremental: Bool

    private(set) var digests: [RestorationPath: StateDigest] = [:]
    private(set) var writtenPaths: [RestorationPath] = []
    private(set) var removed: Set<RestorationPath> = []
    private(set) var problems: [PreservationProblem] = []
    private(set) var encodedObjects = 0
    private var encoded: Set<RestorationPath> = []
    /// Controllers referenced by the object being encoded that the tree does not hold yet.
    private var referenced: [(object: any RestorableController, path: RestorationPath)] = []

    init(
        tree: StateTree, registry: RestorationRegistry, written: DigestTable, epoch: EpochWriter,
        typeNames: TypeNameCache,
        isIncremental: Bool
    ) {
        self.typeNames = typeNames
        self.isIncremental = isIncremental
        self.tree = tree
        self.registry = registry
        self.written = written
        self.epoch = epoch
    }

    struct Child {
        let object: any StateRestoring
        let kind: RestorableEntryKind
        let path: RestorationPath
    }

    // MARK: - Walking

    /// The children of the virtual root: the root controllers, then objects registered without a parent.
    func rootChildren(_ roots: [any RestorableController]) -> [Child] {
        var children: [Child] = []
        for root in roots {
            guard let identifier = root.restorationIdentifier else { continue }
            let path = RestorationPath([identifier])
            if identifier.hasPrefix("@") {
                problems.append(.reservedIdentifier(path))
                continue
            }
            children.append(Child(object: root, kind: .controller, path: path))
        }
        for registration in registry.registrations(scopedUnder: nil) where registration.parentID == nil {
            children.append(
                Child(object: registration.object, kind: .object, path: RestorationPath([registration.identifier])))
        }
        return children
    }

    /// The children of an object: embedded and presented controllers, controllers it referenced
    /// while encoding, and objects registered under it.
    func children(of object: any StateRestoring, at path: RestorationPath, referenced: [Child]) -> [Child] {
        var children: [Child] = []
        if let controller = object as? any RestorableController {
            for child in controller.restorationChildren {
                guard let identifier = child.restorationIdentifier else { continue }
                children.append(Child(object: child, kind: .controller, path: path.appending(identifier)))
            }
        }
        if !referenced.isEmpty {
            let present = Set(children.map { ObjectIdentifier($0.object) })
            for child in referenced where !present.contains(ObjectIdentifier(child.object)) {
                children.append(child)
            }
        }
        for registration in registry.registrations(scopedUnder: object) {
            children.append(
                Child(object: registration.object, kind: .object, path: path.appending(registration.identifier)))
        }
        return children
    }

    enum Visit {
        /// The child was added with its subtree.
        case added
        /// The child was already in the tree at its path.
        case present
        /// Another object holds the path, or the child is already elsewhere (reported).
        case rejected
    }

    /// Adds `child` and its whole subtree to the tree, encoding each object.
    @discardableResult
    func visit(_ child: Child) throws -> Visit {
        if let existing = tree.nodes[child.path] {
            if existing.object === child.object { return .present }
            problems.append(
                .duplicatePath(
                    child.path, keptType: existing.object.map { typeNames.name(of: $0) } ?? "released object",
                    droppedType: typeNames.name(of: child.object)))
            return .rejected
        }
        if let other = tree.path(of: child.object) {
            problems.append(.objectAtTwoPaths(type: typeNames.name(of: child.object), kept: other, dropped: child.path))
            return .rejected
        }
        tree.insert(child.object, kind: child.kind, at: child.path)
        let referenced = try encode(child.object, kind: child.kind, at: child.path)
        try adopt(children(of: child.object, at: child.path, referenced: referenced), at: child.path)
        return .added
    }

    /// Makes `children` the children of the node at `path`: drops the subtrees of children that are
    /// gone (or now hold another object) and visits the new ones.
    func adopt(_ children: [Child], at path: RestorationPath) throws {
        guard let node = tree.nodes[path] else { return }
        var kept: [RestorationPath] = []
        kept.reserveCapacity(children.count)
        if node.children.isEmpty {
            for child in children where try visit(child) == .added { kept.append(child.path) }
        } else {
            var wanted: [RestorationPath: AnyObject] = [:]
            for child in children where wanted[child.path] == nil { wanted[child.path] = child.object }
            for old in node.children where wanted[old] == nil || tree.nodes[old]?.object !== wanted[old] {
                tree.removeSubtree(at: old, into: &removed)
            }
            var keptSet: Set<RestorationPath> = []
            for child in children where try visit(child) != .rejected && keptSet.insert(child.path).inserted {
                kept.append(child.path)
            }
        }
        tree.nodes[path]?.children = kept
    }

    /// Re-encodes an object already in the tree and updates its children: the incremental step.
    func refresh(_ object: any StateRestoring, at path: RestorationPath) throws {
        guard !encoded.contains(path), let node = tree.nodes[path], node.object === object else { return }
        let referenced = try encode(object, kind: node.kind, at: path)
        try adopt(children(of: object, at: path, referenced: referenced), at: path)
    }

    // MARK: - Encoding

    /// Encodes one object and writes its entry if it changed. Returns the controllers it referenced
    /// that the tree does not hold yet.
    func encode(_ object: any StateRestoring, kind: RestorableEntryKind, at path: RestorationPath) throws -> [Child] {
        if isIncremental { encoded.insert(path) }
        encodedObjects += 1
        referenced = []
        let coder = RestorationCoder(path: path, resolver: self)
        do {
            try object.encodeRestorableState(with: coder)
        } catch {
            problems.append(.encodingFailed(path, message: "\(error)"))
            return []
        }
        var restorationClassName: String?
        if let controller = object as? any RestorableController {
            restorationClassName = controller.restorationClass.map { typeNames.name(of: $0) }
        } else {
            restorationClassName = object.objectRestorationClass.map { typeNames.name(of: $0) }
        }
        var writer = EntryWriter()
        writer.writeHeader(kind: kind, typeName: typeNames.name(of: object), restorationClassName: restorationClassName)
        writer.writeDictionary(coder.values)
        try write(writer.bytes, at: path)
        let found = referenced.map { Child(object: $0.object, kind: .controller, path: $0.path) }
        referenced = []
        return found
    }

    /// Writes `bytes` at `path` unless the journal already holds exactly them.
    func write(_ bytes: [UInt8], at path: RestorationPath) throws {
        let digest = StateDigest(bytes)
        if (digests[path] ?? written[path]) == digest { return }
        do {
            try epoch.put(path, bytes)
        } catch let error as JournalError where error.code == .limitExceeded {
            problems.append(.encodingFailed(path, message: error.message))
            return
        }
        digests[path] = digest
        writtenPaths.append(path)
    }

    /// Writes a tombstone for every removed path the journal holds and the tree no longer has.
    /// Returns the paths removed.
    func writeTombstones(candidates: some Sequence<RestorationPath>) throws -> [RestorationPath] {
        var tombstones: [RestorationPath] = []
        for path in candidates where tree.nodes[path] == nil && (written[path] != nil || digests[path] != nil) {
            try epoch.remove(path)
            tombstones.append(path)
        }
        return tombstones
    }

    // MARK: - ReferenceResolving

    func referencePath(for object: any StateRestoring, encodedBy coder: RestorationCoder) throws -> RestorationPath? {
        if let path = tree.path(of: object) { return path }
        if let pending = referenced.first(where: { $0.object === object }) { return pending.path }
        if let registration = registry.registration(of: object) {
            if registration.parentID == nil { return RestorationPath([registration.identifier]) }
            guard let parent = registration.parent, let parentPath = tree.path(of: parent) else { return nil }
            return parentPath.appending(registration.identifier)
        }
        if let controller = object as? any RestorableController {
            guard !coder.isApplicationCoder, let identifier = controller.restorationIdentifier else { return nil }
            let path = coder.restorationPath.appending(identifier)
            referenced.append((controller, path))
            return path
        }
        problems.append(.unregisteredReference(type: typeNames.name(of: object), from: coder.restorationPath))
        return nil
    }

    func restoredObject(at path: RestorationPath) -> (any StateRestoring)? { nil }
}
