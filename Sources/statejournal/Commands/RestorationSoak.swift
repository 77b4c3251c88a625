import Foundation
import Logging
import StateJournal
import StateJournalComparison
import StateRestoration

/// `statejournal soak --restoration`: a simulated app that saves through a `RestorationManager`,
/// which recovers by itself from failed writes and syncs, for the kernel durability tests.
///
/// The app has `objects` objects; change *c* (from 1) sets object `(c - 1) % objects` to *c*, so
/// the app's state after change *c* is a function of *c* alone, recorded in each pass's
/// application coder. The app makes one change after another, saves after each with
/// `preserveState(roots:)`, and prints `acknowledged C T S` (the change, and the Unix times at
/// which the save returned and began) after each save that returned; a save that throws is reported on standard error when the store
/// becomes unavailable and again when it saves again, and the app goes on changing its objects.
///
/// With the churn workload the app also has containers whose children come and go at every change
/// (see ``RestorationChurn``); the application coder records the workload, so the check needs no flag.
struct RestorationSoak {
    let objects: Int
    let seed: UInt64
    let kind: SoakWorkload.Kind

    init(objects: Int, seed: UInt64, kind: SoakWorkload.Kind = .steady) {
        self.objects = objects
        self.seed = seed
        self.kind = kind
    }

    /// The key of the change number in the application coder.
    static let changeKey = "soak.change"
    /// The key of the workload in the application coder (absent: steady).
    static let workloadKey = SoakWorkload.kindKey

    /// The containers and children of the churn workload; the check offers its containers as roots
    /// whatever the store holds.
    var churn: RestorationChurn { RestorationChurn(objects: objects) }

    /// An object of the simulated app: a number, and a payload derived from it.
    final class SoakObject: RestorableController {
        let restorationIdentifier: String?
        let seed: UInt64
        /// How many times the payload repeats its pattern, beyond `value % 24`.
        let repeats: Int
        var value = 0

        init(index: Int, seed: UInt64) {
            restorationIdentifier = "Object-\(index)"
            self.seed = seed
            repeats = 8
        }

        init(identifier: String, seed: UInt64, repeats: Int, value: Int = 0) {
            restorationIdentifier = identifier
            self.seed = seed
            self.repeats = repeats
            self.value = value
        }

        func encodeRestorableState(with coder: RestorationCoder) throws {
            coder.encode(value, forKey: "value")
            coder.encode(Self.payload(value, seed: seed, repeats: repeats), forKey: "payload")
        }

        func decodeRestorableState(with coder: RestorationCoder) throws {
            value = try coder.decodeInt(forKey: "value")
            guard try coder.decodeString(forKey: "payload") == Self.payload(value, seed: seed, repeats: repeats) else {
                throw RestorationError(.corruptEntry, "The payload does not match the value \(value).")
            }
        }

        static func payload(_ value: Int, seed: UInt64, repeats: Int = 8) -> String {
            String(repeating: "\(seed)-\(value);", count: repeats + value % 24)
        }
    }

    /// A container of the churn workload: its children, and their identifiers in its own entry.
    final class SoakContainer: RestorableController {
        let restorationIdentifier: String?
        var children: [SoakObject] = []
        /// The identifiers its entry listed, once restored.
        var restoredChildren: [String]?

        init(index: Int) { restorationIdentifier = "Container-\(index)" }

        var embeddedRestorationChildren: [any RestorableController] { children }

        func encodeRestorableState(with coder: RestorationCoder) throws {
            coder.encode(children.compactMap(\.restorationIdentifier).joined(separator: ","), forKey: "children")
        }

        func decodeRestorableState(with coder: RestorationCoder) throws {
            let list = try coder.decodeString(forKey: "children")
            restoredChildren = list.isEmpty ? [] : list.split(separator: ",").map(String.init)
        }
    }

    /// Saves everything; records the change number and the workload, and reads them back at
    /// restoration. Creates the children the store holds under the containers, and keeps them.
    final class SoakDelegate: ApplicationRestorationDelegate {
        let seed: UInt64
        let churn: RestorationChurn
        var change = 0
        var kind = SoakWorkload.Kind.steady
        var restoredChange: Int?
        var restoredKind: String?
        /// The children restoration created, by container identifier and their own.
        var restoredChildren: [String: [String: SoakObject]] = [:]
        /// The containers, by identifier: each child restoration creates joins its container, as an
        /// app's container holds the children it restores.
        var containers: [String: SoakContainer] = [:]

        init(seed: UInt64, churn: RestorationChurn) {
            self.seed = seed
            self.churn = churn
        }

