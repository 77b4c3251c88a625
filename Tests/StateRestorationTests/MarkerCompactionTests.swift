import Foundation
import StateJournal
import StateRestoration
import Testing

/// Restoration markers (`restorationBegan`, `restorationCompleted`) and crash-loop bookkeeping keep
/// working whatever epoch compaction folds the journal at, whatever retention drops, and in a rewound store.
@Suite struct MarkerCompactionTests {
    /// A delegate that can run something between the decode pass and the completion marker.
    final class HookDelegate: TestDelegate {
        var afterDecode: (() throws -> Void)?

        override func didDecodeRestorableState(_ coder: RestorationCoder) {
            super.didDecodeRestorableState(coder)
            try? afterDecode?()
        }
    }

    /// One step of a save–restore–save cycle; the harness may compact after any epoch it commits.
    enum Step: CustomStringConvertible {
        case preserve(Int)
        case relaunchAndRestore

        var description: String {
            switch self {
            case .preserve(let value): "preserve \(value)"
            case .relaunchAndRestore: "relaunch and restore"
            }
        }
    }

    static let cycle: [Step] = [
        .preserve(1), .preserve(2), .relaunchAndRestore, .preserve(3), .relaunchAndRestore, .relaunchAndRestore,
        .preserve(4), .relaunchAndRestore,
    ]

    /// Runs the cycle on a fresh store, compacting right after epoch `compactAt` commits, then
    /// relaunches and restores. Returns the value restored and the restoration's reason.
    static func run(compactAt: UInt64, retention: RetentionPolicy) throws -> (value: Int?, report: RestorationReport) {
        let store = TestStore()
        let options = JournalOptions(
            durability: .none, retention: retention, compaction: .manual)
        var journal = try Journal.open(at: store.url, options: options)
        var delegate = HookDelegate()
        var manager = store.manager(journal, delegate: delegate)
        var main = Node("Main", children: [Node("Inbox")])
        func compactIfDue() throws {
            if journal.lastCommitted?.epoch == compactAt { _ = try journal.compact() }
        }
        for step in cycle {
            switch step {
            case .preserve(let value):
                main.children[0].value = value
                manager.invalidateRestorableState(for: main.children[0])
                try manager.preserveState(roots: [main])
                try compactIfDue()
            case .relaunchAndRestore:
                try journal.close()
                journal = try Journal.open(at: store.url, options: options)
                delegate = HookDelegate()
                manager = store.manager(journal, delegate: delegate)
                main = Node("Main", children: [Node("Inbox")])
                delegate.afterDecode = { try compactIfDue() }
                try manager.restoreState(roots: [main])
                try compactIfDue()
            }
        }
        try journal.close()
        journal = try Journal.open(at: store.url, options: options)
        defer { try? journal.close() }
        let lastDelegate = HookDelegate()
        manager = store.manager(journal, delegate: lastDelegate)
        let restored = Node("Main", children: [Node("Inbox")])
        let report = try manager.restoreState(roots: [restored])
        withExtendedLifetime(lastDelegate) {}
        let inbox = report.restored.contains { $0.path == RestorationPath(["Main", "Inbox"]) && $0.decoded }
        return (inbox ? restored.children[0].value : nil, report)
    }

    @Test(arguments: [RetentionPolicy(), RetentionPolicy(checkpoints: 1)])
    func compactionAtAnyEpochOfACycleKeepsTheLastSavedStateRestorable(retention: RetentionPolicy) throws {
        // The cycle commits 4 preservations and 2 markers per restoration: 14 epochs.
        for epoch in UInt64(1)...14 {
            let (value, report) = try Self.run(compactAt: epoch, retention: retention)
            #expect(value == 4, "compacting at epoch \(epoch): restored \(String(describing: value)), \(report.reason)")
            #expect(report.outcome == .restored, "compacting at epoch \(epoch)")
        }
    }

