import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Crash, recover, write on, crash again, for many cycles, checked against a model of what was
/// acknowledged: the tail a crash leaves defines paths (and the writer derives its tables from what
/// it read at open), so every cycle after the first is written on top of a recovery.
@Suite struct CrashRecoverContinueModelTests {
    /// Random epochs over paths that keep appearing, going away and coming back, with states from a
    /// few bytes to several batch records, so that almost every epoch defines paths.
    struct ChurningWorkload {
        var random: SplitMix64
        /// The next never-used path number.
        private var nextName = 0
        /// Paths removed earlier, to re-create.
        private var removed: [RestorationPath] = []
        private(set) var current: [RestorationPath: [UInt8]] = [:]

        init(seed: UInt64) { random = SplitMix64(seed: seed) }

        private mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(max(bound, 1))) }

        private mutating func newPath() -> RestorationPath {
            nextName += 1
            let roots = ["Main", "Inbox", "Settings"]
            return below(3) == 0
                ? RestorationPath(roots[nextName % 3]) : RestorationPath(roots[nextName % 3], "Card-\(nextName)")
        }

        private mutating func state() -> [UInt8] {
            // Mostly small, sometimes larger than a batch record's target (32 KiB).
            let size: Int
            switch below(10) {
            case 0: size = 20_000 + below(60_000)
            case 1...3: size = 200 + below(2_000)
            default: size = 1 + below(120)
            }
            var bytes = Array("s\(random.next())".utf8)
            while bytes.count < size { bytes.append(contentsOf: bytes.prefix(size - bytes.count)) }
            return bytes
        }

        /// One epoch of changes, applied to ``current``.
        mutating func nextEpoch() -> [JournalChange] {
            var changes: [JournalChange] = []
            if below(40) == 0 { changes.append(.removeAll) }
            // A one-entry epoch now and then: the writer stores it as a compact commit.
            let count = below(6) == 0 ? 1 : 1 + below(12)
            for _ in 0..<count {
                let existing = Array(current.keys)
                switch below(10) {
                case 0...3:
                    changes.append(.put(newPath(), state()))
                case 4 where !removed.isEmpty:
                    changes.append(.put(removed.remove(at: below(removed.count)), state()))
                case 5 where !existing.isEmpty:
                    let path = existing[below(existing.count)]
                    changes.append(.remove(path))
                    removed.append(path)
                default:
                    changes.append(.put(existing.isEmpty ? newPath() : existing[below(existing.count)], state()))
                }
                current = JournalModel.applying([changes.last!], to: current)
            }
            if changes.first == .removeAll { current = JournalModel.applying(changes, to: [:]) }
            return changes
        }

        /// Forgets the changes of the epoch a crash tore: the generator goes on from `state`.
        mutating func rewind(to state: [RestorationPath: [UInt8]]) { current = state }
    }

    /// How a crash leaves the tail of the last epoch.
    enum Tear: CaseIterable {
        case cut, zeros, garbage
    }

    /// One seed: `cycles` rounds of writing epochs, a crash inside (or just after) the last one, and
    /// a reopen that must find exactly the acknowledged state.
    static func run(seed: UInt64, cycles: Int) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var workload = ChurningWorkload(seed: seed)
        var random = SplitMix64(seed: seed &* 7919 &+ 17)
        var model = JournalModel()
        let policies: [Durability] = [.everyCommit, .interval(seconds: 0.05), .none]
        for cycle in 0..<cycles {
            let context = "seed \(seed), cycle \(cycle)"
            let options = testOptions(
                durability: policies[Int(random.next() % 3)],
                segmentSizeLimit: [16 << 10, 64 << 10, 1 << 20][Int(random.next() % 3)])
            let journal = try openJournal(store, options)
            let recovered = journal.recoveredState.entries
            let recoveredAsAcknowledged = recovered == model.latest
            try #require(recoveredAsAcknowledged, "\(context): \(difference(recovered, model.latest))")
            #expect(journal.recoveredState.epoch?.epoch == model.epochs.last, "\(context)")
            #expect(
                journal.recoveryReport.damage == nil, "\(context): \(String(describing: journal.recoveryReport.damage))"
            )
            let epochs = 1 + Int(random.next() % 6)
            for index in 0..<epochs {
                let changes = workload.nextEpoch()
                let info = try journal.commit(changes, metadata: ["cycle": "\(cycle)", "epoch": "\(index)"])
                model.commit(info.epoch, changes)
                if random.next() % 9 == 0 { _ = try journal.compact() }
            }
            let beforeVictim = (model.latest, model.epochs.last)
            let victimChanges = workload.nextEpoch()
            let victim = try journal.commit(victimChanges, metadata: ["cycle": "\(cycle)", "victim": "yes"])
            try journal.close()

            // The crash: the victim epoch's records reach the disk up to `cut`, then nothing, zeros
            // or garbage.
            let segment = store + "/" + (try Corruption.segmentNames(in: store)).last!
            let bytes = try Corruption.readFile(segment)
            let spans = Corruption.records(ofSegment: bytes)
            let commits = spans.filter {
                $0.type == Corruption.RecordSpan.commit || $0.type == Corruption.RecordSpan.compactCommit
            }
            guard let victimEnd = commits.last?.end, victimEnd == bytes.count else {
                Issue.record("\(context): the segment does not end with the victim's commit")
                return
            }
            let victimStart = commits.dropLast().last?.end ?? Corruption.segmentHeaderSize
            let boundaries = spans.filter { $0.offset > victimStart && $0.offset < victimEnd }.map(\.offset)
            let cut: Int
            switch random.next() % 5 {
            case 0 where !boundaries.isEmpty: cut = boundaries[Int(random.next() % UInt64(boundaries.count))]
            case 1 where !boundaries.isEmpty: cut = boundaries.last!
            case 2: cut = victimEnd
            default: cut = victimStart + 1 + Int(random.next() % UInt64(victimEnd - victimStart - 1))
            }
            let tear = Tear.allCases[Int(random.next() % 3)]
            try Corruption.truncate(segment, at: cut)
            let extra = 1 + Int(random.next() % 4096)
            switch tear {
            case .cut: break
            case .zeros: try Corruption.append(segment, Corruption.zeros(extra))
            case .garbage: try Corruption.append(segment, Corruption.garbage(extra, seed: random.next()))
            }
            if cut < victimEnd {
                model.rewind(to: beforeVictim.1)
                workload.rewind(to: beforeVictim.0)
            } else {
                model.commit(victim.epoch, victimChanges)
            }

            // Readers see exactly what was acknowledged before the crash, strict or not.
            let state = try openReader(store, recovery: .strict).state().entries
            let readAsAcknowledged = state == model.latest
            try #require(readAsAcknowledged, "\(context), tear \(tear) at \(cut): \(difference(state, model.latest))")
        }
        // A last recovery, and a check of every retained epoch and of every checksum.
        let journal = try openJournal(store)
        let recoveredAsAcknowledged = journal.recoveredState.entries == model.latest
        try #require(recoveredAsAcknowledged, "seed \(seed), last open")
        let extra = workload.nextEpoch()
        model.commit(try journal.commit(extra).epoch, extra)
        try journal.close()
        let reader = try openReader(store, recovery: .strict)
        for info in try reader.history() {
            guard let expected = model.states[info.epoch] else {
                Issue.record("seed \(seed): epoch \(info.epoch) is in the history but was never acknowledged")
                continue
            }
            let state = try reader.state(through: info.epoch).entries
            #expect(state == expected, "seed \(seed), epoch \(info.epoch): \(difference(state, expected))")
        }
        let verification = StoreInspector.verify(URL(fileURLWithPath: store))
        #expect(verification.status == .clean, "seed \(seed): \(verification)")
    }

    @Test(arguments: 1...40 as ClosedRange<UInt64>)
    func crashRecoverAndContinueKeepsEveryAcknowledgedEpochOnItsOwnPaths(seed: UInt64) throws {
        try Self.run(seed: seed, cycles: 8)
    }

    /// The case seen in the field, exactly: a torn tail that defined new paths, then new objects
    /// created and edited, each acknowledged, then a reopen.
    @Test func epochsAfterATornTailThatDefinedPathsKeepTheirObjects() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var model = JournalModel()
        let first = try openJournal(store)
        let base: [JournalChange] = (0..<3).map {
            .put(RestorationPath("Board", "Card-\($0)"), Array("card \($0)".utf8))
        }
        model.commit(try first.commit(base).epoch, base)
        // An epoch that defines new paths, cut between its batch record and its commit record.
        // Large enough that its entries go to a batch record of their own before the commit record.
        let torn: [JournalChange] = (0..<4).map { index in
            .put(
                RestorationPath("Board", "Draft-\(index)"),
                (0..<12_000).map { UInt8(truncatingIfNeeded: $0 * (index + 7) / 5) })
        }
        _ = try first.commit(torn)
        try first.close()
        let segment = store + "/" + (try Corruption.segmentNames(in: store)).last!
        let spans = Corruption.records(ofSegment: try Corruption.readFile(segment))
        let commit = try #require(spans.last)
        #expect(spans.dropLast().last?.type == Corruption.RecordSpan.batch)
        try Corruption.truncate(segment, at: commit.offset)

        // Acknowledged after the recovery: new cards, one of them edited, an old one retitled.
        let journal = try openJournal(store)
        let recoveredAsAcknowledged = journal.recoveredState.entries == model.latest
        #expect(recoveredAsAcknowledged)
        for index in 0..<5 {
            let create: [JournalChange] = [.put(RestorationPath("Board", "New-\(index)"), Array("new \(index)".utf8))]
            model.commit(try journal.commit(create).epoch, create)
        }
        let edits: [JournalChange] = [
            .put(RestorationPath("Board", "New-0"), Array("new 0, edited".utf8)),
            .put(RestorationPath("Board", "Card-1"), Array("card 1, retitled".utf8)),
        ]
        model.commit(try journal.commit(edits).epoch, edits)
        let single: [JournalChange] = [.put(RestorationPath("Board", "New-4"), Array("new 4, edited alone".utf8))]
        model.commit(try journal.commit(single).epoch, single)
        try journal.close()

        let state = try openReader(store, recovery: .strict).state().entries
        #expect(state == model.latest, "\(difference(state, model.latest))")
        let reopened = try openJournal(store)
        let recovered = reopened.recoveredState.entries
        #expect(recovered == model.latest, "\(difference(recovered, model.latest))")
        #expect(reopened.recoveryReport.damage == nil)
        try reopened.close()
        #expect(StoreInspector.verify(URL(fileURLWithPath: store)).status == .clean)
    }
}
