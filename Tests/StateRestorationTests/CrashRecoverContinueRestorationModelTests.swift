import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// Crash, recover, save on, crash again, through the restoration layer: objects appear, go away
/// and come back in every save, a crash tears the last save's records at a record boundary or
/// inside one, and every restore must give back exactly the objects and values of the last save
/// that was acknowledged and survived, never another object's.
@Suite struct CrashRecoverContinueRestorationModelTests {
    /// What the app holds: its cards by identifier, with their values.
    typealias Cards = [String: Int]

    /// The app's tree for `cards`, every card created by the app, as it would from its own data.
    static func board(_ cards: Cards, values: Bool) -> Node {
        let children = cards.keys.sorted().map { id in Node(id, value: values ? cards[id]! : 0) }
        return Node("Board", value: values ? cards.count : 0, children: children)
    }

    static func cards(of board: Node) -> Cards {
        Dictionary(uniqueKeysWithValues: board.children.map { ($0.id!, $0.value) })
    }

    /// Tears the last epoch of the newest segment: cut at a record boundary or inside a record,
    /// then zeros or garbage, or left whole. Returns whether the epoch survived.
    static func tear(_ store: String, _ random: inout SplitMix64) throws -> Bool {
        let segment = store + "/" + (try Corruption.segmentNames(in: store)).last!
        let bytes = try Corruption.readFile(segment)
        let spans = Corruption.records(ofSegment: bytes)
        let commits = spans.filter {
            $0.type == Corruption.RecordSpan.commit || $0.type == Corruption.RecordSpan.compactCommit
        }
        guard let end = commits.last?.end, end == bytes.count else { return true }
        let start = commits.dropLast().last?.end ?? Corruption.segmentHeaderSize
        let boundaries = spans.filter { $0.offset > start && $0.offset < end }.map(\.offset)
        let cut: Int
        switch random.next() % 4 {
        case 0 where !boundaries.isEmpty: cut = boundaries[Int(random.next() % UInt64(boundaries.count))]
        case 1: cut = end
        default: cut = start + 1 + Int(random.next() % UInt64(end - start - 1))
        }
        try Corruption.truncate(segment, at: cut)
        switch random.next() % 3 {
        case 0: try Corruption.append(segment, Corruption.zeros(1 + Int(random.next() % 2048)))
        case 1: try Corruption.append(segment, Corruption.garbage(1 + Int(random.next() % 2048), seed: random.next()))
        default: break
        }
        return cut == end
    }

    static func run(seed: UInt64, cycles: Int) throws {
        let store = TestStore()
        var random = SplitMix64(seed: seed)
        var acknowledged: Cards = [:]
        var nextCard = 0
        var removed: [String] = []
        for cycle in 0..<cycles {
            let context = "seed \(seed), cycle \(cycle)"
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            // The app knows which cards it has; the store gives back their values.
            let saved = Set(
                try journal.state().entries.keys.filter { $0.components.count == 2 }.map { $0.components[1] })
            try #require(
                saved == Set(acknowledged.keys), "\(context): the store holds other cards than were acknowledged")
            let board = Self.board(acknowledged, values: false)
            let report = try manager.restoreState(roots: [board])
            #expect(report.skipped.isEmpty, "\(context): \(report.skipped)")
            let restored = Self.cards(of: board)
            try #require(restored == acknowledged, "\(context): restored \(restored), acknowledged \(acknowledged)")

            // Saves in which cards appear, go away, come back and change.
            var previous = acknowledged
            let saves = 2 + Int(random.next() % 5)
            for index in 0..<saves {
                previous = Self.cards(of: board)
                // Every save writes at least the board, so that the last epoch is always a save's.
                board.text = "cycle \(cycle), save \(index)"
                for _ in 0..<(1 + Int(random.next() % 10)) {
                    switch random.next() % 5 {
                    case 0, 1:
                        nextCard += 1
                        let card = Node("Card-\(nextCard)", value: Int(random.next() % 1000))
                        // Large enough now and then that a save's entries fill batch records of their own
                        // before its commit record, which then define the new cards' paths.
                        card.text = (0..<Int(random.next() % 800)).map { _ in String(random.next(), radix: 36) }
                            .joined()
                        board.children.append(card)
                    case 2 where !board.children.isEmpty:
                        let index = Int(random.next() % UInt64(board.children.count))
                        removed.append(board.children.remove(at: index).id!)
                    case 3 where !removed.isEmpty:
                        let id = removed.remove(at: Int(random.next() % UInt64(removed.count)))
                        if !board.children.contains(where: { $0.id == id }) {
                            board.children.append(Node(id, value: Int(random.next() % 1000)))
                        }
                    default:
                        // Mostly the newest cards: what a later epoch of the same writer refers back to.
                        if !board.children.isEmpty {
                            let recent = min(board.children.count, 4)
                            let card = board.children[board.children.count - 1 - Int(random.next() % UInt64(recent))]
                            card.value = Int(random.next() % 1000)
                        }
                    }
                }
                board.value = board.children.count
                let pass = try manager.preserveState(roots: [board])
                #expect(pass.problems.isEmpty, "\(context): \(pass.problems)")
            }
            let last = Self.cards(of: board)
            try journal.close()
            acknowledged = try Self.tear(store.url.path, &random) ? last : previous
        }
        #expect(StoreInspector.verify(store.url).status == .clean, "seed \(seed)")
    }

    @Test(arguments: 1...32 as ClosedRange<UInt64>)
    func restorationAfterEveryCrashGivesBackTheAcknowledgedObjectsAndNoOther(seed: UInt64) throws {
        try Self.run(seed: seed, cycles: 16)
    }
}