    @Test func aCrashLoopIsSeenAcrossACompactionAtAnyOfItsEpochs() throws {
        // Epochs: 1 and 2 preserve; then each launch whose restoration never completes writes a
        // `restorationBegan` marker and a `restorationHeld` one: 3 and 4, 5 and 6, 7 and 8.
        for compactAt: UInt64 in [1, 2, 4, 6, 8] {
            let store = TestStore()
            let options = JournalOptions(durability: .none, compaction: .manual)
            do {
                let journal = try Journal.open(at: store.url, options: options)
                let delegate = TestDelegate()
                let manager = store.manager(journal, delegate: delegate)
                let main = Node("Main", value: 1)
                try manager.preserveState(roots: [main])
                main.value = 2
                manager.invalidateRestorableState(for: main)
                try manager.preserveState(roots: [main])
                if compactAt <= 2 { _ = try journal.compact() }
                try journal.close()
            }
            var reasons: [RestorationReason?] = []
            var values: [Int] = []
            for _ in 0..<3 {
                let journal = try Journal.open(at: store.url, options: options)
                final class NeverCompletes: TestDelegate {
                    weak var manager: RestorationManager?
                    override func didDecodeRestorableState(_ coder: RestorationCoder) {
                        manager?.extendStateRestoration()
                    }
                }
                let delegate = NeverCompletes()
                let manager = store.manager(journal, delegate: delegate)
                delegate.manager = manager
                let fresh = Node("Main")
                let report = try manager.restoreState(roots: [fresh])
                if journal.lastCommitted?.epoch == compactAt { _ = try journal.compact() }
                reasons.append(report.reason)
                values.append(fresh.value)
                try journal.close()
            }
            #expect(Array(reasons.prefix(2)) == [.launch, .launch], "compacting at epoch \(compactAt)")
            #expect(reasons.last == .crashLoopFallback(avoidedEpoch: 2), "compacting at epoch \(compactAt)")
            // The epoch before the one that crashes is restored while it is retained (compaction at
            // the third launch's marker comes after its choice); once folded, nothing is.
            #expect(values == [2, 2, compactAt == 8 ? 1 : 0], "compacting at epoch \(compactAt)")
        }
    }

    @Test func aTimeTravelWhoseEpochWasFoldedSaysSoAndRestoresTheOldestRetainedState() throws {
        let store = TestStore()
        let options = JournalOptions(durability: .none, compaction: .manual)
        do {
            let journal = try Journal.open(at: store.url, options: options)
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let main = Node("Main", value: 1)
            try manager.preserveState(roots: [main])
            main.value = 2
            manager.invalidateRestorableState(for: main)
            try manager.preserveState(roots: [main])
            try journal.close()
        }
        do {
            let journal = try Journal.open(at: store.url, options: options)
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let fresh = Node("Main")
            try manager.restoreState(roots: [fresh], asOf: 1)
            #expect(fresh.value == 1)
            _ = try journal.compact()
            try journal.close()
        }
        let journal = try Journal.open(at: store.url, options: options)
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let fresh = Node("Main")
        let report = try manager.restoreState(roots: [fresh])
        #expect(report.reason == .restoredEpochCompacted(1, readThrough: 4))
        #expect(report.outcome == .restored)
        #expect(fresh.value == 2)
    }

    @Test func aRewoundStoreRestoresItsEpochAcrossCompaction() throws {
        let store = TestStore()
        let options = JournalOptions(durability: .none, compaction: .manual)
        do {
            let journal = try Journal.open(at: store.url, options: options)
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let main = Node("Main", value: 1)
            for value in 1...3 {
                main.value = value
                manager.invalidateRestorableState(for: main)
                try manager.preserveState(roots: [main])
            }
            try journal.close()
        }
        let rewound = URL(fileURLWithPath: store.directory.appending("rewound"))
        _ = try StoreInspector(at: store.url).rewind(to: 2, into: rewound)
        for compactAfterRestore in [false, true] {
            let journal = try Journal.open(at: rewound, options: options)
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let fresh = Node("Main")
            let report = try manager.restoreState(roots: [fresh])
            #expect(report.outcome == .restored)
            #expect(fresh.value == 2)
            if compactAfterRestore { _ = try journal.compact() }
            try journal.close()
        }
        let journal = try Journal.open(at: rewound, options: options)
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let fresh = Node("Main")
        #expect(try manager.restoreState(roots: [fresh]).reason == .launch)
        #expect(fresh.value == 2)
    }
}
