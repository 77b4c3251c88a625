import Foundation
import StateJournal
import StateRestoration
import Testing

/// Two windows saved and restored in turn, with compaction at any epoch: each window keeps its last
/// saved state restorable, whichever epochs (its own, the other window's, markers) compaction folds.
@Suite struct SceneCompactionTests {
    static let left = SceneSession(persistentIdentifier: "left")!
    static let right = SceneSession(persistentIdentifier: "right")!

    enum Step {
        case preserve(Int)
        case relaunchAndRestore
    }

    static let cycle: [Step] = [
        .preserve(1), .preserve(2), .relaunchAndRestore, .preserve(3), .relaunchAndRestore, .relaunchAndRestore,
        .preserve(4), .relaunchAndRestore,
    ]

    /// Runs the cycle over both windows (the right one saves ten times the left one's value),
    /// compacting right after epoch `compactAt` commits; returns what each window restores at last.
    static func run(compactAt: UInt64, retention: RetentionPolicy) throws -> [SceneSession: (Int?, RestorationReport)] {
        let store = TestStore()
        let options = JournalOptions(durability: .none, retention: retention, compaction: .manual)
        var journal = try Journal.open(at: store.url, options: options)
        var delegate = TestDelegate()
        var manager = store.manager(journal, delegate: delegate)
        func window() -> Node { Node("Main", children: [Node("Inbox")]) }
        var windows = [Self.left: window(), Self.right: window()]
        func compactIfDue() throws {
            if journal.lastCommitted?.epoch == compactAt { _ = try journal.compact() }
        }
        for step in cycle {
            switch step {
            case .preserve(let value):
                for (scene, factor) in [(Self.left, 1), (Self.right, 10)] {
                    windows[scene]!.children[0].value = value * factor
                    try manager.preserveState(roots: [windows[scene]!], scene: scene)
                    try compactIfDue()
                }
            case .relaunchAndRestore:
                try journal.close()
                journal = try Journal.open(at: store.url, options: options)
                delegate = TestDelegate()
                manager = store.manager(journal, delegate: delegate)
                for scene in [Self.right, Self.left] {
                    windows[scene] = window()
                    try manager.restoreState(roots: [windows[scene]!], scene: scene)
                    try compactIfDue()
                }
            }
        }
        try journal.close()
        journal = try Journal.open(at: store.url, options: options)
        defer { try? journal.close() }
        let lastDelegate = TestDelegate()
        manager = store.manager(journal, delegate: lastDelegate)
        var results: [SceneSession: (Int?, RestorationReport)] = [:]
        for scene in [Self.left, Self.right] {
            let restored = window()
            let report = try manager.restoreState(roots: [restored], scene: scene)
            let inbox = report.restored.contains { $0.path.components.last == "Inbox" && $0.decoded }
            results[scene] = (inbox ? restored.children[0].value : nil, report)
        }
        withExtendedLifetime(lastDelegate) {}
        return results
    }

    @Test(arguments: [RetentionPolicy(), RetentionPolicy(checkpoints: 1)])
    func compactionAtAnyEpochKeepsEachWindowsLastSavedStateRestorable(retention: RetentionPolicy) throws {
        // 8 preservations, and 2 markers per window per relaunch: 24 epochs.
        for epoch in UInt64(1)...24 {
            let results = try Self.run(compactAt: epoch, retention: retention)
            let (left, leftReport) = try #require(results[Self.left])
            let (right, rightReport) = try #require(results[Self.right])
            #expect(left == 4, "compacting at epoch \(epoch): \(String(describing: left)), \(leftReport.reason)")
            #expect(right == 40, "compacting at epoch \(epoch): \(String(describing: right)), \(rightReport.reason)")
            #expect(leftReport.outcome == .restored && rightReport.outcome == .restored, "compacting at epoch \(epoch)")
        }
    }

    /// A window whose restoration never completes falls back at its third launch, while the other
    /// window restores its latest state at every launch, whatever epoch compaction runs at: even when
    /// compaction folds every marker of the window while the other writes, the window's bookkeeping
    /// entry still counts its attempts.
    @Test func aCrashLoopInOneWindowIsSeenAcrossACompactionAtAnyEpochWhileTheOtherKeepsSaving() throws {
        // Epochs 1–3 preserve; then each launch writes the right window's markers and pass and the
        // left window's restorationBegan: 4 epochs per launch.
        for compactAt in UInt64(1)...18 {
            let store = TestStore()
            let options = JournalOptions(durability: .none, compaction: .manual)
            let delegate = SceneRestorationTests.Extender()
            do {
                let journal = try Journal.open(at: store.url, options: options)
                let manager = store.manager(journal, delegate: delegate)
                try manager.preserveState(roots: [Node("Main", value: 1)], scene: Self.left)
                try manager.preserveState(roots: [Node("Main", value: 2)], scene: Self.left)
                try manager.preserveState(roots: [Node("Main", value: 10)], scene: Self.right)
                if compactAt <= 3 { _ = try journal.compact() }
                try journal.close()
            }
            var leftReasons: [RestorationReason?] = []
            var leftValues: [Int] = []
            var rightValues: [Int] = []
            for launch in 1...4 {
                let journal = try Journal.open(at: store.url, options: options)
                let manager = store.manager(journal, delegate: delegate)
                delegate.manager = manager
                func compactIfDue() throws {
                    if journal.lastCommitted?.epoch == compactAt { _ = try journal.compact() }
                }
                let right = Node("Main")
                try manager.restoreState(roots: [right], scene: Self.right)
                try compactIfDue()
                rightValues.append(right.value)
                right.value = 10 + launch
                try manager.preserveState(roots: [right], scene: Self.right)
                try compactIfDue()
                let left = Node("Main")
                delegate.extendsNext = true
                let report = try manager.restoreState(roots: [left], scene: Self.left)
                try compactIfDue()
                leftReasons.append(report.reason)
                leftValues.append(left.value)
                try journal.close()
            }
            let context = "compacting at epoch \(compactAt): \(leftReasons), \(leftValues)"
            #expect(rightValues == [10, 11, 12, 13], "\(context)")
            #expect(leftValues.allSatisfy { [0, 1, 2].contains($0) }, "\(context)")
            // From epoch 15 on, compaction folds the markers of the fallback's own attempt, which
            // restored an older state: as in a store with one window, the window's state is then read
            // through a later epoch, which holds its latest state.
            guard compactAt <= 14 else { continue }
            let fallback = leftReasons.firstIndex { if case .crashLoopFallback? = $0 { true } else { false } }
            #expect(fallback == 2 || fallback == 3, "\(context)")
            guard let fallback else { continue }
            #expect(leftValues[..<fallback].allSatisfy { $0 == 2 }, "\(context)")
            // The left window's first state while it is retained; nothing once compaction folded it.
            #expect(leftValues[fallback...].allSatisfy { $0 == 0 || $0 == 1 }, "\(context)")
            #expect(leftReasons[fallback...].allSatisfy { $0 != .launch }, "\(context)")
        }
    }
}
