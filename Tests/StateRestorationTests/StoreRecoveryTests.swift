import Foundation
import MetricsTestKit
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A manager heals while the app runs: after a failed sync it refuses saves honestly, reopens the
/// journal with backoff on a clock the test advances, and saves the live objects again in a
/// catch-up pass; nothing acknowledged is lost, not even what changed during the fault.
@Suite struct StoreRecoveryTests {
    let store = TestStore()
    let clock = ManualClock()
    let fileSystem = FaultInjectingFileSystem(dropsPagesOnFailedSync: true)
    let delegate = TestDelegate()
    let nodes = (0..<6).map { Node("N\($0)", value: $0) }

    func open(_ durability: Durability) throws -> Journal {
        try Journal.open(path: store.url.path, options: JournalOptions(durability: durability), fileSystem: fileSystem)
    }

    func manager(_ journal: Journal, logs: CapturedLogs? = nil, metrics: TestMetrics? = nil) -> RestorationManager {
        var configuration = RestorationConfiguration(
            bundleVersion: "1", interfaceIdiom: "desktop", systemVersion: "6.8",
            logger: logs?.logger ?? RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "").logger)
        configuration.recovery = StoreRecoveryPolicy(
            initialDelay: .seconds(1), maximumDelay: .seconds(8), clock: clock)
        configuration.metricsFactory = metrics
        let manager = RestorationManager(journal: journal, configuration: configuration)
        manager.delegate = delegate
        manager.register(restorationClass: NodeFactory.self)
        return manager
    }

    /// Changes every node's value, as the app does between saves.
    func change(_ manager: RestorationManager, to base: Int) {
        for (index, node) in nodes.enumerated() {
            node.value = base + index
            manager.invalidateRestorableState(for: node)
        }
    }

    /// The values a restore from `directory` gives.
    func restoredValues(from directory: String) throws -> [Int] {
        let journal = try Journal.open(at: URL(fileURLWithPath: directory), options: JournalOptions(durability: .none))
        defer { try? journal.close() }
        let fresh = (0..<nodes.count).map { Node("N\($0)") }
        try store.manager(journal, delegate: delegate).restoreState(roots: fresh)
        return fresh.map(\.value)
    }

    /// What a process kill (`.none`, `.interval`) or a power cut (`.everyCommit`) leaves of the store.
    func crashImage(_ durability: Durability) throws -> String {
        let image = store.directory.appending("image-\(UUID())")
        if durability == .everyCommit {
            try fileSystem.writePowerLossImage(of: store.url.path, to: image)
        } else {
            try FileManager.default.copyItem(atPath: store.url.path, toPath: image)
            try? FileManager.default.removeItem(atPath: image + "/LOCK")
        }
        return image
    }

    @Test(arguments: [Durability.everyCommit, .interval(seconds: 3600)])
    func aManagerSavesAgainAfterTheDiskHealsAndLosesNothingAcknowledged(durability: Durability) throws {
        let logs = CapturedLogs()
        let metrics = TestMetrics()
        let journal = try open(durability)
        let manager = manager(journal, logs: logs, metrics: metrics)
        try manager.preserveState(roots: nodes)
        var acknowledged = nodes.map(\.value)

        fileSystem.arm(FaultPlan(at: 1, of: IOCallKind.syncs, fault: .eio, persistent: true))
        change(manager, to: 100)
        // Under the interval policy the commit returns before the sync; the sync the interval
        // thread would run fails here, and the store refuses what comes next.
        if durability == .everyCommit {
            #expect(throws: JournalError.self) { try manager.preserveState(roots: nodes) }
        } else {
            try manager.preserveState(roots: nodes)
            acknowledged = nodes.map(\.value)
            #expect(throws: JournalError.self) { try journal.sync() }
            change(manager, to: 150)
            #expect(throws: JournalError.self) { try manager.preserveState(roots: nodes) }
        }
        guard case .degraded(let reason, _) = manager.health else {
            Issue.record("not degraded: \(manager.health)")
            return
        }
        #expect(reason.errno == EIO)
        #expect(!logs.entries(.error, containing: "unavailable").isEmpty)

        for round in 1...6 {
            clock.advance(by: .seconds(10))
            change(manager, to: 200 + round * 10)
            #expect(throws: (any Error).self) { try manager.preserveState(roots: nodes) }
            #expect(!manager.health.isHealthy)
        }
        // Refused without an attempt: the wait after the last failed one has not passed.
        fileSystem.arm(nil)
        change(manager, to: 300)
        let refused = try #require(throws: RestorationError.self) { try manager.preserveState(roots: nodes) }
        #expect(refused.code == .storeUnavailable)

        clock.advance(by: .seconds(10))
        let catchUp = try manager.preserveState(roots: nodes)
        #expect(catchUp.mode == .full)
        // The catch-up epoch says when the outage began and why, for the timeline's band.
        let marked = try #require(journal.lastCommitted?.metadata)
        #expect(marked[EpochMetadataKey.outageReason] == "EIO", "\(marked)")
        #expect(marked[EpochMetadataKey.outageStarted].flatMap { try? Date($0, strategy: .iso8601) } != nil)
        #expect(catchUp.writtenPaths.count == nodes.count + 1)
        #expect(manager.health.isHealthy)
        acknowledged = nodes.map(\.value)
        #expect(try restoredValues(from: crashImage(durability)) == acknowledged)

        // Once recovered, an incremental pass the app asks for is incremental again.
        change(manager, to: 400)
        let next = try manager.preserveState(roots: nodes, mode: .incremental)
        #expect(next.mode == .incremental)
        if durability != .everyCommit { try journal.sync() }
        acknowledged = nodes.map(\.value)
        #expect(try restoredValues(from: crashImage(durability)) == acknowledged)

        let notice = try #require(logs.entries(.notice, containing: "recovered").first)
        #expect(notice.metadata["written_paths"] == .string("\(nodes.count + 1)"))
        #expect(try metrics.expectCounter("statejournal_store_catch_up_passes").totalValue == 1)
        #expect(try metrics.expectTimer("statejournal_store_degraded_duration").values.count == 1)
        let faults = try metrics.expectCounter("statejournal_store_faults", [("errno", "EIO")])
        #expect(faults.totalValue >= 2)
        try journal.close()
    }

    @MainActor
    @Test func backgroundSavesAreNeverAcknowledgedWhileTheStoreIsUnavailable() async throws {
        let journal = try open(.everyCommit)
        let manager = manager(journal)
        try await manager.preserveStateInBackground(roots: nodes)
        fileSystem.arm(FaultPlan(at: 1, of: IOCallKind.syncs, fault: .eio, persistent: true))
        var acknowledged: [Int]?
        for round in 1...20 {
            change(manager, to: round * 10)
            if let report = try? await manager.preserveStateInBackground(roots: nodes) {
                acknowledged = nodes.map(\.value)
                Issue.record("acknowledged epoch \(String(describing: report.epoch)) during the fault")
            }
            if round % 5 == 0 { clock.advance(by: .seconds(10)) }
        }
        #expect(acknowledged == nil)
        fileSystem.arm(nil)
        let waiter = Task { @MainActor in try await manager.waitUntilHealthy() }
        clock.advance(by: .seconds(10))
        change(manager, to: 500)
        let report = try await manager.preserveStateInBackground(roots: nodes)
        #expect(report.mode == .full)
        try await waiter.value
        #expect(manager.health.isHealthy)
        #expect(try restoredValues(from: crashImage(.everyCommit)) == nodes.map(\.value))
        try journal.close()
    }

    @Test(arguments: [Durability.everyCommit, .none])
    func aFaultAtAnyCallOfARecoveryFailsSafeAndTheNextAttemptSucceeds(durability: Durability) throws {
        var faultPoint = 1
        while true {
            let test = StoreRecoveryTests()
            let journal = try test.open(durability)
            let manager = test.manager(journal)
            try manager.preserveState(roots: test.nodes)
            test.change(manager, to: 100)
            if durability == .everyCommit {
                test.fileSystem.arm(FaultPlan(at: 1, of: IOCallKind.syncs, fault: .eio))
                #expect(throws: JournalError.self) { try manager.preserveState(roots: test.nodes) }
            } else {
                try manager.preserveState(roots: test.nodes)
                test.fileSystem.arm(FaultPlan(at: 1, of: IOCallKind.syncs, fault: .eio))
                #expect(throws: JournalError.self) { try journal.sync() }
                test.change(manager, to: 150)
                #expect(throws: JournalError.self) { try manager.preserveState(roots: test.nodes) }
            }
            #expect(!manager.health.isHealthy)
            let faultsBefore = test.fileSystem.faultsFired
            // The recovery attempt: the reopen, then the catch-up pass.
            test.fileSystem.arm(FaultPlan(at: faultPoint, fault: .eio))
            test.change(manager, to: 200)
            let attempt = Result { try manager.preserveState(roots: test.nodes) }
            let fired = test.fileSystem.faultsFired > faultsBefore
            test.fileSystem.arm(nil)
            if case .failure = attempt {
                #expect(fired, "call #\(faultPoint)")
                #expect(!manager.health.isHealthy, "call #\(faultPoint)")
                test.clock.advance(by: .seconds(60))
                test.change(manager, to: 300)
                try manager.preserveState(roots: test.nodes)
            }
            #expect(manager.health.isHealthy, "call #\(faultPoint)")
            if durability == .none { try journal.sync() }
            let expected = test.nodes.map(\.value)
            #expect(try test.restoredValues(from: test.crashImage(durability)) == expected, "call #\(faultPoint)")
            test.change(manager, to: 400)
            try manager.preserveState(roots: test.nodes)
            try journal.close()
            #expect(test.fileSystem.unmatchedCloses == 0, "call #\(faultPoint)")
            #expect(try test.restoredValues(from: test.store.url.path) == test.nodes.map(\.value))
            guard fired else { break }
            faultPoint += 1
        }
        #expect(faultPoint > 10)
    }

    @Test func anOutageOfAnyLengthKeepsTheWorkAndDescriptorsFlat() async throws {
        let journal = try open(.everyCommit)
        let manager = manager(journal)
        try manager.preserveState(roots: nodes)
        fileSystem.arm(FaultPlan(at: 1, fault: .eio, persistent: true))
        change(manager, to: 10)
        _ = try? await manager.submitPreservation(roots: nodes).report()
        let descriptors = fileSystem.openDescriptorCount
        var attempts = 0
        for round in 1...500 {
            change(manager, to: round)
            // A save while the store is unavailable fails at once: nothing is queued for later.
            // An attempt (after each wait) may get as far as handing a catch-up pass to the
            // journal, which fails too; between attempts, saves fail at once.
            if let pending = try? manager.submitPreservation(roots: nodes) {
                #expect(round % 10 == 1, "round \(round)")
                await #expect(throws: JournalError.self) { _ = try await pending.report() }
            }
            if round % 10 == 0 {
                clock.advance(by: .seconds(60))
                attempts += 1
            }
            #expect(fileSystem.openDescriptorCount <= descriptors)
        }
        #expect(attempts == 50)
        fileSystem.arm(nil)
        clock.advance(by: .seconds(60))
        _ = try await manager.submitPreservation(roots: nodes).report()
        #expect(manager.health.isHealthy)
        #expect(try restoredValues(from: crashImage(.everyCommit)) == nodes.map(\.value))
        try journal.close()
    }

    @Test func aStoreReplacedWhileTheAppRunsFailsForGood() throws {
        let journal = try open(.everyCommit)
        let manager = manager(journal)
        try manager.preserveState(roots: nodes)
        fileSystem.arm(FaultPlan(at: 1, of: IOCallKind.syncs, fault: .eio))
        change(manager, to: 10)
        #expect(throws: JournalError.self) { try manager.preserveState(roots: nodes) }
        try FileManager.default.moveItem(atPath: store.url.path, toPath: store.directory.appending("old"))
        try Journal.open(at: store.url).close()
        let error = try #require(throws: RestorationError.self) { try manager.preserveState(roots: nodes) }
        #expect(error.code == .storeUnavailable)
        guard case .failed(let reason) = manager.health else {
            Issue.record("not failed: \(manager.health)")
            return
        }
        #expect(reason.code == .storeReplaced)
        clock.advance(by: .seconds(60))
        #expect(throws: RestorationError.self) { try manager.preserveState(roots: nodes) }
    }

    @Test func backoffGrowsFromTheInitialDelayToTheMaximum() {
        let policy = StoreRecoveryPolicy(initialDelay: .milliseconds(100), maximumDelay: .seconds(1), multiplier: 2)
        #expect(policy.delay(afterFailedAttempts: 0) == .zero)
        #expect(policy.delay(afterFailedAttempts: 1) == .milliseconds(100))
        #expect(policy.delay(afterFailedAttempts: 3) == .milliseconds(400))
        #expect(policy.delay(afterFailedAttempts: 5) == .seconds(1))
        #expect(policy.delay(afterFailedAttempts: 1000) == .seconds(1))
    }
}
