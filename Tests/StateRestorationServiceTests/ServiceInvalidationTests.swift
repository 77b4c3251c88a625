import Foundation
import Logging
import StateJournal
import StateJournalTestSupport
import StateRestoration
import StateRestorationExample
import StateRestorationService
import Testing

/// Invalidations the service is not told of still schedule its coalesced pass.
@MainActor
@Suite(.timeLimit(.minutes(10)))
struct ServiceInvalidationTests {
    @Test func anObjectThatInvalidatesItselfSchedulesAPassWithoutTellingTheService() async throws {
        let directory = TemporaryDirectory()
        let journal = try Journal.open(
            at: URL(fileURLWithPath: directory.appending("store")), options: JournalOptions(durability: .none))
        let app = MailApp(journal: journal)
        let clock = ManualClock()
        let service = StateRestorationService(
            manager: app.manager, roots: { app.roots },
            configuration: .init(coalescingDelay: .seconds(1), fullPassInterval: nil, clock: clock))

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            await service.waitUntilRestored()
            let before = try #require(try await service.preserve()).epoch

            // MailApp invalidates through the manager, which asks no pass of the service; the
            // navigation controller invalidating itself does.
            app.perform(.toggleUnreadOnly)
            app.navigation.invalidateRestorableState()
            // The coalesced pass it scheduled waits for the clock, which only this test moves.
            while clock.sleeperCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(journal.lastCommitted?.epoch == before)
            clock.advance(by: .seconds(1))
            while (journal.lastCommitted?.epoch ?? 0) <= before {
                try await Task.sleep(for: .milliseconds(5))
            }
            group.cancelAll()
            try await group.waitForAll()
        }
        let epochs = try journal.history().filter {
            $0.metadata[EpochMetadataKey.kind] == RestorationEpochKind.preservation.rawValue
        }
        #expect(epochs.count >= 2)
        try journal.close()
        let reopened = try Journal.open(
            at: URL(fileURLWithPath: directory.appending("store")), options: JournalOptions(durability: .none))
        defer { try? reopened.close() }
        let relaunched = MailApp(journal: reopened)
        try relaunched.launch()
        #expect(relaunched.snapshot.unreadOnly)
    }
}
