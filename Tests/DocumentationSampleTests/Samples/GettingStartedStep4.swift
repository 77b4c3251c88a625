// swift-format-ignore-file
// Step 4 of Getting Started (StateRestoration.docc/GettingStarted.md): a swift-service-lifecycle app.
// This file imports exactly what the sample imports. `@main` is commented out because a test
// target has its own entry point; the test calls `NotesApp.main()`.
// It keeps the document's formatting, which swift-format would change.
import Foundation
import Logging
import ServiceLifecycle
import StateJournal
import StateRestoration
import StateRestorationService

// sample: GettingStarted.md, step 4: let a service run the passes
// @main
struct NotesApp {
    @MainActor
    static func main() async throws {
        let logger = Logger(label: "notes")
        let journal = try Journal.open(
            at: URL(fileURLWithPath: "/var/lib/notes/state"), options: JournalOptions(logger: logger))
        let manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(bundleVersion: "42", interfaceIdiom: "desktop", logger: logger))
        let delegate = NotesDelegate()
        manager.delegate = delegate
        let notes = NotesController()

        let restoration = StateRestorationService(
            manager: manager, roots: { [notes] },
            configuration: .init(coalescingDelay: .milliseconds(250), fullPassInterval: .seconds(60), logger: logger))
        let group = ServiceGroup(services: [restoration], gracefulShutdownSignals: [.sigterm], logger: logger)
        // Elsewhere on the main actor, when the user scrolls:
        //     notes.scrollOffset = 80
        //     restoration.invalidate(notes)
        try await group.run()
        withExtendedLifetime(delegate) {}
        try journal.close()
    }
}
// end sample
