import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// Runs the app of Restoring Several Windows through two launches: two windows saved, one closed.
@Suite(.timeLimit(.minutes(10)))
struct RestoringSeveralWindowsRunTests {
    final class SaysYes: ApplicationRestorationDelegate {
        func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
    }

    final class Window: RestorableController {
        @Preserved("title") var title = ""
        var restorationIdentifier: String? { "Window" }
    }

    @Test func twoWindowsAreSavedAndTheClosedOneDoesNotComeBack() throws {
        let directory = TemporaryDirectory()
        let url = URL(fileURLWithPath: directory.appending("store"), isDirectory: true)
        let delegate = SaysYes()
        func app(_ journal: Journal) -> WindowedApp {
            let manager = RestorationManager(
                journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop")
            )
            manager.delegate = delegate
            return WindowedApp(manager: manager, mainWindow: Window(), makeWindow: { Window() })
        }
        let kept: SceneSession
        do {
            let journal = try Journal.open(at: url, options: JournalOptions(durability: .none))
            let first = app(journal)
            try first.launch()
            kept = first.openWindow()
            let closed = first.openWindow()
            (first.windows[kept] as! Window).title = "kept"
            (first.windows[closed] as! Window).title = "closed"
            try first.save()
            try first.closeWindow(closed)
            try journal.close()
        }
        let journal = try Journal.open(at: url, options: JournalOptions(durability: .none))
        defer { try? journal.close() }
        let second = app(journal)
        try second.launch()
        #expect(Array(second.windows.keys) == [kept])
        #expect((second.windows[kept] as! Window).title == "kept")
    }
}
