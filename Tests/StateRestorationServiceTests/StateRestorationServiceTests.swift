import Foundation
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import StateJournal
import StateJournalTestSupport
import StateRestoration
import StateRestorationExample
import StateRestorationService
import Testing

/// The service's passes, driven through the example mail app. Nothing here asserts a duration:
/// the coalescing delay and the full-pass timer run on a clock only the test advances, and tests
/// wait for conditions with generous time limits.
@MainActor
@Suite(.timeLimit(.minutes(10)))
struct StateRestorationServiceTests {
    /// A store that counts the journal's syncs.
    final class Store {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem()
        var path: String { directory.appending("store") }

        func open() throws -> Journal {
            try Journal.open(path: path, options: JournalOptions(durability: .none), fileSystem: fileSystem)
        }

        /// The app as relaunched over the saved state, and what it shows.
        func relaunched() throws -> MailSnapshot {
            let journal = try open()
            defer { try? journal.close() }
            let app = MailApp(journal: journal)
            try app.launch()
            return app.snapshot
        }
    }

    /// Waits until `condition` holds, checking every few milliseconds.
    private func waitUntil(_ condition: () throws -> Bool) async throws {
        while try !condition() {
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Runs `service` in a task group, waits until its restoration at start is done, then runs `body`
    /// with the group.
    private func running(
        _ service: StateRestorationService,
        _ body: @MainActor (inout ThrowingTaskGroup<Void, any Error>) async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            try await waitUntil { service.restorationReport != nil }
            try await body(&group)
        }
    }

    /// Runs `body` on the main actor with the test kit's trigger of graceful shutdown.
    private nonisolated func withGracefulShutdownTrigger(
        _ body: @escaping @Sendable @MainActor (GracefulShutdownTestTrigger) async throws -> Void
    ) async throws {
        try await testGracefulShutdown { trigger in try await body(trigger) }
    }

    /// The service over `app`, whose coalescing delay and timer run on `clock`: unless the test
    /// advances it, neither runs a pass.
    private func service(
        for app: MailApp, clock: ManualClock = ManualClock(), coalescingDelay: Duration = .seconds(1),
        fullPassInterval: Duration? = nil,
        logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    ) -> StateRestorationService {
        StateRestorationService(
            manager: app.manager, roots: { app.roots },
            configuration: .init(
                coalescingDelay: coalescingDelay, fullPassInterval: fullPassInterval, logger: logger, clock: clock))
    }

    @Test func gracefulShutdownPreservesAFinalEpochAndSyncsBeforeReturning() async throws {
        let store = Store()
        let journal = try store.open()
        let app = MailApp(journal: journal)
        let logs = CapturedLogs()
        // The clock is never advanced: neither the coalescing delay nor a timer can run a pass before
        // the shutdown does.
        let service = service(for: app, fullPassInterval: .seconds(60), logger: logs.logger)

        try await withGracefulShutdownTrigger { trigger in
            try await running(service) { group in
                app.perform(.openMailbox("Archive"))
                app.perform(.selectMessage(42))
                service.setNeedsPreservation()
                #expect(journal.lastCommitted == nil)
                let syncsBefore = store.fileSystem.callCount(of: .dataSync)
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
                #expect(store.fileSystem.callCount(of: .dataSync) > syncsBefore, "run() syncs before returning")
            }
        }
        let final = try #require(journal.lastCommitted)
        #expect(logs.entries(.info, containing: "final state").first?.metadata["epoch"] == "\(final.epoch)")
        let expected = app.snapshot
        try journal.close()
        #expect(try store.relaunched() == expected)
    }

    @Test func aFinalPassThatFailsIsLoggedOnceAndMakesRunThrow() async throws {
        let store = Store()
        let journal = try store.open()
        let app = MailApp(journal: journal)
        let logs = CapturedLogs()
        let service = service(for: app, logger: logs.logger)

        try await withGracefulShutdownTrigger { trigger in
            try await running(service) { group in
                // A journal closed under the service makes the final pass fail.
                try journal.close()
                trigger.triggerGracefulShutdown()
                await #expect(throws: JournalError.self) { try await group.waitForAll() }
            }
        }
        #expect(logs.all.filter { $0.level == .error }.count == 1, "\(logs.all.map(\.message))")
        #expect(logs.entries(.error, containing: "final preservation pass failed").count == 1)
    }

    @Test func aBurstOfFiftyInvalidationsIsSavedAsOneEpoch() async throws {
        let store = Store()
        let journal = try store.open()
        let app = MailApp(journal: journal)
        let clock = ManualClock()
        let service = service(for: app, clock: clock, coalescingDelay: .seconds(1))

        try await running(service) { group in
            app.perform(.openMailbox("Inbox"))
            service.setNeedsPreservation()
            try await waitUntil { clock.sleeperCount == 1 }
            clock.advance(by: .seconds(1))
            // The pass asked for above, not a restoration marker, is the epoch the burst must follow.
            try await waitUntil {
                journal.lastCommitted?.metadata[EpochMetadataKey.kind] == RestorationEpochKind.preservation.rawValue
            }
            let before = try #require(journal.lastCommitted).epoch

            // The clock stands still during the burst, so the whole burst is inside one coalescing
            // window, however long the machine takes over it.
            for offset in 1...50 {
                app.perform(.scroll(to: Double(offset)))
                let list = try #require(app.navigation.stack.last)
                service.invalidate(list)
                await Task.yield()
            }
            try await waitUntil { clock.sleeperCount == 1 }
            #expect(journal.lastCommitted?.epoch == before, "no pass runs before the coalescing delay ends")
            clock.advance(by: .seconds(1))
            try await waitUntil { (journal.lastCommitted?.epoch ?? 0) > before }
            group.cancelAll()
            try await group.waitForAll()
            #expect(try journal.history().filter { $0.epoch > before }.count == 1)
        }
        try journal.close()
        #expect(try store.relaunched().scrollOffset == 50)
    }

    @Test func invalidationsAfterTheCoalescingDelayEndsAreSavedByTheNextPass() async throws {
        let store = Store()
        let journal = try store.open()
        let app = MailApp(journal: journal)
        let clock = ManualClock()
        let service = service(for: app, clock: clock, coalescingDelay: .seconds(1))

        try await running(service) { group in
            app.perform(.openMailbox("Inbox"))
            let before = journal.lastCommitted?.epoch ?? 0
            var epochs: [UInt64] = []
            for offset in 1...3 {
                app.perform(.scroll(to: Double(offset)))
                service.invalidate(try #require(app.navigation.stack.last))
                try await waitUntil { clock.sleeperCount == 1 }
                // Half the delay runs no pass; the other half does.
                clock.advance(by: .milliseconds(500))
                #expect(journal.lastCommitted?.epoch ?? 0 == epochs.last ?? before)
                clock.advance(by: .milliseconds(500))
                try await waitUntil { (journal.lastCommitted?.epoch ?? 0) > epochs.last ?? before }
                epochs.append(try #require(journal.lastCommitted).epoch)
            }
            #expect(epochs == [before + 1, before + 2, before + 3], "one epoch per coalescing window")
            group.cancelAll()
            try await group.waitForAll()
        }
        try journal.close()
        #expect(try store.relaunched().scrollOffset == 3)
    }

    @Test func aFullPassOnATimerSavesChangesTheServiceWasNotToldOf() async throws {
        let store = Store()
        let journal = try store.open()
        let app = MailApp(journal: journal)
        let clock = ManualClock()
        let service = service(for: app, clock: clock, fullPassInterval: .seconds(60))

        try await running(service) { group in
            let first = journal.lastCommitted?.epoch ?? 0
            // The service is not told: only its timer runs a pass, once the interval has passed.
            app.perform(.toggleUnreadOnly)
            try await waitUntil { clock.sleeperCount == 1 }
            clock.advance(by: .seconds(59))
            #expect(journal.lastCommitted?.epoch ?? 0 == first)
            clock.advance(by: .seconds(1))
            try await waitUntil { (journal.lastCommitted?.epoch ?? 0) > first }
            group.cancelAll()
            try await group.waitForAll()
        }
        try journal.close()
        #expect(try store.relaunched().unreadOnly)
    }

    @Test func aServiceGroupShutsTheServiceDownGracefully() async throws {
        let store = Store()
        let journal = try store.open()
        let app = MailApp(journal: journal)
        let service = service(for: app)
        let serviceGroup = ServiceGroup(
            services: [service], logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await serviceGroup.run() }
            try await waitUntil { service.restorationReport != nil }
            app.perform(.compose(to: "grace@example.org", subject: "Lunch"))
            app.perform(.type("See you at noon"))
            await serviceGroup.triggerGracefulShutdown()
            try await group.waitForAll()
        }
        let expected = app.snapshot
        try journal.close()
        #expect(try store.relaunched() == expected)
    }

    @Test func theServiceRestoresTheSavedStateAtStart() async throws {
        let store = Store()
        var journal = try store.open()
        let saved = MailApp(journal: journal)
        saved.simulate(steps: 40, seed: 7)
        try saved.save(mode: .full)
        let expected = saved.snapshot
        try journal.close()

        journal = try store.open()
        let app = MailApp(journal: journal)
        let service = service(for: app)
        try await running(service) { group in
            #expect(service.restorationReport?.outcome == .restored)
            #expect(app.snapshot == expected)
            group.cancelAll()
            try await group.waitForAll()
        }
        try journal.close()
    }

    @Test func aRestorationThatFailsIsLoggedAsAnErrorThatSaysWhatToRun() async throws {
        let store = Store()
        var journal = try store.open()
        let saved = MailApp(journal: journal)
        try saved.save(mode: .full)
        try journal.close()
        journal = try store.open()
        let app = MailApp(journal: journal)
        let logs = CapturedLogs()
        let service = service(for: app, logger: logs.logger)
        // A journal closed under the service makes the restoration's marker commit fail.
        try journal.close()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            #expect(await service.waitUntilRestored() == nil)
            group.cancelAll()
            try? await group.waitForAll()
        }
        let errors = logs.entries(.error, containing: "Restoring the saved state failed")
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains("statejournal verify \(store.path)") == true)
        #expect(errors.first.map { "\($0.metadata["error"] ?? "")" }?.contains("closed") == true)
    }

