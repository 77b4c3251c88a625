import Foundation
import StateJournal
import StateRestoration
import Testing

/// A registered custom object with a value and references, whose `restorationParent` the app changes.
final class Attachment: StateRestoring {
    let id: String
    weak var parent: Linker?
    var value = 0
    var links: [any StateRestoring] = []
    var decodedLinks: [(any StateRestoring)?] = []

    init(_ id: String, parent: Linker?, value: Int = 0) {
        self.id = id
        self.parent = parent
        self.value = value
    }

    var restorationParent: (any StateRestoring)? { parent }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(value, forKey: "value")
        coder.encode(links, forKey: "links")
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        value = try coder.decodeInt(forKey: "value")
        decodedLinks = try coder.decodeObjects(forKey: "links")
    }
}

/// Random hierarchies of controllers and registered objects with random references between them,
/// preserved through random sequences of full and incremental passes while values, references,
/// places and restoration parents change, with a random set of the objects involved invalidated,
/// then restored into a fresh copy. Every object is saved at its place in the hierarchy, whichever
/// object refers to it first, and every reference restores to the object at the recorded place. An
/// incremental pass that was told of every move (the moved object, one of its descendants, its old
/// parent or its new one was invalidated) leaves exactly that state; one that was not told may leave
/// moved objects at their old paths until the next full pass, but never removes or moves an object
/// whose place did not change.
@Suite struct ObjectIdentityPropertyTests {
    /// A small deterministic generator (SplitMix64), so a failure names a seed that reproduces it.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    }

    /// A generated app: nodes in a forest, some without identifier (their subtrees are not saved).
    final class Graph {
        var nodes: [Linker] = []
        var roots: [Linker] = []
        /// The parent of each node, by index; nil for a root.
        var parent: [Int?] = []
        /// Registered custom objects, each scoped under a node or at the root.
        var attachments: [Attachment] = []

        func index(of node: AnyObject) -> Int? { nodes.firstIndex { $0 === node } }

        /// Every object that can be saved or referred to: the nodes, then the attachments.
        var objects: [any StateRestoring] { nodes as [any StateRestoring] + attachments as [any StateRestoring] }

        init(_ generator: inout Generator) {
            let count = 2 + generator.below(11)
            for index in 0..<count {
                let hasIdentifier = index == 0 || !generator.chance(12)
                let node = Linker(hasIdentifier ? "N\(index)" : nil, value: generator.below(1000))
                nodes.append(node)
                if index == 0 || generator.chance(15) {
                    roots.append(node)
                    parent.append(nil)
                } else {
                    let to = generator.below(index)
                    parent.append(to)
                    if nodes[to].presented == nil && generator.chance(20) {
                        nodes[to].presented = node
                    } else {
                        nodes[to].children.append(node)
                    }
                }
            }
            for index in 0..<generator.below(4) {
                let parent = generator.chance(20) ? nil : nodes[generator.below(count)]
                attachments.append(Attachment("Att\(index)", parent: parent, value: generator.below(1000)))
            }
            let objects = self.objects
            for node in nodes {
                for _ in 0..<generator.below(3) { node.links.append(objects[generator.below(objects.count)]) }
            }
            for attachment in attachments {
                for _ in 0..<generator.below(2) { attachment.links.append(objects[generator.below(objects.count)]) }
            }
        }

        /// Where each node is saved: the first place a depth-first walk finds it, or nil when an
        /// ancestor (or itself) has no identifier.
        func expectedPaths() -> [ObjectIdentifier: RestorationPath] {
            var result: [ObjectIdentifier: RestorationPath] = [:]
            func walk(_ node: any RestorableController, _ path: RestorationPath) {
                guard result[ObjectIdentifier(node)] == nil else { return }
                result[ObjectIdentifier(node)] = path
                for child in node.restorationChildren {
                    if let identifier = child.restorationIdentifier { walk(child, path.appending(identifier)) }
                }
            }
            for root in roots {
                if let identifier = root.restorationIdentifier { walk(root, RestorationPath([identifier])) }
            }
            for attachment in attachments {
                if let parent = attachment.parent {
                    if let path = result[ObjectIdentifier(parent)] {
                        result[ObjectIdentifier(attachment)] = path.appending(attachment.id)
                    }
                } else {
                    result[ObjectIdentifier(attachment)] = RestorationPath([attachment.id])
                }
            }
            return result
        }

