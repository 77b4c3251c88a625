import StateJournal

/// One preservation pass: settles where each object sits, then encodes the objects to save into
/// an ``EntrySink`` (an open epoch, or a snapshot committed later), compares each entry with the
/// digest of what the journal holds, and records the structure it saw in a ``StateTree``.
///
/// An object's path is its place in the hierarchy: the chain of embedded and presented controllers
/// from a root, or a registered object's parent's path, plus its identifier. The pass settles the
/// hierarchy before it encodes anything, so a coder reference only records the path of an object
/// the walk already placed, whichever object refers to it first. A controller that is nowhere in
/// the hierarchy is saved under the first object whose encode refers to it (a custom container
/// encoding its children), until the hierarchy gives it a place of its own.
///
/// A full pass builds a new tree from the roots, reading every registered object's
/// `restorationParent` again. An incremental pass updates the previous tree at the dirty objects
/// only: re-encode each, compare its children with the recorded ones, walk the new children, and
/// drop the subtrees of the removed ones. Objects whose references a move made stale are encoded
/// again. Its cost depends on the dirty objects and their children, never on the size of the tree.
///
/// An incremental pass cannot see where an object went, so before it encodes anything it checks
/// that nothing it touched may have moved (see ``place(roots:invalidated:)``); when something may
/// have, it walks the whole hierarchy instead, before removing any path.
final class PreservationPass: ReferenceResolving {
    private(set) var tree: StateTree
    private(set) var registry: RestorationRegistry
    let written: DigestTable
    /// Where the changed entries and the tombstones go.
    let sink: any EntrySink
    let typeNames: TypeNameCache
    /// Whether the pass updates an existing tree.
    private(set) var isIncremental: Bool
    /// Why the pass walks the whole hierarchy; `nil` while it is incremental.
    private(set) var fullPassReason: FullPassReason?

    private(set) var digests: [RestorationPath: StateDigest] = [:]
    private(set) var writtenPaths: [RestorationPath] = []
    private(set) var removed: Set<RestorationPath> = []
    private(set) var problems: [PreservationProblem] = []
    private(set) var encodedObjects = 0
    /// The paths to encode, in the order they were placed, and the ones already queued.
    private var queue: [RestorationPath] = []
    private var queued: Set<RestorationPath> = []
    /// While an object encodes: the paths it refers to, and the controllers it adopts.
    private var found: Set<RestorationPath> = []
    private var adoptedNow: [RestorationPath] = []
    /// While an incremental pass places objects: the paths it placed, the objects it removed from
    /// the tree that are still alive, the places it found held by an object met again elsewhere,
    /// and the first path whose object it found scoped elsewhere.
    private var placedNow: Set<RestorationPath> = []
    private var departed: [(path: RestorationPath, object: AnyObject)] = []
    private var contested: [RestorationPath] = []
    private var rescoped: RestorationPath?
    /// The path the roots are saved under: the store's root for the default scene, a scene's own
    /// component otherwise (``SceneSession``).
    let base: RestorationPath

    /// - Parameters:
    ///   - fullPassReason: Why a full pass is full (ignored for an incremental one).
    ///   - base: The path the roots are saved under.
    init(
        tree: StateTree, registry: RestorationRegistry, written: DigestTable, sink: any EntrySink,
        typeNames: TypeNameCache,
        isIncremental: Bool, fullPassReason: FullPassReason? = nil, base: RestorationPath = StateTree.rootPath
    ) {
        self.base = base
        self.typeNames = typeNames
        self.isIncremental = isIncremental
        self.fullPassReason = isIncremental ? nil : fullPassReason ?? .requested
        self.tree = tree
        self.registry = registry
        self.written = written
        self.sink = sink
    }

    struct Child {
        let object: any StateRestoring
        let kind: RestorableEntryKind
        let path: RestorationPath
    }

    // MARK: - Placing

    /// The children of the virtual root: the root controllers, then objects registered without a parent.
    func rootChildren(_ roots: [any RestorableController]) -> [Child] {
        var children: [Child] = []
        for root in roots {
            guard let identifier = root.restorationIdentifier else {
                hide(below: root)
                continue
            }
            let path = base.appending(identifier)
            if identifier.hasPrefix("@") {
                problems.append(.reservedIdentifier(path))
                continue
            }
            children.append(Child(object: root, kind: .controller, path: path))
        }
        // Objects registered without a parent belong to the default scene.
        if base == StateTree.rootPath { appendRegistered(under: nil, at: StateTree.rootPath, to: &children) }
        return children
    }

