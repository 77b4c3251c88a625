import Foundation
import Logging
import StateJournal
import StateJournalTestSupport
import StateRestoration
import StateRestorationExample
import StateRestorationService
import Testing

/// The service runs the passes of every open window, so that no window's change is lost.
@MainActor
@Suite(.timeLimit(.minutes(10)))
struct ServiceSceneTests {
    static let left = SceneSession(persistentIdentifier: "left")!
    static let right = SceneSession(persistentIdentifier: "right")!

    func open(_ directory: TemporaryDirectory) throws -> Journal {
        try Journal.open(
            at: URL(fileURLWithPath: directory.appending("store")), options: JournalOptions(durability: .none))
    }

    /// Runs the service over `app` until `body` returns, then shuts it down (final pass and sync).
    func run(_ app: MailApp, _ body: (StateRestorationService) async throws -> Void) async throws {
        let service = StateRestorationService(
            manager: app.manager, roots: { app.roots }, scenes: { app.windows.mapValues { [$0] } },
            configuration: .init(coalescingDelay: .seconds(3600), fullPassInterval: nil, clock: ManualClock()))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            await service.waitUntilRestored()
            try await body(service)
            group.cancelAll()
            try await group.waitForAll()
        }
    }

    @Test func everyPassSavesEachOpenWindowAndTheFinalPassLosesNoWindowsChange() async throws {
        let directory = TemporaryDirectory()
        do {
            let journal = try open(directory)
            let app = MailApp(journal: journal)
            app.openWindow(Self.left)
            app.openWindow(Self.right)
            try await run(app) { service in
                app.perform(.openMailbox("Archive"), in: Self.left)
                try await service.preserve()
                #expect(try journal.history().contains { $0.metadata[EpochMetadataKey.scene] == "left" })
                // Changed and followed by no pass: the final pass at shutdown saves it.
                app.perform(.openMailbox("Sent"), in: Self.right)
                app.perform(.selectMessage(9), in: Self.right)
            }
            try journal.close()
        }
        let journal = try open(directory)
        let app = MailApp(journal: journal)
        for session in app.manager.openSessions { app.openWindow(session) }
        try await run(app) { service in
            #expect(Set(service.sceneRestorationReports.keys) == [Self.left, Self.right])
            let left = try #require(app.windows[Self.left]?.stack.last as? MessageListController)
            #expect(left.mailbox == "Archive")
            let right = try #require(app.windows[Self.right]?.stack.last as? MessageListController)
            #expect(right.mailbox == "Sent" && right.selectedMessageID == 9)
            // The user closes the left window while the service runs.
            try app.closeWindow(Self.left)
        }
        #expect(app.manager.openSessions == [Self.right])
        try journal.close()
        let reopened = try open(directory)
        defer { try? reopened.close() }
        let relaunched = MailApp(journal: reopened)
        try relaunched.launch()
        #expect(Set(relaunched.windows.keys) == [Self.right])
    }
}