        func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func willEncodeRestorableState(_ coder: RestorationCoder) {
            coder.encode(change, forKey: RestorationSoak.changeKey)
            if kind != .steady { coder.encode(kind.rawValue, forKey: RestorationSoak.workloadKey) }
        }
        func didDecodeRestorableState(_ coder: RestorationCoder) {
            restoredChange = try? coder.decodeInt(forKey: RestorationSoak.changeKey)
            restoredKind = try? coder.decodeString(forKey: RestorationSoak.workloadKey)
        }
        func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
            -> (any RestorableController)?
        {
            guard identifierComponents.count == 2 else { return nil }
            let child = SoakObject(identifier: identifierComponents[1], seed: seed, repeats: churn.repeats)
            restoredChildren[identifierComponents[0], default: [:]][identifierComponents[1]] = child
            containers[identifierComponents[0]]?.children.append(child)
            return child
        }
    }

    /// The value of object `index` after change `change`.
    func value(of index: Int, after change: Int) -> Int {
        guard change >= 1 else { return 0 }
        let last = change - ((change - 1 - index) % objects + objects) % objects
        return last >= 1 ? last : 0
    }

    /// A manager over `journal` with the app's objects and the churn workload's containers as roots,
    /// restored from it.
    private func restored(_ journal: Journal, logger: Logger) throws -> (
        RestorationManager, SoakDelegate, [SoakObject], [SoakContainer]
    ) {
        let manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(bundleVersion: "soak", interfaceIdiom: "server", logger: logger))
        let delegate = SoakDelegate(seed: seed, churn: churn)
        delegate.kind = kind
        manager.delegate = delegate
        let roots = (0..<objects).map { SoakObject(index: $0, seed: seed) }
        let containers = (0..<churn.containers).map { SoakContainer(index: $0) }
        for container in containers { delegate.containers[container.restorationIdentifier!] = container }
        try manager.restoreState(roots: roots + containers)
        return (manager, delegate, roots, containers)
    }

    /// Changes and saves until `seconds` have passed, continuing from what the store holds.
    func write(to journal: Journal, seconds: Double, logger: Logger) throws {
        let (manager, delegate, objectRoots, containers) = try restored(journal, logger: logger)
        if delegate.restoredChange != nil {
            let recorded = delegate.restoredKind ?? SoakWorkload.Kind.steady.rawValue
            guard recorded == kind.rawValue else {
                throw CommandFailure(
                    .usage,
                    """
                    the store was written by soak --restoration --workload \(recorded); continue it with \
                    --workload \(recorded), or soak another directory. Nothing was written.
                    """)
            }
        }
        // The steady workload saves its objects only, as it always did.
        let roots: [any RestorableController] = kind == .churn ? objectRoots + containers : objectRoots
        var children = delegate.restoredChildren.values.reduce(into: [String: SoakObject]()) {
            $0.merge($1) { a, _ in a }
        }
        var change = (delegate.restoredChange ?? 0) + 1
        var unavailableSince: Int?
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            let object = objectRoots[(change - 1) % objects]
            object.value = change
            manager.invalidateRestorableState(for: object)
            if kind == .churn {
                // The children the app has after this change: the ones it keeps, and new objects.
                var kept: [String: SoakObject] = [:]
                for (index, container) in containers.enumerated() {
                    container.children = churn.children(of: index, after: change).map { identifier, value in
                        let child =
                            children[identifier]
                            ?? SoakObject(identifier: identifier, seed: seed, repeats: churn.repeats)
                        child.value = value
                        kept[identifier] = child
                        return child
                    }
                    manager.invalidateRestorableState(for: container)
                }
                children = kept
            }
            delegate.change = change
            let started = Date().timeIntervalSince1970
            let saved = Result { try manager.preserveState(roots: roots) }
            switch saved {
            case .success:
                // Written straight to the descriptor, so a kill right after cannot lose the line.
                try StandardStream.write("acknowledged \(change) \(Date().timeIntervalSince1970) \(started)\n")
                if let since = unavailableSince {
                    printError("saving again from change \(change), after failing from change \(since)")
                    unavailableSince = nil
                }
            case .failure(let error):
                if unavailableSince == nil {
                    printError("saves fail from change \(change): \(error)")
                    unavailableSince = change
                }
                usleep(2_000)
            }
            change += 1
        }
    }

    /// What ``check(_:)`` found.
    enum CheckResult {
        /// The restored objects are the app's state after this change, with this many children under
        /// the churn workload's containers (`nil`: the steady workload).
        case restored(change: Int, children: Int?)
        /// They are not: what differs.
        case mismatch(String)
    }

    /// Restores the store; returns the change it holds, or a mismatch.
    func check(_ journal: Journal) throws -> CheckResult {
        let (_, delegate, roots, containers) = try restored(
            journal, logger: Logger(label: "soak", factory: { _ in SwiftLogNoOpLogHandler() }))
        let change = delegate.restoredChange ?? 0
        for (index, object) in roots.enumerated() where object.value != value(of: index, after: change) {
            return .mismatch(
                "object \(index) restored as \(object.value), the app had \(value(of: index, after: change)) after change \(change)"
            )
        }
        guard let kind = SoakWorkload.Kind(rawValue: delegate.restoredKind ?? SoakWorkload.Kind.steady.rawValue) else {
            return .mismatch(
                "the store was written by the soak workload \"\(delegate.restoredKind ?? "")\", unknown here")
        }
        guard kind == .churn else {
            if let (container, restored) = delegate.restoredChildren.first(where: { !$0.value.isEmpty }) {
                return .mismatch(
                    "the steady workload has no children, but \(container) was restored with \(restored.keys.sorted())")
            }
            return .restored(change: change, children: nil)
        }
        var count = 0
        for (index, container) in containers.enumerated() {
            let name = "Container-\(index)"
            let expected = change >= 1 ? churn.children(of: index, after: change) : []
            let identifiers = expected.map(\.identifier)
            if change >= 1, container.restoredChildren != identifiers {
                return .mismatch(
                    "\(name) restored listing \(container.restoredChildren.map { "\($0)" } ?? "nothing"), the app had "
                        + "\(identifiers) after change \(change)")
            }
            let restored = delegate.restoredChildren[name] ?? [:]
            if Set(restored.keys) != Set(identifiers) {
                return .mismatch(
                    "\(name) restored with children \(restored.keys.sorted()), the app had \(identifiers.sorted()) "
                        + "after change \(change)")
            }
            for (identifier, value) in expected where restored[identifier]?.value != value {
                return .mismatch(
                    "\(name)/\(identifier) restored as \(restored[identifier]?.value ?? 0), the app had \(value) after "
                        + "change \(change)")
            }
            count += expected.count
        }
        return .restored(change: change, children: count)
    }
}

