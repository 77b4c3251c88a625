import Foundation
import StateJournal
import StateRestoration
import Testing

/// Random interleavings of passes over several scenes (the default one and three windows): random
/// trees change, scenes are saved fully or incrementally, windows are closed and opened again,
/// windows reconnect and restore into new objects with their restoration held open for a while
/// (their passes then save nothing), the store is compacted, and the app is killed and launched
/// again, restoring the scenes in a random order. A model says what each scene last saved; after every step the store holds exactly that
/// for every scene, and after every launch each scene restores exactly that.
@Suite struct ScenePropertyTests {
    typealias Generator = ObjectIdentityPropertyTests.Generator
    static let scenes: [SceneSession?] = [
        nil, SceneSession(persistentIdentifier: "one"), SceneSession(persistentIdentifier: "two"),
        SceneSession(persistentIdentifier: "3/three"),
    ]

    /// One window's live controllers, and the ones changed since its last pass.
    final class Window {
        var main: Node
        var dirty: [Node] = []

        init(_ saved: [String: Int]?) {
            main = Node("Main", value: saved?["Main"] ?? 0)
            guard let saved else { return }
            for (path, value) in saved.sorted(by: { $0.key < $1.key }) {
                let parts = path.split(separator: "/").map(String.init)
                guard parts.count > 1 else { continue }
                var parent = main
                for part in parts.dropFirst().dropLast() { parent = parent.children.first { $0.id == part }! }
                let node = Node(parts.last!, value: value)
                node.restorationType = NodeFactory.self
                parent.children.append(node)
            }
        }

        /// Every node's value by its path below the scene.
        var snapshot: [String: Int] {
            var values: [String: Int] = [:]
            func walk(_ node: Node, _ prefix: String) {
                let path = prefix.isEmpty ? node.id! : prefix + "/" + node.id!
                values[path] = node.value
                for child in node.children { walk(child, path) }
            }
            walk(main, "")
            return values
        }

        /// Changes values and structure at random, noting what an incremental pass must be told.
        func mutate(_ random: inout Generator) {
            var nodes: [Node] = []
            func collect(_ node: Node, depth: Int) {
                nodes.append(node)
                for child in node.children { collect(child, depth: depth + 1) }
            }
            collect(main, depth: 0)
            for _ in 0...random.below(3) {
                let node = nodes[random.below(nodes.count)]
                switch random.below(3) {
                case 0:
                    node.value = random.below(1000)
                    dirty.append(node)
                case 1 where node.children.count < 3 && (node === main || node.children.isEmpty && random.chance(50)):
                    let id = "n\(random.below(5))"
                    guard !node.children.contains(where: { $0.id == id }) else { continue }
                    let child = Node(id, value: random.below(1000))
                    child.restorationType = NodeFactory.self
                    node.children.append(child)
                    dirty.append(node)
                default:
                    guard !node.children.isEmpty else { continue }
                    node.children.remove(at: random.below(node.children.count))
                    dirty.append(node)
                }
            }
        }
    }

    /// The values the store holds for `scene`, by path below it.
    static func stored(_ journal: Journal, scene: SceneSession?) throws -> [String: Int] {
        var values: [String: Int] = [:]
        for (path, entry) in try decodedEntries(journal) {
            guard let first = path.components.first, first != "@application" else { continue }
            let relative: ArraySlice<String>
            if let scene {
                guard first == "@scene:" + scene.persistentIdentifier else { continue }
                relative = path.components.dropFirst()
            } else {
                guard !first.hasPrefix("@scene:") else { continue }
                relative = path.components[...]
            }
            guard case .int(let value)? = entry.values["value"] else { continue }
            values[relative.joined(separator: "/")] = Int(value)
        }
        return values
    }

