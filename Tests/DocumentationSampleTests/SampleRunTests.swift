import Foundation
import ServiceLifecycleTestKit
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// Runs every documentation sample that is code (see `Samples/`) against a temporary store, and
/// checks what it did: a sample that compiles but saves nothing, or restores nothing, fails here.
@Suite(.timeLimit(.minutes(10)))
struct SampleRunTests {
    /// The bytes the engine samples save for the inbox.
    static let inboxState = Array(#"{"selected":"Message-42"}"#.utf8)

    @Test func theReadmeEngineSampleCommitsAnEpochAndTravelsBackToTheFirst() async throws {
        try await SampleSandbox.run(creating: ["/var/lib/notes"]) { sandbox in
            let first = try DocumentationSamples.readmeEngine()
            #expect(first.restored.isEmpty)
            #expect(first.info.epoch == 1)
            #expect(first.info.metadata == ["bundleVersion": "42"])
            #expect(first.then.epoch?.epoch == 1)
            #expect(first.then[RestorationPath("Main", "Inbox")] == Self.inboxState)

            // The next launch finds the inbox, and travels back to the first epoch, which saved it.
            let second = try DocumentationSamples.readmeEngine()
            let inbox = RestorationPath("Main", "Inbox")
            #expect(second.restored[inbox] == Self.inboxState)
            #expect(second.info.epoch == 2)
            #expect(second.then.epoch?.epoch == 1)
            #expect(second.then[inbox] == Self.inboxState)

            let store = SampleSandbox.url(of: "/var/lib/notes/state", in: sandbox)
            #expect(try Journal.open(at: store).recoveredState[inbox] == Self.inboxState)
        }
    }

    @Test func theReadmeRestorationSampleRestoresAtTheNextLaunchWhatTheFirstSaved() async throws {
        try await SampleSandbox.run(creating: ["/var/lib/mail"]) { sandbox in
            let first = try DocumentationSamples.readmeRestoration()
            #expect(first.restored.isEmpty)

            // The next launch restores the inbox the first one saved, with its selection.
            let second = try DocumentationSamples.readmeRestoration()
            let inbox = RestorationPath("Inbox")
            #expect(second.restored.map(\.path) == [inbox])
            #expect(second.restored.first?.decoded == true)
            #expect(second.skipped.isEmpty)
            #expect(second.diagnostics.isEmpty)

            let store = SampleSandbox.url(of: "/var/lib/mail/state", in: sandbox)
            let state = try Journal.open(at: store).recoveredState
            #expect(state[inbox] != nil)
        }
    }

    @Test func theStateJournalOverviewSampleFindsWhatItSavedAtTheNextLaunch() async throws {
        try await SampleSandbox.run(creating: ["/var/lib/myapp"]) { sandbox in
            let first = try DocumentationSamples.stateJournalOverview()
            let manifest = SampleSandbox.url(of: "/var/lib/myapp/state/MANIFEST", in: sandbox)
            #expect(FileManager.default.fileExists(atPath: manifest.path))
            #expect(first.inbox == nil)
            #expect(first.bytes == Self.inboxState)
            #expect(first.info.epoch == 1)
            #expect(first.journal.lastCommitted == first.info)
            try first.journal.close()

            let second = try DocumentationSamples.stateJournalOverview()
            #expect(second.inbox == Self.inboxState)
            #expect(second.info.epoch == 2)
            try second.journal.close()
        }
    }

    @Test func gettingStartedStep3SavesTheScrollOffsetThatTheNextLaunchRestores() async throws {
        try await SampleSandbox.run(creating: ["/var/lib/notes"]) { sandbox in
            let saved = try DocumentationSamples.gettingStartedStep3()
            #expect(saved.scrollOffset == 120)
            let relaunched = try Self.relaunchedNotes(in: sandbox)
            #expect(relaunched.scrollOffset == 120)
            #expect(relaunched.selectedNote == nil)
        }
    }

    /// Step 4 runs over the store step 3 left: its service must restore the scroll offset at start,
    /// or its final pass at shutdown would save the offset of a new controller instead.
    @Test func gettingStartedStep4RestoresAtStartAndSavesAndClosesOnGracefulShutdown() async throws {
        try await SampleSandbox.run(creating: ["/var/lib/notes"]) { sandbox in
            _ = try DocumentationSamples.gettingStartedStep3()
            let store = SampleSandbox.url(of: "/var/lib/notes/state", in: sandbox)
            defer { signal(SIGTERM, SIG_DFL) }  // The app's service group traps SIGTERM; give it back.
            try await testGracefulShutdown { trigger in
                async let app: Void = NotesApp.main()
                try await Self.waitUntil {
                    let history = (try? JournalReader(at: store).history()) ?? []
                    return history.contains {
                        $0.metadata[EpochMetadataKey.kind] == RestorationEpochKind.restorationCompleted.rawValue
                    }
                }
                trigger.triggerGracefulShutdown()
                try await app
            }
            // main() returned: the journal is closed, so it opens again here.
            let relaunched = try Self.relaunchedNotes(in: sandbox)
            #expect(relaunched.scrollOffset == 120)
        }
    }

    /// Restores the notes controller of Getting Started from the store at `/var/lib/notes/state`, as
    /// the next launch would.
    static func relaunchedNotes(in sandbox: TemporaryDirectory) throws -> NotesController {
        let journal = try Journal.open(at: SampleSandbox.url(of: "/var/lib/notes/state", in: sandbox))
        defer { try? journal.close() }
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "42", interfaceIdiom: "desktop"))
        let delegate = NotesDelegate()
        manager.delegate = delegate
        let notes = NotesController()
        let report = try manager.restoreState(roots: [notes])
        #expect(report.outcome == .restored)
        #expect(report.restored.map(\.path) == [RestorationPath("Notes")])
        withExtendedLifetime(delegate) {}
        return notes
    }

    /// Waits until `condition` holds, checking every few milliseconds.
    static func waitUntil(_ condition: () throws -> Bool) async throws {
        while try !condition() {
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

extension SampleRunTests {
    /// An app delegate that opts in to saving and restoring, as UIKit asks every app to.
    final class OptingIn: ApplicationRestorationDelegate {
        func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
    }

    @MainActor @Test func theReadmePortingSampleSavesTheScrollOffsetThatTheNextLaunchRestores() throws {
        let directory = TemporaryDirectory()
        let configuration = RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop")
        let delegate = OptingIn()
        do {
            let journal = try Journal.open(at: directory.url)
            let manager = RestorationManager(journal: journal, configuration: configuration)
            manager.delegate = delegate
            let list = ThreadListController()
            list.restorationIdentifier = "Threads"
            list.scrollOffset = 412.5
            try manager.preserveState(roots: [list])
            try journal.close()
        }
        let journal = try Journal.open(at: directory.url)
        let manager = RestorationManager(journal: journal, configuration: configuration)
        manager.delegate = delegate
        let list = ThreadListController()
        list.restorationIdentifier = "Threads"
        let report = try manager.restoreState(roots: [list])
        #expect(report.restored.map(\.path) == [RestorationPath("Threads")])
        #expect(report.diagnostics.isEmpty)
        #expect(list.scrollOffset == 412.5)
        try journal.close()
    }
}
