import Foundation
import Observation
import StateJournal
import StateRestoration
import Testing

/// Random hierarchies of controllers (plain ones, `@Observable` ones and ones made of `@Preserved`
/// properties) whose values, keys and places change at random, some changes invalidated and most not,
/// saved by default passes with an occasional incremental pass between them. After every default
/// pass the store holds exactly the state of every reachable object, and the pass wrote exactly the
/// entries whose state differed from the store's and removed exactly the paths no longer reached;
/// after an incremental pass, every object whose changes were all announced (invalidated by the
/// app, by observation or by a preserved property) is saved as it is; a relaunch restores every
/// object as it was.
@Suite struct DefaultPassPropertyTests {
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
        mutating func element<T>(_ items: [T]) -> T { items[below(items.count)] }
    }

    /// Keys that share their first eight bytes, keys whose bytes differ but that are equal as
    /// `String`s ("é" spelled two ways, ";" and U+037E), a key with a NUL byte, the empty key, and
    /// enough of them that an object can hold more than sixteen.
    static let keys = [
        "a", "b", "id", "", "a\u{0}", "title", "selectedRow", "selectedRows", "selected", "scrollOffset",
        "scrollOffsetY", "\u{E9}", "e\u{301}", ";", "\u{37E}", "Ünïcödé", "k1", "k2", "k3", "k4", "k5", "k6", "k7",
        "k8", "a very long key that goes on", "a very long key that goes on and on",
    ]

    /// A value of one of the types the coder stores directly.
    enum Value: Equatable {
        case int(Int)
        case double(Double)
        case string(String)
        case bool(Bool)
        case strings([String])
        case data(Data)

        static func random(_ generator: inout Generator) -> Value {
            switch generator.below(6) {
            case 0: .int(generator.below(2_000) - 1_000)
            case 1: .double(Double(generator.below(10_000)) / 8)
            case 2: .string(generator.element(["", "x", "Quarterly report draft", "Ünïcödé", "a\u{0}b"]))
            case 3: .bool(generator.chance(50))
            case 4: .strings((0..<generator.below(4)).map { "s\($0 * generator.below(9))" })
            default: .data(Data((0..<generator.below(6)).map { UInt8($0 * 37 % 256) }))
            }
        }

        var stored: RestorableValue {
            switch self {
            case .int(let value): .int(Int64(value))
            case .double(let value): .double(value)
            case .string(let value): .string(value)
            case .bool(let value): .bool(value)
            case .strings(let values): .array(values.map(RestorableValue.string))
            case .data(let value): .data(value)
            }
        }

        func encode(into coder: RestorationCoder, forKey key: String) {
            switch self {
            case .int(let value): coder.encode(value, forKey: key)
            case .double(let value): coder.encode(value, forKey: key)
            case .string(let value): coder.encode(value, forKey: key)
            case .bool(let value): coder.encode(value, forKey: key)
            case .strings(let values): coder.encode(values, forKey: key)
            case .data(let value): coder.encode(value, forKey: key)
            }
        }

        /// The value `decodeObject(forKey:)` gives back, as a `Value`; matched by exact type, as a
        /// cast could bridge a number to another number type.
        init?(decoded: Any) {
            let type = type(of: decoded)
            if type == Bool.self, let value = decoded as? Bool {
                self = .bool(value)
            } else if type == Int.self, let value = decoded as? Int {
                self = .int(value)
            } else if type == Double.self, let value = decoded as? Double {
                self = .double(value)
            } else if type == String.self, let value = decoded as? String {
                self = .string(value)
            } else if type == Data.self, let value = decoded as? Data {
                self = .data(value)
            } else if let items = decoded as? [Any], let strings = items as? [String] {
                self = .strings(strings)
            } else {
                return nil
            }
        }
    }

    /// A controller of the generated app; what it saves is ``expected``.
    protocol Pane: RestorableController {
        var identifier: String { get }
        var panes: [any Pane] { get set }
        /// The values its next encode writes.
        var expected: [String: RestorableValue] { get }
        /// Changes its values at random.
        func mutate(_ generator: inout Generator)
        /// The values its last decode read.
        var decoded: [String: Value] { get }
        /// A new pane of the same type and identifier, without values.
        func blank() -> any Pane
    }

    /// A controller whose keys and values change, written as on iOS: it invalidates nothing.
    final class PlainPane: Pane {
        let identifier: String
        var panes: [any Pane] = []
        var values: [String: Value] = [:]
        /// Keys written first with another value, then overwritten.
        var rewritten: Set<String> = []
        var decoded: [String: Value] = [:]

        init(_ identifier: String) { self.identifier = identifier }

        var restorationIdentifier: String? { identifier }
        var embeddedRestorationChildren: [any RestorableController] { panes }
        var expected: [String: RestorableValue] { values.mapValues(\.stored) }

        func mutate(_ generator: inout Generator) { DefaultPassPropertyTests.mutate(&values, &rewritten, &generator) }

        func encodeRestorableState(with coder: RestorationCoder) throws {
            DefaultPassPropertyTests.encode(values, rewriting: rewritten, into: coder)
        }

        func decodeRestorableState(with coder: RestorationCoder) throws {
            decoded = DefaultPassPropertyTests.decode(coder)
        }

        func blank() -> any Pane { PlainPane(identifier) }
    }

    /// The same, `@Observable`: a change to `values` invalidates it without a call from the app.
    @Observable final class ObservedPane: Pane {
        @ObservationIgnored let identifier: String
        @ObservationIgnored var panes: [any Pane] = []
        var values: [String: Value] = [:]
        var rewritten: Set<String> = []
        @ObservationIgnored var decoded: [String: Value] = [:]

        init(_ identifier: String) { self.identifier = identifier }

        var restorationIdentifier: String? { identifier }
        var embeddedRestorationChildren: [any RestorableController] { panes }
        var expected: [String: RestorableValue] { values.mapValues(\.stored) }

        func mutate(_ generator: inout Generator) { DefaultPassPropertyTests.mutate(&values, &rewritten, &generator) }

        func encodeRestorableState(with coder: RestorationCoder) throws {
            DefaultPassPropertyTests.encode(values, rewriting: rewritten, into: coder)
        }

        func decodeRestorableState(with coder: RestorationCoder) throws {
            decoded = DefaultPassPropertyTests.decode(coder)
        }

        func blank() -> any Pane { ObservedPane(identifier) }
    }

    /// A controller made of `@Preserved` properties, whose setters invalidate it.
    final class PreservedPane: Pane {
        let identifier: String
        var panes: [any Pane] = []
        @Preserved("count") var count = 0
        @Preserved("label") var label = ""
        @Preserved("tags") var tags: [String] = []
        var decoded: [String: Value] = [:]

        init(_ identifier: String) { self.identifier = identifier }

        var restorationIdentifier: String? { identifier }
        var embeddedRestorationChildren: [any RestorableController] { panes }
        var expected: [String: RestorableValue] {
            ["count": .int(Int64(count)), "label": .string(label), "tags": .array(tags.map(RestorableValue.string))]
        }

        func mutate(_ generator: inout Generator) {
            switch generator.below(3) {
            case 0: count = generator.below(100)
            case 1: label = generator.element(["", "draft", "Ünïcödé", "final"])
            default: tags = (0..<generator.below(3)).map { "t\($0 + generator.below(5))" }
            }
        }

        func encodeRestorableState(with coder: RestorationCoder) throws { try encodePreservedProperties(with: coder) }

        func decodeRestorableState(with coder: RestorationCoder) throws {
            try decodePreservedProperties(with: coder)
            decoded = ["count": .int(count), "label": .string(label), "tags": .strings(tags)]
        }

        func blank() -> any Pane { PreservedPane(identifier) }
    }

    static func mutate(_ values: inout [String: Value], _ rewritten: inout Set<String>, _ generator: inout Generator) {
        for _ in 0..<(1 + generator.below(3)) {
            let key = generator.element(keys)
            switch generator.below(5) {
            case 0: values[key] = nil
            case 1:
                if rewritten.contains(key) { rewritten.remove(key) } else { rewritten.insert(key) }
            default: values[key] = Value.random(&generator)
            }
        }
    }

    /// Encodes `values` in the dictionary's order (which differs from one process to the next), each
    /// key in `rewritten` first with a value it then replaces.
    static func encode(_ values: [String: Value], rewriting rewritten: Set<String>, into coder: RestorationCoder) {
        for key in rewritten where values[key] != nil { coder.encode("to be replaced", forKey: key) }
        for (key, value) in values { value.encode(into: coder, forKey: key) }
    }

    static func decode(_ coder: RestorationCoder) -> [String: Value] {
        var decoded: [String: Value] = [:]
        for key in coder.allKeys {
            guard let object = coder.decodeObject(forKey: key), let value = Value(decoded: object) else { continue }
            decoded[key] = value
        }
        return decoded
    }

    /// A generated app: a tree of panes under one root.
    struct App {
        var root: any Pane
        var all: [any Pane] = []

        init(_ generator: inout Generator) {
            root = PlainPane("Root")
            all = [root]
            for index in 0..<(3 + generator.below(20)) {
                let pane: any Pane =
                    switch generator.below(3) {
                    case 0: PlainPane("P\(index)")
                    case 1: ObservedPane("P\(index)")
                    default: PreservedPane("P\(index)")
                    }
                for _ in 0..<generator.below(4) { pane.mutate(&generator) }
                let parent = all[generator.below(all.count)]
                parent.panes.append(pane)
                all.append(pane)
            }
        }

        /// Every reachable pane with its path.
        var reachable: [(path: RestorationPath, pane: any Pane)] {
            var result: [(RestorationPath, any Pane)] = []
            func walk(_ pane: any Pane, _ parent: RestorationPath) {
                let path = parent.appending(pane.identifier)
                result.append((path, pane))
                var seen: Set<String> = []
                for child in pane.panes where seen.insert(child.identifier).inserted { walk(child, path) }
            }
            walk(root, RestorationPath([String]()))
            return result
        }

        /// Moves a pane (with its subtree) under another one that is not below it, or detaches it, or
        /// attaches a detached one.
        mutating func restructure(_ generator: inout Generator) {
            let pane = all[1 + generator.below(all.count - 1)]
            for other in all { other.panes.removeAll { $0 === pane } }
            guard !generator.chance(25) else { return }
            var below: Set<ObjectIdentifier> = []
            var stack: [any Pane] = [pane]
            while let next = stack.popLast() {
                below.insert(ObjectIdentifier(next))
                stack += next.panes
            }
            let parents = all.filter { !below.contains(ObjectIdentifier($0)) }
            parents[generator.below(parents.count)].panes.append(pane)
        }

        /// A fresh copy of the reachable tree, without values, for a relaunch.
        var blankCopy: (root: any Pane, byPath: [RestorationPath: any Pane]) {
            var byPath: [RestorationPath: any Pane] = [:]
            func copy(_ pane: any Pane, _ parent: RestorationPath) -> any Pane {
                let path = parent.appending(pane.identifier)
                let fresh = pane.blank()
                byPath[path] = fresh
                var seen: Set<String> = []
                fresh.panes = pane.panes.filter { seen.insert($0.identifier).inserted }.map { copy($0, path) }
                return fresh
            }
            let root = copy(root, RestorationPath([String]()))
            return (root, byPath)
        }
    }

    @Test(arguments: 0..<24)
    func everyDefaultPassLeavesTheStoreEqualToTheModelAndWritesOnlyWhatDiffers(seed: UInt64) throws {
        var generator = Generator(state: seed &* 0x2545_F491_4F6C_DD1D &+ 7)
        let store = TestStore()
        var app = App(&generator)
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: [app.root])
            // Plain panes changed since the last default pass without an invalidation after the
            // change, and whether the hierarchy changed since then: what an incremental pass may miss.
            var unannounced: Set<ObjectIdentifier> = []
            var restructured = false
            for round in 0..<10 {
                for _ in 0..<(1 + generator.below(6)) {
                    let pane = app.all[generator.below(app.all.count)]
                    pane.mutate(&generator)
                    if generator.chance(20) {
                        manager.invalidateRestorableState(for: pane)
                        unannounced.remove(ObjectIdentifier(pane))
                    } else if pane is PlainPane {
                        unannounced.insert(ObjectIdentifier(pane))
                    }
                }
                if generator.chance(30) {
                    app.restructure(&generator)
                    restructured = true
                }
                let context = "seed \(seed), round \(round)"
                let expected = Dictionary(
                    app.reachable.map { ($0.path, $0.pane.expected) }, uniquingKeysWith: { first, _ in first })
                if generator.chance(25) {
                    try manager.preserveState(roots: [app.root], mode: .incremental)
                    guard !restructured else { continue }
                    let after = try decodedEntries(journal)
                    for (path, pane) in app.reachable where !unannounced.contains(ObjectIdentifier(pane)) {
                        #expect(after[path]?.values == expected[path], "\(context), incremental: \(path)")
                    }
                    continue
                }
                let before = try decodedEntries(journal)
                let report = try manager.preserveState(roots: [app.root])
                unannounced = []
                restructured = false
                let after = try decodedEntries(journal)
                for (path, values) in expected {
                    #expect(after[path]?.values == values, "\(context): \(path)")
                }
                let saved = Set(after.keys).subtracting([RestorationManager.applicationPath])
                #expect(saved == Set(expected.keys), "\(context)")
                let differing = expected.filter { before[$0.key]?.values != $0.value }.map(\.key)
                #expect(Set(report.writtenPaths) == Set(differing), "\(context)")
                let gone = Set(before.keys).subtracting(expected.keys).subtracting([RestorationManager.applicationPath])
                #expect(Set(report.removedPaths) == gone, "\(context)")
            }
            try manager.preserveState(roots: [app.root])
            withExtendedLifetime(delegate) {}
        }
        // A relaunch restores every reachable pane as it was last saved.
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let (root, byPath) = app.blankCopy
        try manager.restoreState(roots: [root])
        for (path, pane) in app.reachable {
            let expected = pane.expected.compactMapValues { value -> Value? in
                switch value {
                case .int(let int): .int(Int(int))
                case .double(let double): .double(double)
                case .string(let string): .string(string)
                case .bool(let bool): .bool(bool)
                case .data(let data): .data(data)
                case .array(let items):
                    .strings(
                        items.compactMap {
                            if case .string(let string) = $0 { return string }
                            return nil
                        })
                default: nil
                }
            }
            #expect(byPath[path]?.decoded == expected, "seed \(seed): \(path)")
        }
        withExtendedLifetime(delegate) {}
    }
}