    @Test(arguments: 0..<40)
    func interleavedScenePassesMatchTheModel(seed: Int) throws {
        var random = Generator(state: UInt64(seed) &* 0x2545_F491_4F6C_DD1D &+ 17)
        let store = TestStore()
        var journal = try store.open()
        // Restorations can be held open, as an app that loads state later holds them.
        let delegate = SceneRestorationTests.Extender()
        var manager = store.manager(journal, delegate: delegate)
        delegate.manager = manager
        // The scenes whose restoration is held open: their passes save nothing until released.
        var held: Set<SceneSession> = []
        var saved: [SceneSession?: [String: Int]] = [:]
        var windows: [SceneSession?: Window] = [:]
        for scene in Self.scenes { windows[scene] = Window(nil) }

        func check(_ step: Int) throws {
            for scene in Self.scenes {
                #expect(
                    try Self.stored(journal, scene: scene) == (saved[scene] ?? [:]),
                    "seed \(seed) step \(step) scene \(scene?.persistentIdentifier ?? "default")")
            }
            let open = Set(Self.scenes.compactMap { $0 }.filter { saved[$0]?.isEmpty == false })
            #expect(manager.openSessions == open, "seed \(seed) step \(step)")
            for scene in Self.scenes.compactMap({ $0 }) {
                #expect(manager.isRestoring(scene: scene) == held.contains(scene), "seed \(seed) step \(step)")
            }
        }

        for step in 0..<60 {
            let scene = Self.scenes[random.below(Self.scenes.count)]
            switch random.below(10) {
            case 0...2:
                windows[scene]!.mutate(&random)
            case 3...5:
                let window = windows[scene]!
                let incremental = random.chance(50)
                if incremental { for node in window.dirty { manager.invalidateRestorableState(for: node) } }
                let mode: PreservationMode = incremental ? .incremental : .full
                let report =
                    if let scene {
                        try manager.preserveState(roots: [window.main], scene: scene, mode: mode)
                    } else {
                        try manager.preserveState(roots: [window.main], mode: mode)
                    }
                if let scene, held.contains(scene) {
                    #expect(report.outcome == .restorationInProgress, "seed \(seed) step \(step)")
                    continue
                }
                window.dirty = []
                saved[scene] = window.snapshot
            case 6:
                guard let scene else { continue }
                try manager.discardSceneSessions([scene])
                saved[scene] = nil
                held.remove(scene)
                windows[scene] = Window(nil)
            case 7:
                _ = try journal.compact()
            case 8 where scene != nil && random.chance(50):
                // A window reconnects in the same process: restored into new objects, its restoration
                // held open or released.
                let scene = scene!
                if held.remove(scene) != nil {
                    try manager.completeStateRestoration(scene: scene)
                    continue
                }
                let window = Window(saved[scene])
                delegate.extendsNext = saved[scene] != nil
                let report = try manager.restoreState(roots: [Node("Main")], scene: scene)
                delegate.extendsNext = false
                #expect(report.restored.count == saved[scene]?.count ?? 0, "seed \(seed) step \(step)")
                if saved[scene] != nil { held.insert(scene) }
                windows[scene] = window
            default:
                // Killed and launched again (after every held restoration completed, so that no crash
                // loop is involved): every scene restores into a fresh window, in a random order.
                for scene in held { try manager.completeStateRestoration(scene: scene) }
                held = []
                try journal.close()
                journal = try store.open()
                manager = store.manager(journal, delegate: delegate)
                delegate.manager = manager
                var order = Self.scenes
                for index in order.indices.reversed() { order.swapAt(index, random.below(index + 1)) }
                for scene in order {
                    let main = Node("Main")
                    let report =
                        if let scene {
                            try manager.restoreState(roots: [main], scene: scene)
                        } else {
                            try manager.restoreState(roots: [main])
                        }
                    let expected = saved[scene] ?? [:]
                    let prefix = scene.map { ["@scene:" + $0.persistentIdentifier] } ?? []
                    let restored = Set(
                        report.restored.map { $0.path.components.dropFirst(prefix.count).joined(separator: "/") })
                    #expect(restored == Set(expected.keys), "seed \(seed) step \(step)")
                    #expect(report.scene == scene)
                    if !expected.isEmpty { #expect(main.value == expected["Main"], "seed \(seed) step \(step)") }
                    windows[scene] = Window(saved[scene])
                }
            }
            try check(step)
        }
    }
}
