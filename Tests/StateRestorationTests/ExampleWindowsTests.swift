import Foundation
import StateJournal
import StateRestoration
import StateRestorationExample
import Testing

/// The example mail app with two more windows, one of which the user closes.
@Suite struct ExampleWindowsTests {
    static let reading = SceneSession(persistentIdentifier: "reading")!
    static let writing = SceneSession(persistentIdentifier: "writing")!

    @Test func twoWindowsComeBackWithTheMainOneAndTheClosedOneStaysClosed() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let app = MailApp(journal: journal)
            app.perform(.openMailbox("Inbox"))
            app.openWindow(Self.reading)
            app.openWindow(Self.writing)
            app.perform(.openMailbox("Archive"), in: Self.reading)
            app.perform(.selectMessage(42), in: Self.reading)
            app.perform(.compose(to: "grace@example.org", subject: "Notes"), in: Self.writing)
            app.perform(.type("draft in a window"), in: Self.writing)
            try app.save()
            #expect(app.manager.openSessions == [Self.reading, Self.writing])
            // The user closes the writing window; later changes are saved as usual.
            try app.closeWindow(Self.writing)
            app.perform(.scroll(to: 120), in: Self.reading)
            try app.save(mode: .incremental)
            try journal.close()
        }
        let journal = try store.open()
        let app = MailApp(journal: journal)
        let report = try app.launch()
        #expect(report.outcome == .restored)
        #expect(app.snapshot.stack == ["Mailboxes", "Messages"] && app.snapshot.mailbox == "Inbox")
        #expect(Set(app.windows.keys) == [Self.reading])
        let reading = try #require(app.windows[Self.reading])
        let list = try #require(reading.stack.last as? MessageListController)
        #expect(list.mailbox == "Archive" && list.selectedMessageID == 42 && list.scrollOffset == 120)
        #expect(app.windowReports[Self.reading]?.outcome == .restored)
        #expect(app.windowReports[Self.reading]?.scene == Self.reading)
        // The main window's report lists its own objects only.
        #expect(report.restored.allSatisfy { !$0.path.components[0].hasPrefix("@scene:") })

        let history = try journal.history()
        let discard = try #require(history.first { $0.metadata[EpochMetadataKey.discardedScenes] != nil })
        #expect(discard.metadata[EpochMetadataKey.discardedScenes] == #"["writing"]"#)
        #expect(try !journal.state().paths.contains { $0.components[0] == "@scene:writing" })
        #expect(try journal.state(through: discard.epoch - 1).paths.contains { $0.components[0] == "@scene:writing" })
    }
}