/// The churn workload of `soak --restoration`: containers `Container-j` whose children come and go
/// at every change, as a pure function of the change and the number of objects `N`.
///
/// After change *c* container *j* holds, in this order:
/// - the slots `Slot-s` with `s mod containers == j`, except in the change where `(c + s) mod 5 == 4`
///   removes them; the next change re-creates them with its number as their value;
/// - the children `Item-c'-k` created by change *c'* (``freshPerChange`` of them, child *k* under
///   container `(c' + k) mod containers`), each living `1 + (c' + k) mod 3` changes, and changed (its
///   value becomes `c' + 1`) in its second when it lives three.
///
/// Their payloads (``repeats``) make each save write about 128 KiB, several batch records.
struct RestorationChurn {
    let objects: Int

    /// How many containers the app has.
    var containers: Int { max(2, objects / 10) }
    /// How many children with new identifiers each change creates.
    var freshPerChange: Int { max(4, objects / 4) }
    /// How many children are removed and re-created under their identifiers.
    var slots: Int { containers * 2 }
    /// The changes a slot takes to go round.
    static let period = 5
    /// The most changes a child `Item-c-k` lives.
    static let longestLife = 3

    /// How many times a child's payload repeats its pattern (each about 8 bytes), so that the
    /// children a save writes (the new ones, the re-created slots) add up to about 128 KiB.
    var repeats: Int { min(1024, max(32, (128 << 10) / 8 / (freshPerChange + slots / Self.period + 1))) }

    /// How many changes child `k` of change `created` lives.
    func life(createdAt created: Int, _ index: Int) -> Int { 1 + (created + index) % Self.longestLife }

    /// The children of container `container` after change `change` (at least 1): their identifiers
    /// and values, in the container's order.
    func children(of container: Int, after change: Int) -> [(identifier: String, value: Int)] {
        var children: [(identifier: String, value: Int)] = []
        for slot in stride(from: container, to: slots, by: containers) {
            let phase = (change + slot) % Self.period
            guard phase != Self.period - 1 else { continue }
            children.append(("Slot-\(slot)", max(1, change - phase)))
        }
        for created in max(1, change - Self.longestLife + 1)...change {
            for index in 0..<freshPerChange where (created + index) % containers == container {
                let life = life(createdAt: created, index)
                let age = change - created
                guard age < life else { continue }
                children.append(("Item-\(created)-\(index)", age >= 1 && life == 3 ? created + 1 : created))
            }
        }
        return children
    }
}
