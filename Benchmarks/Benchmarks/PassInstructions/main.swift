import Foundation
import StateJournal
import StateRestoration

// PassInstructions MODE PASSES: preserves an app of 10,000 items under a hundred lists once, then
// runs PASSES passes of MODE (`default`: change one item and invalidate nothing, then the default
// pass; `incremental`: change one item, invalidate it, then an incremental pass). Under callgrind,
// the difference between PASSES and 0 passes, over PASSES, is what one pass costs in instructions.
// `PassInstructions compare PASSES` times both modes, interleaved, and prints their medians.
// `PassInstructions container PASSES CHILDREN`: a column of CHILDREN cards whose encode refers to
// each of them (the server's board), then PASSES incremental passes that each add one card and
// invalidate the column and the card: what one change under a large container costs.
let arguments = CommandLine.arguments
let mode = arguments.count > 1 ? arguments[1] : "default"
let passes = arguments.count > 2 ? Int(arguments[2]) ?? 0 : 0
let columnSize = arguments.count > 3 ? Int(arguments[3]) ?? 1_000 : 1_000

final class Delegate: ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
}

final class List: RestorableController {
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
    func decodeRestorableState(with coder: RestorationCoder) throws {}
}

final class Item: RestorableController {
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
    func decodeRestorableState(with coder: RestorationCoder) throws {}
}

/// A card of the column: a little state, found under the column by its identifier.
final class Card: RestorableController {
    let number: Int
    var title: String
    init(_ number: Int) {
        self.number = number
        title = "Card \(number)"
    }
    var restorationIdentifier: String? { "Card-\(number)" }
    func encodeRestorableState(with coder: RestorationCoder) throws { coder.encode(title, forKey: "title") }
    func decodeRestorableState(with coder: RestorationCoder) throws {}
}

/// A column whose children are read through a getter, as apps write them, and whose encode refers
/// to every card.
final class Column: RestorableController {
    var cards: [Card]
    init(cards: [Card]) { self.cards = cards }
    var restorationIdentifier: String? { "Column" }
    var embeddedRestorationChildren: [any RestorableController] { cards.map { $0 } }
    func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(cards.count, forKey: "count")
        for (index, card) in cards.enumerated() { coder.encode(card, forKey: "card-\(index)") }
    }
    func decodeRestorableState(with coder: RestorationCoder) throws {}
}

let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
    "statejournal-pass-instructions-\(ProcessInfo.processInfo.processIdentifier)")
try? FileManager.default.removeItem(at: directory)
defer { try? FileManager.default.removeItem(at: directory) }
let journal = try Journal.open(at: directory, options: JournalOptions(durability: .none, compaction: .manual))
let delegate = Delegate()
let manager = RestorationManager(
    journal: journal,
    configuration: RestorationConfiguration(
        bundleVersion: "1.0 (42)", interfaceIdiom: "desktop", systemVersion: "Debian 12"))
manager.delegate = delegate
if mode == "container" {
    let column = Column(cards: (0..<columnSize).map(Card.init))
    let board = List("Board", children: [column])
    try manager.preserveState(roots: [board])
    for pass in 0..<passes {
        let card = Card(columnSize + pass)
        column.cards.append(card)
        manager.invalidateRestorableState(for: column)
        manager.invalidateRestorableState(for: card)
        let report = try manager.preserveState(roots: [board], mode: .incremental)
        precondition(report.writtenPaths.count == 2, "\(report.writtenPaths.count) paths written")
    }
    try journal.close()
    exit(0)
}
var items: [Item] = []
let lists = (0..<100).map { list in
    let children = (0..<100).map { Item(index: list * 100 + $0) }
    items += children
    return List("List-\(list)", children: children)
}
let root = List("Main", children: lists)
try manager.preserveState(roots: [root])
var random: UInt64 = 0x5EED
@MainActor func change(invalidating: Bool) {
    random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    let item = items[Int(random >> 33) % items.count]
    item.scrollOffset += 0.25
    if invalidating { manager.invalidateRestorableState(for: item) }
}
@MainActor func pass(_ mode: String) {
    change(invalidating: mode != "default")
    let report = try! manager.preserveState(roots: [root], mode: mode == "default" ? .full : .incremental)
    precondition(report.writtenPaths.count == 1, "\(report.writtenPaths)")
}
if mode == "compare" {
    var times: [String: [Double]] = ["default": [], "incremental": []]
    for _ in 0..<passes {
        for m in ["default", "incremental"] {
            let start = DispatchTime.now().uptimeNanoseconds
            pass(m)
            times[m]!.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000)
        }
    }
    let medians = times.mapValues { $0.sorted()[$0.count / 2] }
    print(
        "default: \(medians["default"]!) µs, incremental: \(medians["incremental"]!) µs, ratio \(medians["default"]! / medians["incremental"]!)"
    )
} else {
    for _ in 0..<passes { pass(mode) }
}
try journal.close()