    @Test func waitingForRestorationReturnsItsReportAndChangesMadeMeanwhileAreSaved() async throws {
        let store = Store()
        var journal = try store.open()
        let saved = MailApp(journal: journal)
        saved.simulate(steps: 20, seed: 3)
        try saved.save(mode: .full)
        try journal.close()

        journal = try store.open()
        let app = MailApp(journal: journal)
        let service = service(for: app)
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Asked before the service runs: the answer comes once it has restored.
            let waiter = Task { await service.waitUntilRestored() }
            group.addTask { try await service.run() }
            let report = await waiter.value
            #expect(report?.outcome == .restored)
            app.perform(.toggleUnreadOnly)
            let epoch = try await service.preserve()
            #expect(epoch == journal.lastCommitted)
            #expect(epoch?.metadata[EpochMetadataKey.kind] == RestorationEpochKind.preservation.rawValue)
            group.cancelAll()
            try await group.waitForAll()
        }
        let expected = app.snapshot
        try journal.close()
        #expect(try store.relaunched() == expected)
    }

    @Test func concurrentCallersOfPreserveShareEpochsAndEachGetsOneHoldingItsChange() async throws {
        let store = Store()
        let journal = try store.open()
        let app = MailApp(journal: journal)
        let service = service(for: app)
        try await running(service) { group in
            app.perform(.openMailbox("Inbox"))
            let before = journal.lastCommitted?.epoch ?? 0
            let callers = (1...8).map { offset in
                Task { @MainActor in
                    app.perform(.scroll(to: Double(offset)))
                    if let list = app.navigation.stack.last { service.invalidate(list) }
                    return try await service.preserve()?.epoch ?? 0
                }
            }
            var epochs: [UInt64] = []
            for caller in callers { epochs.append(try await caller.value) }
            #expect(epochs.allSatisfy { $0 > before })
            let written = try journal.history().filter { $0.epoch > before }.count
            #expect(written <= 8)
            group.cancelAll()
            try await group.waitForAll()
        }
        try journal.close()
        #expect(try store.relaunched().scrollOffset == 8)
    }
}