        /// A fresh copy with the same identifiers, places and no state, as a new launch builds.
        func freshCopy() -> Graph {
            let copy = Graph(empty: ())
            copy.nodes = nodes.map { Linker($0.id) }
            copy.parent = parent
            for (index, node) in nodes.enumerated() {
                copy.nodes[index].children = node.children.compactMap { child in
                    self.index(of: child).map { copy.nodes[$0] }
                }
                copy.nodes[index].presented = node.presented.flatMap { self.index(of: $0) }.map { copy.nodes[$0] }
            }
            copy.roots = roots.compactMap { root in index(of: root).map { copy.nodes[$0] } }
            copy.attachments = attachments.map { attachment in
                Attachment(
                    attachment.id, parent: attachment.parent.flatMap { self.index(of: $0) }.map { copy.nodes[$0] })
            }
            return copy
        }

        /// The object of `copy` at the place `object` has in this graph.
        func counterpart(of object: AnyObject, in copy: Graph) -> AnyObject? {
            if let index = index(of: object) { return copy.nodes[index] }
            return attachments.firstIndex { $0 === object }.map { copy.attachments[$0] }
        }

        private init(empty: Void) {}

        func isDescendant(_ candidate: Int, of ancestor: Int) -> Bool {
            var current: Int? = candidate
            while let index = current {
                if index == ancestor { return true }
                current = parent[index]
            }
            return false
        }
    }

    /// Changes the graph the way an app does, and invalidates a random part of what it changed (for
    /// a move: any of the moved object, a descendant, the old and the new parent, or none). Returns
    /// whether the passes were told of every change of place. Never moves a node into or out of a
    /// subtree that is not saved, nor detaches a node other nodes refer to.
    static func mutate(_ graph: Graph, _ manager: RestorationManager, _ generator: inout Generator) -> Bool {
        var told = true
        for _ in 0..<(1 + generator.below(3)) {
            let visible = graph.expectedPaths()
            let objects = graph.objects
            let index = generator.below(graph.nodes.count)
            let node = graph.nodes[index]
            switch generator.below(4) {
            case 0:
                node.value = generator.below(1000)
                manager.invalidateRestorableState(for: node)
            case 1:
                if node.links.isEmpty || generator.chance(50) {
                    node.links.append(objects[generator.below(objects.count)])
                } else {
                    node.links.removeLast()
                }
                manager.invalidateRestorableState(for: node)
            case 2:
                // Move a saved, embedded node under another saved node that is not below it.
                guard let from = graph.parent[index], visible[ObjectIdentifier(node)] != nil,
                    graph.nodes[from].children.contains(where: { $0 === node })
                else { continue }
                let targets = graph.nodes.indices.filter {
                    visible[ObjectIdentifier(graph.nodes[$0])] != nil && !graph.isDescendant($0, of: index)
                }
                guard !targets.isEmpty else { continue }
                let to = targets[generator.below(targets.count)]
                graph.nodes[from].children.removeAll { $0 === node }
                graph.nodes[to].children.append(node)
                graph.parent[index] = to
                // Saved descendants: an object that is not saved is not in any pass.
                let below = graph.nodes.indices.filter {
                    graph.isDescendant($0, of: index) && $0 != index
                        && visible[ObjectIdentifier(graph.nodes[$0])] != nil
                }
                let movedWith = graph.attachments.filter { attachment in
                    visible[ObjectIdentifier(attachment)] != nil
                        && attachment.parent.flatMap { graph.index(of: $0) }.map { graph.isDescendant($0, of: index) }
                            == true
                }
                var toldNow = false
                if generator.chance(40) {
                    manager.invalidateRestorableState(for: node)
                    toldNow = true
                }
                if generator.chance(40) {
                    manager.invalidateRestorableState(for: graph.nodes[from])
                    toldNow = true
                }
                if generator.chance(40) {
                    manager.invalidateRestorableState(for: graph.nodes[to])
                    toldNow = true
                }
                if !below.isEmpty && generator.chance(25) {
                    manager.invalidateRestorableState(for: graph.nodes[below[generator.below(below.count)]])
                    toldNow = true
                }
                if !movedWith.isEmpty && generator.chance(25) {
                    manager.invalidateRestorableState(for: movedWith[generator.below(movedWith.count)])
                    toldNow = true
                }
                // A reorder among the same parent's children changes no place.
                told = told && (toldNow || from == to)
            default:
                // Give a registered object another restorationParent (or none).
                guard !graph.attachments.isEmpty else { continue }
                let attachment = graph.attachments[generator.below(graph.attachments.count)]
                let old = attachment.parent
                let new = generator.chance(20) ? nil : graph.nodes[generator.below(graph.nodes.count)]
                let oldPath = visible[ObjectIdentifier(attachment)]
                attachment.parent = new
                let newPath = graph.expectedPaths()[ObjectIdentifier(attachment)]
                var toldNow = false
                if generator.chance(40) {
                    manager.invalidateRestorableState(for: attachment)
                    toldNow = oldPath != nil
                }
                if let old, generator.chance(40) {
                    manager.invalidateRestorableState(for: old)
                    toldNow = toldNow || oldPath != nil
                }
                if let new, generator.chance(40) { manager.invalidateRestorableState(for: new) }
                // Registered objects at the root are checked by every pass.
                if old == nil { toldNow = true }
                told = told && (toldNow || oldPath == newPath)
            }
        }
        return told
    }

