import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration

/// An ordered record of what the passes called, shared by the objects of one test.
final class EventLog {
    var events: [String] = []
    func record(_ event: String) { events.append(event) }
}

/// A configurable controller: identifier, children, presented child, restoration class and a little state.
class Node: RestorableController {
    let id: String?
    var children: [Node] = []
    var presented: Node?
    var restorationType: (any ControllerRestoration.Type)?
    var value = 0
    var text = ""
    var log: EventLog?
    var encodeCount = 0
    var decodeCount = 0
    var failDecoding = false

    init(_ id: String?, value: Int = 0, children: [Node] = [], log: EventLog? = nil) {
        self.id = id
        self.value = value
        self.children = children
        self.log = log
    }

    var restorationIdentifier: String? { id }
    var restorationClass: (any ControllerRestoration.Type)? { restorationType }
    var embeddedRestorationChildren: [any RestorableController] { children }
    var presentedRestorationController: (any RestorableController)? { presented }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        encodeCount += 1
        coder.encode(value, forKey: "value")
        coder.encode(text, forKey: "text")
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        decodeCount += 1
        log?.record("decode \(coder.restorationPath)")
        if failDecoding { _ = try coder.decodeInt(forKey: "no such key") }
        value = try coder.decodeInt(forKey: "value")
        text = try coder.decodeString(forKey: "text")
    }

    func applicationFinishedRestoringState() { log?.record("finish \(id ?? "-")") }
}

final class SubNode: Node {}
final class OtherNode: Node {}

/// Creates a plain `Node` for the last identifier.
enum NodeFactory: ControllerRestoration {
    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        Node(identifierComponents.last)
    }
}

/// Creates a `SubNode`, a subclass of `Node`.
enum SubNodeFactory: ControllerRestoration {
    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        SubNode(identifierComponents.last)
    }
}

/// Creates an `OtherNode`, which is not a subclass of `SubNode`.
enum OtherNodeFactory: ControllerRestoration {
    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        OtherNode(identifierComponents.last)
    }
}

/// Declines every controller.
enum DecliningFactory: ControllerRestoration {
    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        nil
    }
}

/// A custom object with a counter, optionally scoped by a parent.
final class Counter: StateRestoring {
    weak var parent: (any StateRestoring)?
    var count: Int
    var restorationType: (any ObjectRestoration.Type)?
    var log: EventLog?

    init(count: Int = 0, parent: (any StateRestoring)? = nil, log: EventLog? = nil) {
        self.count = count
        self.parent = parent
        self.log = log
    }

    var restorationParent: (any StateRestoring)? { parent }
    var objectRestorationClass: (any ObjectRestoration.Type)? { restorationType }

    func encodeRestorableState(with coder: RestorationCoder) throws { coder.encode(count, forKey: "count") }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        log?.record("decode \(coder.restorationPath)")
        count = try coder.decodeInt(forKey: "count")
    }

    func applicationFinishedRestoringState() { log?.record("finish counter") }
}

enum CounterFactory: ObjectRestoration {
    static func object(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any StateRestoring)?
    {
        Counter()
    }
}

/// A delegate that opts in, records its calls, and can be told what to answer.
class TestDelegate: ApplicationRestorationDelegate {
    var saves = true
    var restores = true
    var log: EventLog?
    var appKeys: [String: Int] = [:]
    var controllers: [[String]: any RestorableController] = [:]
    var lookups: [[String]] = []
    var lastRestoreCoder:
        (bundleVersion: String?, idiom: String?, systemVersion: String?, timestamp: Date?, reason: RestorationReason?)?
    var decodedAppKeys: [String: Int] = [:]
    var restoreCheck: ((RestorationCoder) -> Bool)?

    init(log: EventLog? = nil) { self.log = log }

    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { saves }

    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool {
        lastRestoreCoder = (
            coder.bundleVersion, coder.interfaceIdiom, coder.savedSystemVersion, coder.timestamp,
            coder.restorationReason
        )
        for key in appKeys.keys where coder.containsValue(forKey: key) {
            decodedAppKeys[key] = try? coder.decodeInt(forKey: key)
        }
        if let restoreCheck { return restoreCheck(coder) }
        return restores
    }

    func willEncodeRestorableState(_ coder: RestorationCoder) {
        for (key, value) in appKeys { coder.encode(value, forKey: key) }
    }

    func didDecodeRestorableState(_ coder: RestorationCoder) { log?.record("didDecode") }

    func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        lookups.append(identifierComponents)
        return controllers[identifierComponents]
    }
}

/// A journal in a fresh temporary directory, reopened as often as a test needs.
final class TestStore {
    let directory = TemporaryDirectory()
    var url: URL { URL(fileURLWithPath: directory.appending("store")) }

    func open() throws -> Journal {
        try Journal.open(at: url, options: JournalOptions(durability: .none))
    }

    func manager(
        _ journal: Journal, delegate: TestDelegate, bundleVersion: String = "1", idiom: String = "desktop"
    ) -> RestorationManager {
        let manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(
                bundleVersion: bundleVersion, interfaceIdiom: idiom, systemVersion: "6.8"))
        manager.delegate = delegate
        manager.register(restorationClass: NodeFactory.self)
        manager.register(restorationClass: SubNodeFactory.self)
        manager.register(restorationClass: OtherNodeFactory.self)
        manager.register(restorationClass: DecliningFactory.self)
        manager.register(objectRestorationClass: CounterFactory.self)
        return manager
    }
}

/// The entries of the journal's latest state, decoded.
func decodedEntries(_ journal: Journal) throws -> [RestorationPath: RestorableEntry] {
    try journal.state().entries.mapValues { try RestorableEntry(decoding: $0) }
}
