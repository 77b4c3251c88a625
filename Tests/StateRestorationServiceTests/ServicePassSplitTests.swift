import Foundation
import Logging
import StateJournal
import StateJournalTestSupport
import StateRestoration
import StateRestorationExample
import Testing

@testable import StateRestorationService

/// The service's passes hold the main actor only while they encode: the journal commits and syncs
/// off it. Held syncs of the fault-injecting file system order the steps; nothing asserts a duration.
@MainActor
@Suite(.timeLimit(.minutes(10)))
struct ServicePassSplitTests {
    let directory = TemporaryDirectory()
    let fileSystem = FaultInjectingFileSystem()

    func open() throws -> Journal {
        try Journal.open(
            path: directory.appending("store"),
            options: JournalOptions(durability: .everyCommit, compaction: .manual),
            fileSystem: fileSystem)
    }

    /// The service over `app`; its coalescing delay runs on a clock no test advances, so only
    /// `preserve()` runs passes.
    func service(for app: MailApp) -> StateRestorationService {
        StateRestorationService(
            manager: app.manager, roots: { app.roots },
            configuration: .init(
                coalescingDelay: .seconds(1), fullPassInterval: nil, restoresAtStart: false, clock: ManualClock()))
    }

    /// Waits, without blocking the main actor, until `condition` holds.
    func waitUntil(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(2)) }
    }

    func syncIsHeld() -> Bool { fileSystem.waitForHeldCall(until: Date()) }

    @Test func aServicePassHoldsTheMainActorOnlyWhileItEncodesAndReturnsOnceTheEpochIsDurable() async throws {
        let journal = try open()
        let app = MailApp(journal: journal)
        let service = service(for: app)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            _ = await service.waitUntilRestored()
            try await service.preserve()
            let before = try #require(journal.lastDurable)

            fileSystem.hold([.dataSync])
            app.perform(.openMailbox("Archive"))
            service.setNeedsPreservation()
            let caller = Task { @MainActor in try await service.preserve() }
            // The pass has encoded and the committer waits for the disk; the main actor is free
            // meanwhile: this test runs on it.
            try await waitUntil(syncIsHeld)
            app.perform(.selectMessage(7))
            #expect(journal.lastDurable == before)
            fileSystem.release()
            let epoch = try #require(try await caller.value)
            #expect(epoch.epoch > before.epoch)
            #expect(journal.lastDurable == epoch)
            group.cancelAll()
            try await group.waitForAll()
        }
        try journal.close()
    }

    @Test func callersThatArriveWhileAPassWaitsForTheDiskShareTheNextPass() async throws {
        let journal = try open()
        let app = MailApp(journal: journal)
        let service = service(for: app)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            _ = await service.waitUntilRestored()
            app.perform(.openMailbox("Inbox"))
            try await service.preserve()

            fileSystem.hold([.dataSync])
            app.perform(.scroll(to: 1))
            service.invalidate(try #require(app.navigation.stack.last))
            let first = Task { @MainActor in try await service.preserve() }
            try await waitUntil(syncIsHeld)
            let later = (2...5).map { offset in
                Task { @MainActor in
                    app.perform(.scroll(to: Double(offset)))
                    if let list = app.navigation.stack.last { service.invalidate(list) }
                    return try await service.preserve()
                }
            }
            try await waitUntil { service.passes.queuedCallerCount == 4 }
            fileSystem.release()

            let firstEpoch = try #require(try await first.value)
            var laterEpochs: [EpochInfo] = []
            for caller in later { laterEpochs.append(try #require(try await caller.value)) }
            #expect(Set(laterEpochs).count == 1, "the four callers share one pass")
            #expect(laterEpochs.first?.epoch == firstEpoch.epoch + 1)
            #expect(journal.lastCommitted == laterEpochs.first)
            group.cancelAll()
            try await group.waitForAll()
        }
        try journal.close()
        let reopened = try open()
        let relaunched = MailApp(journal: reopened)
        try relaunched.launch()
        #expect(relaunched.snapshot.scrollOffset == 5)
        try reopened.close()
    }
}
