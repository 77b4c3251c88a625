import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// Runs the controllers of Coming from UIKit's samples through a save and a restore.
@Suite(.timeLimit(.minutes(10)))
struct ComingFromUIKitRunTests {
    final class SaysYes: ApplicationRestorationDelegate {
        func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
    }

    /// Saves `save`'s controller, then restores into `restored` at a new launch.
    static func relaunch(
        saving saved: any RestorableController, restoring restored: any RestorableController,
        change: () -> Void, saved inspect: (JournalState) throws -> Void = { _ in },
        registering classes: [any ControllerRestoration.Type] = []
    ) throws -> RestorationReport {
        let directory = TemporaryDirectory()
        let configuration = RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop")
        let delegate = SaysYes()
        do {
            let journal = try Journal.open(at: URL(fileURLWithPath: directory.appending("store"), isDirectory: true))
            let manager = RestorationManager(journal: journal, configuration: configuration)
            manager.delegate = delegate
            try manager.preserveState(roots: [saved], mode: .full)
            change()
            try manager.preserveState(roots: [saved])
            try inspect(try journal.state())
            try journal.close()
        }
        let journal = try Journal.open(at: URL(fileURLWithPath: directory.appending("store"), isDirectory: true))
        defer { try? journal.close() }
        let manager = RestorationManager(journal: journal, configuration: configuration)
        manager.delegate = delegate
        for restorationClass in classes { manager.register(restorationClass: restorationClass) }
        return try withExtendedLifetime(delegate) { try manager.restoreState(roots: [restored]) }
    }

    @Test func theInboxSavesWhatSelectInvalidatedAndReadsMissingKeysAsTheirDefaults() throws {
        let inbox = InboxController()
        inbox.unreadOnly = true
        inbox.pageSize = 20
        let restored = InboxController()
        restored.pageSize = 0
        let report = try Self.relaunch(saving: inbox, restoring: restored) { inbox.select("Message-7") }
        #expect(report.restored.contains { $0.path == RestorationPath("Inbox") && $0.decoded })
        #expect(restored.unreadOnly)
        #expect(restored.pageSize == 20)
        // select(_:) invalidated the controller, so the incremental pass saved the selection.
        #expect(restored.selectedMessage == "Message-7")
    }

    @Test func theInboxWithPreservedPropertiesSavesAndRestoresWithoutCodingMethods() throws {
        let inbox = PreservedInboxController()
        let restored = PreservedInboxController()
        let report = try Self.relaunch(saving: inbox, restoring: restored) {
            inbox.unreadOnly = true
            inbox.pageSize = 25
            inbox.selectedMessage = "Message-9"
        }
        #expect(report.restored.contains { $0.path == RestorationPath("Inbox") && $0.decoded })
        #expect(restored.unreadOnly)
        #expect(restored.pageSize == 25)
        #expect(restored.selectedMessage == "Message-9")
    }

    @MainActor
    @Test func theMainActorBoardSavesItsCardsAndZoomAndRestoresIntoTheWindowsRootByUIKitsRootRule() throws {
        let board = BoardController()
        board.cards = ["Write the docs"]
        let root = BoardController()
        let report = try Self.relaunch(
            saving: board, restoring: root,
            change: {
                board.zoom = 1.5  // @Preserved: invalidates the board
                board.cards.append("Ship")  // observed and read by the encode: invalidates it too
            },
            saved: { state in
                let entry = try RestorableEntry(decoding: try #require(state[RestorationPath("Board")]))
                #expect(entry.values["zoom"] == .double(1.5))
                #expect(entry.values["cards"] == .array([.string("Write the docs"), .string("Ship")]))
            },
            registering: [BoardRestoration.self])
        // Its restoration class is asked, and the root the app created at launch is kept: the saved
        // state came from no storyboard.
        #expect(
            report.restored.contains {
                $0.path == RestorationPath("Board") && $0.source == .existing && $0.decoded
            })
        #expect(root.cards == ["Write the docs", "Ship"])
        #expect(root.zoom == 1.5)
    }

    @Test func pagesARestorationClassRecreatesAreAttachedByTheirStackInTheirSavedOrder() throws {
        let stack = StackController()
        stack.pages = [PageController(title: "Inbox"), PageController(title: "Message")]
        let restored = StackController()
        let report = try Self.relaunch(
            saving: stack, restoring: restored,
            change: { stack.pages[1].scrollOffset = 240 },
            registering: [PageController.self])
        #expect(restored.pages.map(\.title) == ["Inbox", "Message"])
        #expect(restored.pages.map(\.scrollOffset) == [0, 240])
        #expect(
            report.restored.filter { $0.source == .restorationClass && $0.decoded }.map(\.path) == [
                RestorationPath("Stack", "Page-Inbox"), RestorationPath("Stack", "Page-Message"),
            ])
        #expect(report.diagnostics.isEmpty)
    }
}
