import Foundation
import StateJournal
import StateRestoration

/// An app of `leaves` list items under a hundred lists, preserved into a store in a temporary
/// directory, for the restoration benchmarks.
final class AppFixture: @unchecked Sendable {
    // @unchecked Sendable: the benchmark runner calls setup, the closure and teardown one after another.
    let leaves: Int
    let durability: Durability
    private var directory: URL?
    private var journal: Journal?
    private var manager: RestorationManager?
    private var root = ListController("Main")
    private var items: [ItemController] = []
    private let delegate = SavingDelegate()
    private var random: UInt64 = 0x5EED

    init(leaves: Int, durability: Durability = .interval(seconds: 1)) {
        self.leaves = leaves
        self.durability = durability
    }

    /// Creates the store and preserves the whole app once.
    func create() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "statejournal-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        (root, items) = Self.makeTree(leaves: leaves)
        let journal = try openJournal()
        self.journal = journal
        manager = makeManager(journal)
        try manager!.preserveState(roots: [root])
    }

    /// Closes the journal, as an app that quits does.
    func closeJournal() {
        try? journal?.close()
        journal = nil
        manager = nil
    }

    /// Closes the store and deletes its directory.
    func remove() {
        closeJournal()
        if let directory { try? FileManager.default.removeItem(at: directory) }
        directory = nil
    }

    /// Changes `count` items, invalidates them, and runs a preservation pass.
    func pass(changing count: Int, mode: PreservationMode) -> Int {
        change(count)
        return try! manager!.preserveState(roots: [root], mode: mode).encodedObjects
    }

    /// Changes `count` items without invalidating anything, as a UIKit app does, and runs the
    /// default pass, which finds the change by encoding every object.
    func defaultPass(changing count: Int) -> Int {
        change(count, invalidating: false)
        return try! manager!.preserveState(roots: [root]).encodedObjects
    }

    /// Changes `count` items and invalidates them, as an app that opts into incremental passes
    /// does before a pass.
    func change(_ count: Int, invalidating: Bool = true) {
        for _ in 0..<count {
            let item = items[Int(nextRandom() % UInt64(items.count))]
            item.scrollOffset = Double(nextRandom() % 20_000) / 4
            if invalidating { manager!.invalidateRestorableState(for: item) }
        }
    }

    /// The encode step of an incremental pass: what the caller's thread (the main actor, in an
    /// app) spends before the journal's committer takes over.
    func submitIncrementalPass() -> PendingPreservation {
        try! manager!.submitPreservation(roots: [root], mode: .incremental)
    }

    /// Opens the store, restores a fresh tree from it, and closes it: what a relaunch does.
    func relaunchAndRestore() -> Int {
        let journal = try! openJournal()
        defer { try? journal.close() }
        let manager = makeManager(journal)
        let (fresh, _) = Self.makeTree(leaves: leaves)
        let report = try! manager.restoreState(roots: [fresh])
        try! manager.completeStateRestoration()
        return report.restored.count
    }

    private func openJournal() throws -> Journal {
        try Journal.open(
            at: directory!.appendingPathComponent("store"),
            options: JournalOptions(durability: durability, compaction: .manual))
    }

    private func makeManager(_ journal: Journal) -> RestorationManager {
        let manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(
                bundleVersion: "1.0 (42)", interfaceIdiom: "desktop", systemVersion: "Debian 12"))
        manager.delegate = delegate
        return manager
    }

    private static func makeTree(leaves: Int) -> (ListController, [ItemController]) {
        var items: [ItemController] = []
        let lists = (0..<100).map { list in
            let children = (0..<leaves / 100).map { ItemController(index: list * (leaves / 100) + $0) }
            items += children
            return ListController("List-\(list)", children: children)
        }
        return (ListController("Main", children: lists), items)
    }

    private func nextRandom() -> UInt64 {
        random &+= 0x9E37_79B9_7F4A_7C15
        var z = random
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Saves and restores whenever asked.
final class SavingDelegate: ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
}

/// A list: an identifier and its items.
final class ListController: RestorableController {
    let identifier: String
    let children: [any RestorableController]
    var selection = 0

    init(_ identifier: String, children: [any RestorableController] = []) {
        self.identifier = identifier
        self.children = children
    }

    var restorationIdentifier: String? { identifier }
    var embeddedRestorationChildren: [any RestorableController] { children }

    func encodeRestorableState(with coder: RestorationCoder) throws { coder.encode(selection, forKey: "selection") }
    func decodeRestorableState(with coder: RestorationCoder) throws {
        selection = try coder.decodeInt(forKey: "selection")
    }
}

/// One item of about 200 bytes of state: identifier, title, selection, scroll offset, dates, flags.
final class ItemController: RestorableController {
    let index: Int
    var title: String
    var selectedRow: Int
    var scrollOffset: Double
    var modified: Int
    var expanded: Bool

    init(index: Int) {
        self.index = index
        title = "Quarterly report draft \(index % 211)"
        selectedRow = index * 7 % 97
        scrollOffset = Double(index * 13 % 5_000) / 4
        modified = 1_790_000_000 + index * 60
        expanded = index % 2 == 0
    }

    var restorationIdentifier: String? { "Item-\(index)" }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode("item-\(index)", forKey: "id")
        coder.encode(title, forKey: "title")
        coder.encode(selectedRow, forKey: "selectedRow")
        coder.encode(scrollOffset, forKey: "scrollOffset")
        coder.encode(modified, forKey: "modified")
        coder.encode(expanded, forKey: "expanded")
        coder.encode("modified-descending", forKey: "sort")
        coder.encode(["all", "unread", "flagged"][index % 3], forKey: "filter")
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        title = try coder.decodeString(forKey: "title")
        selectedRow = try coder.decodeInt(forKey: "selectedRow")
        scrollOffset = coder.decodeDouble(forKey: "scrollOffset")
        modified = try coder.decodeInt(forKey: "modified")
        expanded = coder.decodeBool(forKey: "expanded")
    }
}
