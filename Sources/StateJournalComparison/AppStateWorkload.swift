import Foundation
import StateJournal

/// A deterministic stand-in for an application's restorable state: objects of about 200 bytes of
/// the fields restoration state is made of (identifiers, titles, selections, scroll offsets, dates),
/// and passes that change some of them a little, as a user's actions do.
public struct AppStateWorkload: Sendable {
    /// How many objects the app has.
    public let objectCount: Int
    private var random: SplitMix64
    private var objects: [ObjectFields]

    /// The fields of one object that a user's actions change.
    private struct ObjectFields: Sendable {
        var selectedRow: Int
        var scrollOffset: Int
        var expanded: Bool
        var modified: Int
    }

    /// Creates the workload's first state.
    public init(objectCount: Int, seed: UInt64 = 0x5EED) {
        self.objectCount = objectCount
        self.random = SplitMix64(seed: seed)
        self.objects = (0..<objectCount).map { index in
            ObjectFields(
                selectedRow: index * 7 % 97, scrollOffset: index * 13 % 5000, expanded: index % 2 == 0,
                modified: 1_790_000_000 + index * 60)
        }
    }

    /// The restoration path of object `index`: a few windows, lists and items, as an app nests them.
    public func path(_ index: Int) -> RestorationPath {
        RestorationPath("Main", "Window-\(index % 4)", "List-\(index / 100 % 50)", "Item-\(index)")
    }

    /// The encoded state of object `index`, about 200 bytes.
    public func state(_ index: Int) -> [UInt8] {
        let fields = objects[index]
        let text =
            "{\"id\":\"item-\(index)\",\"title\":\"Quarterly report draft \(index % 211)\","
            + "\"selectedRow\":\(fields.selectedRow),"
            + "\"scrollOffset\":\(Double(fields.scrollOffset) / 4),\"modified\":\(fields.modified),"
            + "\"expanded\":\(fields.expanded),"
            + "\"sort\":\"modified-descending\",\"filter\":\"\(["all", "unread", "flagged"][index % 3])\"}"
        return Array(text.utf8)
    }

    /// Object `index` as the app's model holds it: what a whole-snapshot save encodes.
    public func record(_ index: Int) -> ObjectRecord {
        let fields = objects[index]
        return ObjectRecord(
            path: path(index).description, id: "item-\(index)", title: "Quarterly report draft \(index % 211)",
            selectedRow: fields.selectedRow, scrollOffset: Double(fields.scrollOffset) / 4, modified: fields.modified,
            expanded: fields.expanded, sort: "modified-descending", filter: ["all", "unread", "flagged"][index % 3])
    }

    /// One user action on object `index`: mostly a scroll, sometimes a new selection (which also
    /// updates the modification date), sometimes expanding or collapsing.
    private mutating func act(on index: Int) {
        let roll = random.next() % 100
        if roll < 60 {
            objects[index].scrollOffset = Int(random.next() % 20_000)
        } else if roll < 85 {
            objects[index].selectedRow = Int(random.next() % 500)
            objects[index].modified += Int(random.next() % 600)
        } else {
            objects[index].expanded.toggle()
        }
    }

    /// Changes object `index` and returns it, as a one-element array.
    public mutating func touch(_ index: Int) -> [Int] {
        act(on: index)
        return [index]
    }

    /// Changes `count` distinct objects, chosen at random, and returns their indices.
    public mutating func change(_ count: Int) -> [Int] {
        var chosen = Set<Int>()
        let count = min(count, objectCount)
        if count == objectCount {
            chosen = Set(0..<objectCount)
        } else {
            while chosen.count < count { chosen.insert(Int(random.next() % UInt64(objectCount))) }
        }
        for index in chosen { act(on: index) }
        return chosen.sorted()
    }
}

/// One object of the app's model, with the same fields as ``AppStateWorkload/state(_:)`` encodes.
public struct ObjectRecord: Codable, Sendable, Hashable {
    /// The object's restoration path, as text (`Main/Window-0/List-0/Item-0`).
    public var path: String
    /// The object's identifier, `item-` and its index.
    public var id: String
    /// The object's title, as a list shows it.
    public var title: String
    /// The row selected in the object's list.
    public var selectedRow: Int
    /// How far the object's view is scrolled, in points.
    public var scrollOffset: Double
    /// When the object was last modified, in seconds since 1970.
    public var modified: Int
    /// Whether the object's row is expanded.
    public var expanded: Bool
    /// The sort order of the object's list (`modified-descending`).
    public var sort: String
    /// The filter of the object's list: `all`, `unread` or `flagged`.
    public var filter: String
}

/// A small, fast, seedable generator (SplitMix64), so that every run makes the same workload.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator from a seed.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
