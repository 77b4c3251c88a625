import Foundation
import StateJournal

/// A store in a temporary directory, filled with `objects` objects of about 200 bytes and then
/// `passes` passes changing 1% of them, kept open for the benchmark that uses it.
final class StoreFixture: @unchecked Sendable {
    // @unchecked Sendable: the benchmark runner calls setup, the closure and teardown one after another.
    let objects: Int
    let passes: Int
    let durability: Durability
    private var directory: URL?
    private var journal: Journal?
    private var states: ObjectStates

    init(objects: Int, passes: Int, durability: Durability) {
        self.objects = objects
        self.passes = passes
        self.durability = durability
        self.states = ObjectStates(count: objects)
    }

    private var store: URL { directory!.appendingPathComponent("store") }

    /// Creates the store and writes the first full pass and the `passes` passes.
    func create() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "statejournal-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        states = ObjectStates(count: objects)
        let options = JournalOptions(durability: durability, compaction: .manual)
        let journal = try Journal.open(at: directory.appendingPathComponent("store"), options: options)
        self.journal = journal
        try write(Array(0..<objects))
        for _ in 0..<passes { try write(states.change(objects / 100)) }
    }

    /// Closes the writer, for the benchmarks that read the store as a reopened app does.
    func closeWriter() throws {
        try journal?.close()
        journal = nil
    }

    /// Closes the store and deletes its directory.
    func remove() {
        try? journal?.close()
        journal = nil
        if let directory { try? FileManager.default.removeItem(at: directory) }
        directory = nil
    }

    /// Commits one epoch holding one changed object.
    func commitOneEntry() {
        try! write(states.change(1))
    }

    /// Commits one epoch changing `count` objects.
    func commitPass(changing count: Int) {
        try! write(states.change(count))
    }

    /// Reads the latest state back from the files, as a relaunched app does.
    func replay() -> Int {
        try! JournalReader(at: store).state().entries.count
    }

    /// Folds the journal into a checkpoint.
    func compact() -> Int64 {
        (try! journal!.compact())?.checkpointBytes ?? 0
    }

    private func write(_ indices: [Int]) throws {
        let epoch = try journal!.beginEpoch()
        for index in indices { try epoch.put(states.path(index), states.state(index)) }
        _ = try epoch.commit(metadata: ["bundleVersion": "1.0 (42)"])
    }
}

/// Deterministic object states of about 200 bytes (identifiers, titles, selections, offsets, dates)
/// and changes to them, as a user's scrolling and selecting makes.
struct ObjectStates {
    private var random: UInt64 = 0x5EED
    private var offsets: [Int]
    private var selections: [Int]

    init(count: Int) {
        offsets = (0..<count).map { $0 * 13 % 5_000 }
        selections = (0..<count).map { $0 * 7 % 97 }
    }

    func path(_ index: Int) -> RestorationPath {
        RestorationPath("Main", "Window-\(index % 4)", "List-\(index / 100 % 50)", "Item-\(index)")
    }

    func state(_ index: Int) -> [UInt8] {
        let text =
            "{\"id\":\"item-\(index)\",\"title\":\"Quarterly report draft \(index % 211)\",\"selectedRow\":\(selections[index]),"
            + "\"scrollOffset\":\(Double(offsets[index]) / 4),\"modified\":\(1_790_000_000 + index * 60 + selections[index]),"
            + "\"sort\":\"modified-descending\",\"expanded\":\(index % 2 == 0)}"
        return Array(text.utf8)
    }

    /// Changes `count` objects chosen at random (possibly the same one twice) and returns them, distinct and sorted.
    mutating func change(_ count: Int) -> [Int] {
        var chosen = Set<Int>()
        for _ in 0..<count {
            let index = Int(nextRandom() % UInt64(offsets.count))
            if nextRandom() % 4 == 0 {
                selections[index] = Int(nextRandom() % 500)
            } else {
                offsets[index] = Int(nextRandom() % 20_000)
            }
            chosen.insert(index)
        }
        return chosen.sorted()
    }

    private mutating func nextRandom() -> UInt64 {
        random &+= 0x9E37_79B9_7F4A_7C15
        var z = random
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