    /// What the journal must hold for the graph: one entry per saved node, at its place, with its
    /// references recorded as those places.
    static func check(_ graph: Graph, _ journal: Journal, seed: UInt64, pass: Int) throws -> Bool {
        let expected = graph.expectedPaths()
        let entries = try decodedEntries(journal).filter { $0.key != RestorationManager.applicationPath }
        let wantedPaths = Set(expected.values)
        guard Set(entries.keys) == wantedPaths else {
            Issue.record("seed \(seed), pass \(pass): saved \(entries.keys.sorted()), expected \(wantedPaths.sorted())")
            return false
        }
        for node in graph.objects {
            guard let path = expected[ObjectIdentifier(node)], let entry = entries[path] else { continue }
            let (value, links) = state(of: node)
            let linkValues = links.map { expected[ObjectIdentifier($0)].map(RestorableValue.reference) ?? .null }
            guard entry.values["value"] == .int(Int64(value)), entry.values["links"] == .array(linkValues) else {
                Issue.record(
                    """
                    seed \(seed), pass \(pass): \(path) holds \(entry.values), expected value \(value), links \
                    \(linkValues)
                    """
                )
                return false
            }
        }
        return true
    }

    /// What the journal must hold after a pass that was not told of every move: every object whose
    /// place did not change since `settled` is still saved there, with its current value (every
    /// change of value is invalidated).
    static func checkUnmoved(
        _ graph: Graph, _ journal: Journal, settled: [ObjectIdentifier: RestorationPath], seed: UInt64, pass: Int
    ) throws -> Bool {
        let entries = try decodedEntries(journal)
        for (id, path) in graph.expectedPaths() where settled[id] == path {
            guard let entry = entries[path] else {
                Issue.record("seed \(seed), pass \(pass): \(path) did not move and is no longer saved")
                return false
            }
            guard let object = graph.objects.first(where: { ObjectIdentifier($0) == id }) else { continue }
            guard entry.values["value"] == .int(Int64(state(of: object).value)) else {
                Issue.record(
                    """
                    seed \(seed), pass \(pass): \(path) holds \(entry.values), expected value \
                    \(state(of: object).value)
                    """
                )
                return false
            }
        }
        return true
    }