    /// Appends the objects registered under `parent` (at the root when `nil`). An incremental pass
    /// notes a registered object whose `restorationParent` no longer is `parent`: it moved.
    private func appendRegistered(under parent: AnyObject?, at path: RestorationPath, to children: inout [Child]) {
        for registration in registry.registrations(scopedUnder: parent) {
            let childPath = path.appending(registration.identifier)
            if isIncremental && rescoped == nil && !registration.isScoped(under: parent) { rescoped = childPath }
            children.append(Child(object: registration.object, kind: .object, path: childPath))
        }
    }

    /// The children of an object in the hierarchy: embedded and presented controllers, and objects
    /// registered under it.
    func children(of object: any StateRestoring, at path: RestorationPath) -> [Child] {
        var children: [Child] = []
        if let controller = object as? any RestorableController {
            for child in controller.restorationChildren {
                guard let identifier = child.restorationIdentifier else {
                    hide(below: child)
                    continue
                }
                children.append(Child(object: child, kind: .controller, path: path.appending(identifier)))
            }
        }
        appendRegistered(under: object, at: path, to: &children)
        return children
    }

    /// Records the controllers below one without an identifier: they have a place, but no path.
    private func hide(below controller: any RestorableController) {
        var stack = controller.restorationChildren
        var seen: Set<ObjectIdentifier> = [ObjectIdentifier(controller)]
        while let next = stack.popLast() {
            guard seen.insert(ObjectIdentifier(next)).inserted else { continue }
            if tree.path(of: next) == nil { tree.hidden[ObjectIdentifier(next)] = StateTree.Hidden(object: next) }
            stack.append(contentsOf: next.restorationChildren)
        }
    }

    enum Visit {
        /// The child was added with its subtree.
        case added
        /// The child was already in the tree at its path.
        case present
        /// Another object holds the path, or the child is already elsewhere (reported).
        case rejected
    }

    /// Places `child` and its whole subtree in the tree, queueing each object for encoding.
    ///
    /// A hierarchy place wins over a place the object had because an encode referred to it.
    @discardableResult
    func visit(_ child: Child, adopted: Bool = false) throws -> Visit {
        if let existing = tree.nodes[child.path] {
            if existing.object === child.object { return .present }
            problems.append(duplicate(at: child.path, kept: existing, dropped: child))
            return .rejected
        }
        if let other = tree.path(of: child.object) {
            guard !adopted, tree.nodes[other]?.isAdopted == true, let parent = other.parent else {
                // The other place may be one the object left since the last pass.
                if isIncremental && !adopted { contested.append(other) }
                problems.append(
                    .objectAtTwoPaths(type: typeNames.name(of: child.object), kept: other, dropped: child.path))
                return .rejected
            }
            tree.nodes[parent]?.adopted.removeAll { $0 == other }
            remove(other)
        }
        tree.insert(child.object, kind: child.kind, at: child.path, adopted: adopted)
        if isIncremental { placedNow.insert(child.path) }
        enqueue(child.path)
        try adopt(children(of: child.object, at: child.path), at: child.path)
        return .added
    }

