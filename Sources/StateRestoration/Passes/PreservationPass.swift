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
    // The properties the walk and the encodes touch for every object are exempt from dynamic
    // exclusivity checks, which cost more than the work itself: the pass runs on one thread and never
    // holds an access to one of them across a call that could reach another.
    @exclusivity(unchecked) private(set) var tree: StateTree
    private(set) var registry: RestorationRegistry
    let written: DigestTable
    /// Where the changed entries and the tombstones go.
    let sink: any EntrySink
    let typeNames: TypeNameCache
    /// Whether the pass updates an existing tree.
    private(set) var isIncremental: Bool
    /// Why the pass walks the whole hierarchy; `nil` while it is incremental.
    private(set) var fullPassReason: FullPassReason?

    @exclusivity(unchecked) private(set) var digests: [RestorationPath: StateDigest] = [:]
    @exclusivity(unchecked) private(set) var writtenPaths: [RestorationPath] = []
    @exclusivity(unchecked) private(set) var removed: Set<RestorationPath> = []
    @exclusivity(unchecked) private(set) var problems: [PreservationProblem] = []
    @exclusivity(unchecked) private(set) var encodedObjects = 0
    /// The objects to encode, in the order they were placed, and the paths already queued.
    @exclusivity(unchecked) private var queue: [Queued] = []
    @exclusivity(unchecked) private var queued: Set<RestorationPath> = []
    /// While an object encodes: the paths it refers to, and the controllers it adopts.
    @exclusivity(unchecked) private var found: Set<RestorationPath> = []
    @exclusivity(unchecked) private var adoptedNow: [RestorationPath] = []
    /// While an incremental pass places objects: the paths it placed, the objects it removed from
    /// the tree that are still alive, the places it found held by an object met again elsewhere,
    /// and the first path whose object it found scoped elsewhere.
    private var placedNow: Set<RestorationPath> = []
    private var departed: [(path: RestorationPath, object: AnyObject)] = []
    private var contested: [RestorationPath] = []
    /// The hierarchy children of each container ``placeHolds(_:)`` asked about, read once per pass:
    /// a container's encode refers to each of its children, and checking each of those places would
    /// otherwise read the container's children again, so that one change under a container of *n*
    /// children cost *n*² reads.
    private var childrenOfContainer: [ObjectIdentifier: Set<ObjectIdentifier>] = [:]
    private var rescoped: RestorationPath?
    /// The buffer each object's entry is written into, kept from one object to the next: only an
    /// entry that changed leaves it (a copy goes to the sink).
    @exclusivity(unchecked) private var writer = EntryWriter()
    /// The tree of the pass before this one, when this one builds a new tree: where an object that
    /// has not moved finds its path already made (``childPath(_:under:for:)``).
    private let previous: StateTree?
    /// Whether a node of the tree may list adopted controllers: the tree an incremental pass
    /// updates may, a new one only once an encode adopted one.
    private var treeMayHoldAdoptions: Bool
    /// The path the roots are saved under: the store's root for the default scene, a scene's own
    /// component otherwise (``SceneSession``).
    let base: RestorationPath

    /// - Parameters:
    ///   - fullPassReason: Why a full pass is full (ignored for an incremental one).
    ///   - base: The path the roots are saved under.
    ///   - previous: For a pass that builds a new tree, the tree of the pass before it, whose
    ///     paths are reused for the objects that have not moved.
    init(
        tree: StateTree, registry: RestorationRegistry, written: DigestTable, sink: any EntrySink,
        typeNames: TypeNameCache,
        isIncremental: Bool, fullPassReason: FullPassReason? = nil, base: RestorationPath = StateTree.rootPath,
        previous: StateTree? = nil
    ) {
        self.base = base
        self.previous = previous === tree ? nil : previous
        self.treeMayHoldAdoptions = isIncremental
        if let previous = self.previous {
            // A pass that builds a new tree queues about as many objects as the previous one held.
            queue.reserveCapacity(previous.nodes.count)
            queued.reserveCapacity(previous.nodes.count)
        }
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
        /// The object as a controller, when it is one.
        let controller: (any RestorableController)?
        let kind: RestorableEntryKind
        let path: RestorationPath
        /// Whether the previous tree held the object at this path (``childPath(_:under:for:)``).
        let wasPlaced: Bool

        init(controller: any RestorableController, at place: (path: RestorationPath, wasPlaced: Bool)) {
            self.object = controller
            self.controller = controller
            self.kind = .controller
            self.path = place.path
            self.wasPlaced = place.wasPlaced
        }

        init(registered object: any StateRestoring, at place: (path: RestorationPath, wasPlaced: Bool)) {
            self.object = object
            self.controller = object as? any RestorableController
            self.kind = .object
            self.path = place.path
            self.wasPlaced = place.wasPlaced
        }
    }

    /// An object to encode, held from when it is placed until its encode, with the path it was
    /// placed at.
    struct Queued {
        let path: RestorationPath
        let object: any StateRestoring
        let controller: (any RestorableController)?
        let kind: RestorableEntryKind
    }

    /// The path of `object` as a child of the object at `parent` under `identifier`: the one the
    /// previous tree made, when it has one for the object (no new path to build and hash), a new
    /// one otherwise; and whether the previous tree held the object at that path.
    func childPath(_ identifier: String, under parent: RestorationPath, for object: AnyObject)
        -> (path: RestorationPath, wasPlaced: Bool)
    {
        if let previous, let path = previous.paths[ObjectIdentifier(object)],
            path.components.count == parent.components.count + 1, path.components.last == identifier,
            path.hasPrefix(parent)
        {
            return (path, previous.nodes[path]?.object === object)
        }
        return (parent.appending(identifier), false)
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
            let place = childPath(identifier, under: base, for: root)
            if identifier.hasPrefix("@") {
                problems.append(.reservedIdentifier(place.path))
                continue
            }
            children.append(Child(controller: root, at: place))
        }
        // Objects registered without a parent belong to the default scene.
        if base == StateTree.rootPath { appendRegistered(under: nil, at: StateTree.rootPath, to: &children) }
        return children
    }

    /// Appends the objects registered under `parent` (at the root when `nil`). An incremental pass
    /// notes a registered object whose `restorationParent` no longer is `parent`: it moved.
    private func appendRegistered(under parent: AnyObject?, at path: RestorationPath, to children: inout [Child]) {
        for registration in registry.registrations(scopedUnder: parent) {
            let place = childPath(registration.identifier, under: path, for: registration.object)
            if isIncremental && rescoped == nil && !registration.isScoped(under: parent) { rescoped = place.path }
            children.append(Child(registered: registration.object, at: place))
        }
    }

    /// The children of an object in the hierarchy: embedded and presented controllers, and objects
    /// registered under it.
    func children(of object: any StateRestoring, at path: RestorationPath) -> [Child] {
        children(of: object, controller: object as? any RestorableController, at: path)
    }

    /// The children of `object`, which is `controller` when it is a controller.
    func children(
        of object: any StateRestoring, controller: (any RestorableController)?, at path: RestorationPath
    ) -> [Child] {
        var children: [Child] = []
        if let controller {
            let hierarchy = controller.restorationChildren
            children.reserveCapacity(hierarchy.count)
            for child in hierarchy {
                guard let identifier = child.restorationIdentifier else {
                    hide(below: child)
                    continue
                }
                children.append(Child(controller: child, at: childPath(identifier, under: path, for: child)))
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
        // An object the previous tree held at the same path was recorded for the manager then.
        tree.insert(child.object, kind: child.kind, at: child.path, adopted: adopted, isRecorded: child.wasPlaced)
        if isIncremental { placedNow.insert(child.path) }
        enqueue(Queued(path: child.path, object: child.object, controller: child.controller, kind: child.kind))
        let children = children(of: child.object, controller: child.controller, at: child.path)
        // The node is new: it has no children to compare with.
        if !children.isEmpty { try adopt(children, at: child.path) }
        return .added
    }

    /// Makes `children` the hierarchy children of the node at `path`: drops the subtrees of children
    /// that are gone (or now hold another object) and places the new ones.
    func adopt(_ children: [Child], at path: RestorationPath) throws {
        guard let existing = tree.nodes[path]?.children else { return }
        if children.isEmpty && existing.isEmpty { return }
        var kept: [RestorationPath] = []
        kept.reserveCapacity(children.count)
        if existing.isEmpty {
            for child in children where try visit(child) == .added { kept.append(child.path) }
        } else {
            var wanted: [RestorationPath: AnyObject] = [:]
            for child in children where wanted[child.path] == nil { wanted[child.path] = child.object }
            for old in existing where wanted[old] == nil || tree.nodes[old]?.object !== wanted[old] {
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
        var updates: [(path: RestorationPath, object: any StateRestoring, children: [Child])] = []
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
            updates.append((path, object, children))
        }
        for (path, object, children) in updates {
            guard let kind = tree.nodes[path]?.kind else { continue }
            enqueue(Queued(path: path, object: object, controller: object as? any RestorableController, kind: kind))
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

    private func enqueue(_ item: Queued) {
        if queued.insert(item.path).inserted { queue.append(item) }
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
            treeMayHoldAdoptions = false
            problems.removeSubrange(problemCount...)
            queue = []
            queued = []
            removed = []
        }
        placedNow = []
        departed = []
        contested = []
        childrenOfContainer = [:]
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

    /// Whether `object` is among the hierarchy children of `container`, reading them once per pass.
    private func holds(_ container: any RestorableController, _ object: AnyObject) -> Bool {
        let key = ObjectIdentifier(container)
        if let children = childrenOfContainer[key] { return children.contains(ObjectIdentifier(object)) }
        let children = Set(container.restorationChildren.lazy.map { ObjectIdentifier($0) })
        childrenOfContainer[key] = children
        return children.contains(ObjectIdentifier(object))
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
                    guard let container = parent as? any RestorableController, holds(container, object) else {
                        return false
                    }
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
                let item = queue[next]
                next += 1
                // Until the pass removes a path, every queued object is still where it was placed.
                if removed.isEmpty {
                    try encode(item.object, controller: item.controller, kind: item.kind, at: item.path)
                    continue
                }
                guard let node = tree.nodes[item.path], let placed = node.object else { continue }
                if placed === item.object {
                    try encode(item.object, controller: item.controller, kind: node.kind, at: item.path)
                } else if let object = placed as? any StateRestoring {
                    // The path was given to another object after this one was queued.
                    try encode(object, controller: object as? any RestorableController, kind: node.kind, at: item.path)
                }
            }
            var stale: [RestorationPath] = []
            for path in removed where handled.insert(path).inserted {
                for referrer in tree.referrers[path] ?? [] where tree.nodes[referrer] != nil { stale.append(referrer) }
            }
            guard !stale.isEmpty else { return }
            for referrer in PathOrder.sorted(stale) {
                guard let node = tree.nodes[referrer], let object = node.object as? any StateRestoring else { continue }
                queued.remove(referrer)
                enqueue(
                    Queued(
                        path: referrer, object: object, controller: object as? any RestorableController, kind: node.kind
                    ))
            }
        }
    }

    /// Encodes one object (`controller`, when it is a controller) and writes its entry if it changed.
    private func encode(
        _ object: any StateRestoring, controller: (any RestorableController)?, kind: RestorableEntryKind,
        at path: RestorationPath
    ) throws {
        encodedObjects += 1
        if !found.isEmpty { found = [] }
        if !adoptedNow.isEmpty { adoptedNow = [] }
        let coder = RestorationCoder(path: path, resolver: self)
        // One allocation for the usual handful of keys, rather than one per doubling.
        coder.values.reserveCapacity(8)
        do {
            try ObservedEncoding.encode(object, with: coder, isObservable: typeNames.isObservable(object))
        } catch let error as RestorationError where error.code == .notOnMainActor {
            // A main-actor object reached off the main actor: its children and parent could not be
            // read either, so the pass is abandoned whole rather than committed without them.
            throw error
        } catch {
            problems.append(contentsOf: coder.diagnostics.map(PreservationProblem.coder))
            problems.append(.encodingFailed(path, message: "\(error)"))
            return
        }
        if !coder.diagnostics.isEmpty { problems.append(contentsOf: coder.diagnostics.map(PreservationProblem.coder)) }
        var restorationClassName: String?
        if let controller {
            restorationClassName = controller.restorationClass.map { typeNames.name(of: $0) }
        } else {
            restorationClassName = object.objectRestorationClass.map { typeNames.name(of: $0) }
        }
        writer.reset()
        writer.writeHeader(kind: kind, typeName: typeNames.name(of: object), restorationClassName: restorationClassName)
        writer.writeDictionary(coder.values)
        try write(writer.bytes, at: path)
        tree.setReferences(found, from: path)
        // Controllers this object adopted before and no longer refers to leave with their subtrees.
        guard !adoptedNow.isEmpty || (treeMayHoldAdoptions && tree.nodes[path]?.adopted.isEmpty == false) else {
            return
        }
        if let previous = tree.nodes[path]?.adopted {
            for old in previous where !adoptedNow.contains(old) { tree.removeSubtree(at: old, into: &removed) }
        }
        tree.nodes[path]?.adopted = adoptedNow
        if !adoptedNow.isEmpty { treeMayHoldAdoptions = true }
    }

    /// Writes `bytes` at `path` unless the journal already holds exactly them.
    /// Lists the problems the application coder met while the delegate wrote into it.
    func record(applicationCoderDiagnostics diagnostics: [CoderDiagnostic]) {
        problems.append(contentsOf: diagnostics.map(PreservationProblem.coder))
    }

    /// A copy of `bytes` whose capacity is its count.
    ///
    /// The entry writer's buffer is reused for every entry of a pass, so its capacity is that of the
    /// pass's largest entry. Handed to the journal as is, the buffer is shared, the writer's next
    /// entry starts a new buffer of that capacity, and every entry pending in the epoch holds one:
    /// memory that grew with the square of a large container's size.
    static func exactCopy(of bytes: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: bytes)
        }
    }

    func write(_ bytes: [UInt8], at path: RestorationPath) throws {
        let digest = StateDigest(bytes)
        if ((digests.isEmpty ? nil : digests[path]) ?? written[path]) == digest { return }
        do {
            try sink.put(path, Self.exactCopy(of: bytes))
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
            let place = childPath(identifier, under: referrer, for: controller)
            let path = place.path
            guard try visit(Child(controller: controller, at: place), adopted: true) != .rejected else {
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