    static func state(of object: any StateRestoring) -> (value: Int, links: [any StateRestoring]) {
        if let node = object as? Linker { return (node.value, node.links) }
        let attachment = object as! Attachment
        return (attachment.value, attachment.links)
    }

    @Test func everyObjectKeepsItsPlaceAndEveryReferenceRestoresToIt() throws {
        let graphs = Int(ProcessInfo.processInfo.environment["STATEJOURNAL_IDENTITY_GRAPHS"] ?? "") ?? 1_000
        let firstSeed = UInt64(ProcessInfo.processInfo.environment["STATEJOURNAL_IDENTITY_SEED"] ?? "") ?? 1
        for seed in firstSeed..<(firstSeed + UInt64(graphs)) {
            var generator = Generator(state: seed)
            let graph = Graph(&generator)
            let store = TestStore()
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            for attachment in graph.attachments {
                manager.registerObject(forStateRestoration: attachment, restorationIdentifier: attachment.id)
            }
            var consistent = true
            // Whether a pass since the last exact state was not told of a move, and the places then.
            var stale = false
            var settled = graph.expectedPaths()
            for pass in 0..<(2 + generator.below(5)) where consistent {
                var told = true
                let before = graph.expectedPaths()
                if pass > 0 { told = Self.mutate(graph, manager, &generator) }
                let structural = graph.expectedPaths() != before
                stale = stale || !told
                let mode: PreservationMode = generator.chance(50) ? .full : .incremental
                let report = try manager.preserveState(roots: graph.roots, mode: mode)
                if mode == .incremental && pass > 0 && !structural && !stale && report.mode != .incremental {
                    Issue.record(
                        "seed \(seed), pass \(pass): nothing moved, yet \(String(describing: report.fullPassReason))")
                    consistent = false
                }
                if report.mode == .full { stale = false }
                if stale {
                    consistent =
                        try consistent
                        && Self.checkUnmoved(
                            graph, journal, settled: settled, seed: seed, pass: pass)
                } else {
                    consistent = try consistent && Self.check(graph, journal, seed: seed, pass: pass)
                    settled = graph.expectedPaths()
                }
            }
            guard consistent else { continue }
            if stale {
                try manager.preserveState(roots: graph.roots, mode: .full)
                guard try Self.check(graph, journal, seed: seed, pass: -1) else { continue }
            }

            let copy = graph.freshCopy()
            let restoring = store.manager(journal, delegate: delegate)
            for attachment in copy.attachments {
                restoring.registerObject(forStateRestoration: attachment, restorationIdentifier: attachment.id)
            }
            try restoring.restoreState(roots: copy.roots)
            let expected = graph.expectedPaths()
            for object in graph.objects where expected[ObjectIdentifier(object)] != nil {
                guard let restored = graph.counterpart(of: object, in: copy) as? any StateRestoring else { continue }
                let (value, links) = Self.state(of: object)
                let restoredValue = Self.state(of: restored).value
                let decodedLinks = (restored as? Linker)?.decodedLinks ?? (restored as! Attachment).decodedLinks
                // A reference saved as null restores as nil, which decodeObjects leaves out.
                let wanted: [AnyObject] = links.compactMap { link in
                    expected[ObjectIdentifier(link)] == nil ? nil : graph.counterpart(of: link, in: copy)
                }
                let ok =
                    restoredValue == value && decodedLinks.count == wanted.count
                    && zip(decodedLinks, wanted).allSatisfy { $0 === $1 }
                if !ok {
                    Issue.record(
                        """
                        seed \(seed): \(expected[ObjectIdentifier(object)].map { "\($0)" } ?? "?") restored value \
                        \(restoredValue) and \(decodedLinks.count) links, expected \(value) and \(wanted.count)
                        """
                    )
                    break
                }
            }
            try journal.close()
        }
    }
}