    /// Makes `children` the hierarchy children of the node at `path`: drops the subtrees of children
    /// that are gone (or now hold another object) and places the new ones.
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
                remove(old)
            }
            var keptSet: Set<RestorationPath> = []
            for child in children where try visit(child) != .rejected && keptSet.insert(child.path).inserted {
                kept.append(child.path)
            }
        }
        tree.nodes[path]?.children = kept
    }

    /// The incremental step: queues the dirty objects for encoding and updates their children. The
    /// children that left every dirty object are dropped before any new child is placed, so an
    /// object that moved between two dirty parents moves in whichever order they come.
    func refresh(_ dirty: [(path: RestorationPath, object: any StateRestoring)]) throws {
        var updates: [(path: RestorationPath, children: [Child])] = []
        for (path, object) in dirty {
            guard let node = tree.nodes[path], node.object === object else { continue }
            let children = children(of: object, at: path)
            var wanted: [RestorationPath: AnyObject] = [:]
            for child in children where wanted[child.path] == nil { wanted[child.path] = child.object }
            for old in node.children where wanted[old] == nil || tree.nodes[old]?.object !== wanted[old] {
                remove(old)
            }
            let remaining = node.children.filter { tree.nodes[$0] != nil }
            tree.nodes[path]?.children = remaining
            updates.append((path, children))
        }
        for (path, children) in updates where tree.nodes[path] != nil {
            enqueue(path)
            try adopt(children, at: path)
        }
    }

    /// Removes the subtree at `path`; an incremental pass remembers the objects in it that are still
    /// alive, which may only have moved.
    private func remove(_ path: RestorationPath) {
        if isIncremental {
            tree.removeSubtree(at: path, into: &removed) { departed.append(($0, $1)) }
        } else {
            tree.removeSubtree(at: path, into: &removed)
        }
    }

    /// The problem for two objects that claim one path.
    private func duplicate(at path: RestorationPath, kept: StateTree.Node, dropped: Child) -> PreservationProblem {
        let droppedType = typeNames.name(of: dropped.object)
        guard let keptObject = kept.object else {
            return .duplicatePath(path, keptType: "released object", droppedType: droppedType)
        }
        let keptType = typeNames.name(of: keptObject)
        guard keptType == droppedType else { return .duplicatePath(path, keptType: keptType, droppedType: droppedType) }
        return .duplicateInstance(
            path, type: keptType, kept: origin(of: keptObject, kind: kept.kind),
            dropped: origin(of: dropped.object, kind: dropped.kind))
    }

    private func origin(of object: AnyObject, kind: RestorableEntryKind) -> PreservationProblem.Origin {
        guard kind == .object, let registration = registry.registration(of: object) else { return .child }
        return registration.isCreatedDuringRestoration ? .createdDuringRestoration : .registered
    }

    private func enqueue(_ path: RestorationPath) {
        if queued.insert(path).inserted { queue.append(path) }
    }

    /// Places every object to encode. A full pass reads every registered object's
    /// `restorationParent` again and walks the whole hierarchy from `roots`.
    ///
    /// An incremental pass places the roots and refreshes the children of the `invalidated`
    /// objects that are in the tree, then checks that nothing it touched may have moved somewhere it
    /// did not walk:
    /// - every object it removed from the tree that is still alive (a controller, or a registered
    ///   object) was placed again, under another invalidated object;
    /// - every object it met at a second place no longer holds the first one;
    /// - every registered object it listed still has the parent it is indexed under;
    /// - every invalidated object, and every object whose path an invalidated object's last encode
    ///   recorded, is still at its recorded place (``placeHolds(_:)``).
    /// When a check fails, it walks the whole hierarchy instead, as a full pass (with
    /// ``FullPassReason/placeChanged(_:)``), before it removes any path. A move that no invalidated
    /// object shows (the app changed the hierarchy and invalidated nothing involved) stays unseen
    /// until the next full pass.
    ///
    /// - Complexity: Incremental: the roots, plus, for each invalidated object, its children and
    ///   the depth of its path and of each path it refers to, times the siblings along them.
    func place(roots: [any RestorableController], invalidated: [any StateRestoring]) throws {
        if isIncremental {
            let problemCount = problems.count
            guard let moved = try placeIncrementally(roots: roots, invalidated: invalidated) else { return }
            isIncremental = false
            fullPassReason = .placeChanged(moved)
            tree = StateTree()
            problems.removeSubrange(problemCount...)
            queue = []
            queued = []
            removed = []
        }
        placedNow = []
        departed = []
        contested = []
        rescoped = nil
        registry.rescopeAll()
        try adopt(rootChildren(roots), at: StateTree.rootPath)
    }

    /// The incremental placing; returns the path of an object that may have moved, if any.
    private func placeIncrementally(roots: [any RestorableController], invalidated: [any StateRestoring]) throws
        -> RestorationPath?
    {
        try adopt(rootChildren(roots), at: StateTree.rootPath)
        let dirty = invalidated.compactMap { object in tree.path(of: object).map { (path: $0, object: object) } }
            .sorted { $0.path < $1.path }
        try refresh(dirty)
        if let rescoped { return rescoped }
        for (path, object) in departed where tree.path(of: object) == nil {
            if object is any RestorableController || registry.registration(of: object) != nil { return path }
        }
        for path in contested where !placeHolds(path) { return path }
        for (path, object) in dirty where tree.nodes[path]?.object === object {
            if !placeHolds(path) { return path }
            for target in tree.references[path] ?? [] where tree.nodes[target] != nil && !placeHolds(target) {
                return target
            }
        }
        return nil
    }

    /// Whether the object at `path` is still at the place the tree records: each node up to the
    /// root is still listed by its parent under the same identifier (a controller among its
    /// parent's children, a registered object under its parent), or was placed by this pass.
    ///
    /// A controller saved under the object whose encode refers to it is taken as it is: that
    /// object's next encode checks it.
    ///
    /// - Complexity: O(depth × siblings).
    func placeHolds(_ path: RestorationPath) -> Bool {
        var path = path
        while path != base, let parentPath = path.parent, let identifier = path.components.last {
            guard let node = tree.nodes[path], let object = node.object else { return false }
            if placedNow.contains(path) { return true }
            let parent = parentPath == base ? nil : tree.nodes[parentPath]?.object
            if parentPath != base && parent == nil { return false }
            if node.kind == .object {
                guard let registration = registry.registration(of: object), registration.identifier == identifier,
                    registration.isScoped(under: parent)
                else { return false }
            } else if !node.isAdopted {
                guard let controller = object as? any RestorableController,
                    controller.restorationIdentifier == identifier
                else { return false }
                // A root still in the tree is one of this pass's roots: they were placed first.
                if let parent {
                    guard let container = parent as? any RestorableController,
                        container.restorationChildren.contains(where: { $0 === object })
                    else { return false }
                }
            }
            path = parentPath
        }
        return true
    }

    // MARK: - Encoding

    /// Encodes every queued object, then the objects that referred to a path the pass removed or
    /// moved, until no reference is stale.
    func encodeQueued() throws {
        var next = 0
        var handled: Set<RestorationPath> = []
        while true {
            while next < queue.count {
                let path = queue[next]
                next += 1
                guard let node = tree.nodes[path], let object = node.object as? any StateRestoring else { continue }
                try encode(object, kind: node.kind, at: path)
            }
            var stale: [RestorationPath] = []
            for path in removed where handled.insert(path).inserted {
                for referrer in tree.referrers[path] ?? [] where tree.nodes[referrer] != nil { stale.append(referrer) }
            }
            guard !stale.isEmpty else { return }
            for referrer in PathOrder.sorted(stale) {
                queued.remove(referrer)
                enqueue(referrer)
            }
        }
    }

    /// Encodes one object and writes its entry if it changed.
    private func encode(_ object: any StateRestoring, kind: RestorableEntryKind, at path: RestorationPath) throws {
        encodedObjects += 1
        found = []
        adoptedNow = []
        let coder = RestorationCoder(path: path, resolver: self)
        // One allocation for the usual handful of keys, rather than one per doubling.
        coder.values.reserveCapacity(8)
        do {
            try ObservedEncoding.encode(object, with: coder)
        } catch {
            problems.append(contentsOf: coder.diagnostics.map(PreservationProblem.coder))
            problems.append(.encodingFailed(path, message: "\(error)"))
            return
        }
        problems.append(contentsOf: coder.diagnostics.map(PreservationProblem.coder))
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
        tree.setReferences(found, from: path)
        // Controllers this object adopted before and no longer refers to leave with their subtrees.
        if let previous = tree.nodes[path]?.adopted {
            for old in previous where !adoptedNow.contains(old) { tree.removeSubtree(at: old, into: &removed) }
        }
        tree.nodes[path]?.adopted = adoptedNow
    }

    /// Writes `bytes` at `path` unless the journal already holds exactly them.
    /// Lists the problems the application coder met while the delegate wrote into it.
    func record(applicationCoderDiagnostics diagnostics: [CoderDiagnostic]) {
        problems.append(contentsOf: diagnostics.map(PreservationProblem.coder))
    }

    func write(_ bytes: [UInt8], at path: RestorationPath) throws {
        let digest = StateDigest(bytes)
        if (digests[path] ?? written[path]) == digest { return }
        do {
            try sink.put(path, bytes)
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
            try sink.remove(path)
            tombstones.append(path)
        }
        return tombstones
    }

    // MARK: - ReferenceResolving

    func referencePath(for object: any StateRestoring, encodedBy coder: RestorationCoder) throws -> RestorationPath? {
        let referrer = coder.restorationPath
        if let path = tree.path(of: object) {
            if !coder.isApplicationCoder {
                found.insert(path)
                if tree.nodes[path]?.isAdopted == true && path.parent == referrer && !adoptedNow.contains(path) {
                    adoptedNow.append(path)
                }
            }
            return path
        }
        if registry.registration(of: object) != nil {
            // A registered object is in the tree whenever its parent is.
            problems.append(.referenceOutsideHierarchy(type: typeNames.name(of: object), from: referrer))
            return nil
        }
        if let controller = object as? any RestorableController {
            guard !coder.isApplicationCoder, let identifier = controller.restorationIdentifier,
                !tree.isHidden(controller)
            else {
                problems.append(.referenceOutsideHierarchy(type: typeNames.name(of: object), from: referrer))
                return nil
            }
            let path = referrer.appending(identifier)
            guard try visit(Child(object: controller, kind: .controller, path: path), adopted: true) != .rejected else {
                return nil
            }
            found.insert(path)
            if !adoptedNow.contains(path) { adoptedNow.append(path) }
            return path
        }
        problems.append(.unregisteredReference(type: typeNames.name(of: object), from: referrer))
        return nil
    }

    func savedPath(of object: any StateRestoring) -> RestorationPath? {
        guard let path = tree.path(of: object) else { return nil }
        found.insert(path)
        return path
    }

    func restoredObject(at path: RestorationPath) -> (any StateRestoring)? { nil }
}
