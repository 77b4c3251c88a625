import Foundation
import StateJournal
import StateRestoration
import Testing

/// Random hierarchies of controllers with random references between them, preserved through random
/// sequences of full and incremental passes while values, references and places change, then
/// restored into a fresh copy. Every object is saved at its place in the hierarchy, whichever object
/// refers to it first, and every reference restores to the object at the recorded place.
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

        func index(of node: AnyObject) -> Int? { nodes.firstIndex { $0 === node } }

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
            for node in nodes {
                for _ in 0..<generator.below(3) { node.links.append(nodes[generator.below(count)]) }
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
            return copy
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

    /// Changes the graph the way an app does, invalidating what it changed. Never moves a node into
    /// or out of a subtree that is not saved, nor detaches a node other nodes refer to.
    static func mutate(_ graph: Graph, _ manager: RestorationManager, _ generator: inout Generator) {
        let visible = graph.expectedPaths()
        for _ in 0..<(1 + generator.below(3)) {
            let index = generator.below(graph.nodes.count)
            let node = graph.nodes[index]
            switch generator.below(3) {
            case 0:
                node.value = generator.below(1000)
                manager.invalidateRestorableState(for: node)
            case 1:
                if node.links.isEmpty || generator.chance(50) {
                    node.links.append(graph.nodes[generator.below(graph.nodes.count)])
                } else {
                    node.links.removeLast()
                }
                manager.invalidateRestorableState(for: node)
            default:
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
                manager.invalidateRestorableState(for: graph.nodes[from])
                manager.invalidateRestorableState(for: graph.nodes[to])
            }
        }
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
        for node in graph.nodes {
            guard let path = expected[ObjectIdentifier(node)], let entry = entries[path] else { continue }
            let links = node.links.map { expected[ObjectIdentifier($0)].map(RestorableValue.reference) ?? .null }
            guard entry.values["value"] == .int(Int64(node.value)), entry.values["links"] == .array(links) else {
                Issue.record(
                    "seed \(seed), pass \(pass): \(path) holds \(entry.values), expected value \(node.value), links \(links)"
                )
                return false
            }
        }
        return true
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
            var consistent = true
            for pass in 0..<(2 + generator.below(5)) where consistent {
                if pass > 0 { Self.mutate(graph, manager, &generator) }
                let mode: PreservationMode = generator.chance(50) ? .full : .incremental
                try manager.preserveState(roots: graph.roots, mode: mode)
                consistent = try Self.check(graph, journal, seed: seed, pass: pass)
            }
            guard consistent else { continue }

            let copy = graph.freshCopy()
            let restoring = store.manager(journal, delegate: delegate)
            try restoring.restoreState(roots: copy.roots)
            let expected = graph.expectedPaths()
            for (index, node) in graph.nodes.enumerated() where expected[ObjectIdentifier(node)] != nil {
                let restored = copy.nodes[index]
                // A reference saved as null restores as nil, which decodeObjects leaves out.
                let wanted: [AnyObject] = node.links.compactMap { link in
                    expected[ObjectIdentifier(link)] == nil ? nil : graph.index(of: link).map { copy.nodes[$0] }
                }
                let ok =
                    restored.value == node.value && restored.decodedLinks.count == wanted.count
                    && zip(restored.decodedLinks, wanted).allSatisfy { $0 === $1 }
                if !ok {
                    Issue.record(
                        "seed \(seed): \(expected[ObjectIdentifier(node)].map { "\($0)" } ?? "?") restored value \(restored.value) and links \(restored.decodedLinks.map { ($0 as? Linker)?.id ?? "nil" }), expected \(node.value) and \(wanted.map { ($0 as? Linker)?.id ?? "nil" })"
                    )
                    break
                }
            }
            try journal.close()
        }
    }
}
