import Foundation
import StateJournal
import StateRestoration
import Testing

@Suite struct RestorationLifecycleTests {
    @Test func theFinishPassRunsAfterEveryDecodeAndTheDelegateLast() throws {
        let store = TestStore()
        let main = Node("Main", children: [Node("A"), Node("B")])
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            manager.registerObject(
                forStateRestoration: Counter(count: 1, parent: main), restorationIdentifier: "Counter")
            try manager.preserveState(roots: [main])
        }
        let log = EventLog()
        let journal = try store.open()
        let delegate = TestDelegate(log: log)
        let manager = store.manager(journal, delegate: delegate)
        let newMain = Node("Main", children: [Node("A", log: log), Node("B", log: log)], log: log)
        manager.registerObject(
            forStateRestoration: Counter(parent: newMain, log: log), restorationIdentifier: "Counter")
        try manager.restoreState(roots: [newMain])
        let decodes = log.events.prefix { $0.hasPrefix("decode") }
        #expect(decodes == ["decode Main", "decode Main/A", "decode Main/B", "decode Main/Counter"])
        let finishes = log.events.dropFirst(decodes.count).dropLast()
        #expect(Set(finishes) == ["finish Main", "finish A", "finish B", "finish counter"])
        #expect(log.events.last == "didDecode")
    }

    @Test func shouldRestoreSeesTheArchiveKeysAndTheAppKeys() throws {
        let store = TestStore()
        let before = Date()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            delegate.appKeys = ["launches": 2]
            let manager = store.manager(journal, delegate: delegate, bundleVersion: "41", idiom: "terminal")
            try manager.preserveState(roots: [Node("Main")])
        }
        let preserved = Date()
        let journal = try store.open()
        let delegate = TestDelegate()
        delegate.appKeys = ["launches": 0]
        let manager = store.manager(journal, delegate: delegate, bundleVersion: "42")
        try manager.restoreState(roots: [Node("Main")])
        let seen = try #require(delegate.lastRestoreCoder)
        #expect(seen.bundleVersion == "41")
        #expect(seen.idiom == "terminal")
        #expect(seen.systemVersion == "6.8")
        // Written by the preservation above (a second's slack either side for the stored rounding).
        let timestamp = try #require(seen.timestamp)
        #expect(
            timestamp >= before.addingTimeInterval(-1) && timestamp <= preserved.addingTimeInterval(1), "\(timestamp)")
        #expect(seen.reason == .launch)
        #expect(delegate.decodedAppKeys == ["launches": 2])
    }

    @Test func extendingRestorationDelaysCompletionUntilBalanced() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let manager = store.manager(journal, delegate: TestDelegate())
            let delegate = TestDelegate()
            manager.delegate = delegate
            try manager.preserveState(roots: [Node("Main")])
        }
        final class Extender: TestDelegate {
            weak var manager: RestorationManager?
            override func didDecodeRestorableState(_ coder: RestorationCoder) {
                manager?.extendStateRestoration()
                manager?.extendStateRestoration()
            }
        }
        let journal = try store.open()
        let delegate = Extender()
        let manager = store.manager(journal, delegate: delegate)
        delegate.manager = manager
        try manager.restoreState(roots: [Node("Main")])
        func kinds() throws -> [String] { try journal.history().compactMap { $0.metadata[EpochMetadataKey.kind] } }
        // The pass returned held open: a marker says so, which counts as a failed restoration
        // unless the completion follows.
        #expect(try kinds() == ["preservation", "restorationBegan", "restorationHeld"])
        try manager.completeStateRestoration()
        #expect(manager.isRestoring)
        try manager.completeStateRestoration()
        #expect(!manager.isRestoring)
        #expect(try kinds() == ["preservation", "restorationBegan", "restorationHeld", "restorationCompleted"])
    }

    @Test func twoRestorationsThatNeverCompletedFallBackToTheEpochBefore() throws {
        let store = TestStore()
        let main = Node("Main", value: 1)
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: [main])
            main.value = 2
            manager.invalidateRestorableState(for: main)
            try manager.preserveState(roots: [main])
        }
        final class Crasher: TestDelegate {
            weak var manager: RestorationManager?
            override func didDecodeRestorableState(_ coder: RestorationCoder) { manager?.extendStateRestoration() }
        }
        var restoredValues: [Int] = []
        var reasons: [RestorationReason?] = []
        for _ in 0..<4 {
            let journal = try store.open()
            let delegate = Crasher()
            let manager = store.manager(journal, delegate: delegate)
            delegate.manager = manager
            let fresh = Node("Main")
            let report = try manager.restoreState(roots: [fresh])
            restoredValues.append(fresh.value)
            reasons.append(report.reason)
            try journal.close()
        }
        #expect(restoredValues == [2, 2, 1, 1])
        #expect(
            reasons == [.launch, .launch, .crashLoopFallback(avoidedEpoch: 2), .crashLoopFallback(avoidedEpoch: 2)])

        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let fresh = Node("Main")
        let report = try manager.restoreState(roots: [fresh])
        #expect(report.reason == .crashLoopFallback(avoidedEpoch: 2))
        #expect(report.outcome == .nothingToRestore)
        #expect(fresh.value == 0)
        #expect(try journal.state().entries[RestorationPath("Main")] != nil)
    }

    @Test func aCompletedFallbackIsRestoredAgainOnTheNextLaunch() throws {
        let store = TestStore()
        let main = Node("Main", value: 1)
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: [main])
            main.value = 2
            manager.invalidateRestorableState(for: main)
            try manager.preserveState(roots: [main])
            try journal.commit(
                [], metadata: [EpochMetadataKey.kind: "restorationBegan", EpochMetadataKey.restoringEpoch: "2"])
            try journal.commit(
                [], metadata: [EpochMetadataKey.kind: "restorationBegan", EpochMetadataKey.restoringEpoch: "2"])
        }
        var values: [Int] = []
        for _ in 0..<2 {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let fresh = Node("Main")
            try manager.restoreState(roots: [fresh])
            values.append(fresh.value)
            try journal.close()
        }
        #expect(values == [1, 1])
    }

    @Test func stateCanBeRestoredAsOfAnyRetainedEpoch() throws {
        let store = TestStore()
        let main = Node("Main")
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            for value in 1...3 {
                main.value = value
                manager.invalidateRestorableState(for: main)
                try manager.preserveState(roots: [main])
            }
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let fresh = Node("Main")
        let report = try manager.restoreState(roots: [fresh], asOf: 2)
        #expect(fresh.value == 2)
        #expect(report.reason == .requestedEpoch(2))
        #expect(delegate.lastRestoreCoder?.reason == .requestedEpoch(2))
        #expect(throws: JournalError.self) { try manager.restoreState(roots: [Node("Main")], asOf: 99) }
    }

    @Test func refusingRestorationNeverDestroysHistory() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: [Node("Main", value: 7)])
        }
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            delegate.restores = false
            let manager = store.manager(journal, delegate: delegate)
            try manager.restoreState(roots: [Node("Main")])
            try manager.preserveState(roots: [Node("Main", value: 0)])
        }
        let journal = try store.open()
        #expect(try journal.history().count == 2)
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let fresh = Node("Main")
        try manager.restoreState(roots: [fresh], asOf: 1)
        #expect(fresh.value == 7)
    }

    @Test func aMigrationRegisteredForARestorationClassRewritesOldState() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate, bundleVersion: "1")
            let child = Node("Child", value: 10)
            child.restorationType = NodeFactory.self
            try manager.preserveState(roots: [Bag("Main") { $0.encode(child, forKey: "child") }])
        }
        var values: [Int?] = []
        for version in ["1", "2"] {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate, bundleVersion: version)
            var seen: [String?] = []
            manager.registerMigration(for: NodeFactory.self) { state in
                seen.append(state.savedBundleVersion)
                if case .int(let old) = state.values["value"] { state.values["value"] = .int(old * 100) }
            }
            var restored: Node?
            let main = Bag("Main") { _ in }
            main.decodeBody = { restored = $0.decodeObject(of: Node.self, forKey: "child") }
            try manager.restoreState(roots: [main])
            values.append(restored?.value)
            #expect(seen == (version == "1" ? [] : ["1"]))
            try journal.close()
        }
        #expect(values == [10, 1000])
    }

    @Test func decodeErrorsAreReportedAndNeverCrash() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: [Node("Main", children: [Node("Bad"), Node("Good", value: 3)])])
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let bad = Node("Bad")
        bad.failDecoding = true
        let good = Node("Good")
        let report = try manager.restoreState(roots: [Node("Main", children: [bad, good])])
        #expect(good.value == 3)
        #expect(report.diagnostics.count == 1)
        if case .decodeFailed(let path, let message) = report.diagnostics.first {
            #expect(path == RestorationPath("Main", "Bad"))
            #expect(message.contains("no such key"))
        } else {
            Issue.record("expected a decode failure")
        }
        #expect(!manager.isRestoring)
    }

    @Test func aCorruptEntryIsSkippedAndReported() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: [Node("Main", children: [Node("Fine", value: 1)])])
            try journal.commit(
                [.put(RestorationPath("Main", "Broken"), [0x01, 0x00, 0xFF])],
                metadata: [EpochMetadataKey.kind: "preservation"])
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let fine = Node("Fine")
        let report = try manager.restoreState(roots: [Node("Main", children: [fine])])
        #expect(fine.value == 1)
        #expect(report.skipped.map(\.path) == [RestorationPath("Main", "Broken")])
        if case .corruptEntry = report.skipped.first?.reason {} else { Issue.record("expected a corrupt entry") }
    }

    @Test func aProcessKilledInTheMiddleOfAPassRestoresThePreviousEpochExactly() throws {
        let store = TestStore()
        let crashed = TestStore()
        let nodes = (0..<60).map { Node("N\($0)", value: $0) }
        var snapshotNow = false
        let snapshot = Bag("ZZZ") { _ in
            // The disk as a kill at this instant would leave it: earlier entries of the pass are written, no commit.
            if snapshotNow { try FileManager.default.copyItem(at: store.url, to: crashed.url) }
        }
        let before: [RestorationPath: [UInt8]]
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            try manager.preserveState(roots: nodes + [snapshot])
            before = try journal.state().entries
            for node in nodes {
                node.value += 1000
                node.text = String(repeating: "state of \(node.id!) ", count: 60)
            }
            snapshotNow = true
            try manager.preserveState(roots: nodes + [snapshot], mode: .full)
        }
        let journal = try Journal.open(at: crashed.url, options: JournalOptions(durability: .none))
        #expect(journal.recoveryReport.truncatedTailBytes > 0)
        #expect(journal.recoveredState.entries == before)
        let delegate = TestDelegate()
        let manager = crashed.manager(journal, delegate: delegate)
        let fresh = (0..<60).map { Node("N\($0)") }
        let report = try manager.restoreState(roots: fresh + [Bag("ZZZ") { _ in }])
        #expect(fresh.map(\.value) == Array(0..<60))
        #expect(report.reason == .recoveryAfterCrash)
        #expect(report.skipped.isEmpty)
    }
}
