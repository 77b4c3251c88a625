import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import StateRestorationService
import Testing

/// Runs the samples that save off the caller's thread: a submitted epoch, a pass in the background,
/// and a service acknowledging a change once it is durable.
@Suite(.timeLimit(.minutes(10)))
struct BackgroundPassRunTests {
    final class SaysYes: ApplicationRestorationDelegate {
        func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
    }

    static func openJournal(_ directory: TemporaryDirectory) throws -> Journal {
        try Journal.open(
            at: URL(fileURLWithPath: directory.appending("store"), isDirectory: true),
            options: JournalOptions(durability: .everyCommit))
    }

    /// A manager over `journal` whose delegate saves and restores everything.
    static func manager(_ journal: Journal, delegate: SaysYes) -> RestorationManager {
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop"))
        manager.delegate = delegate
        return manager
    }

    @Test func theSavedDraftIsInTheEpochTheSubmissionResumesWith() async throws {
        let directory = TemporaryDirectory()
        let journal = try Self.openJournal(directory)
        defer { try? journal.close() }
        let info = try await saveDraft("Dear Ada,", in: journal)
        #expect(info.epoch == 1)
        #expect(journal.lastDurable?.epoch == 1)
        #expect(try journal.state()[RestorationPath("Main", "Draft")] == Array("Dear Ada,".utf8))
    }

    @MainActor
    @Test func saveAfterEditResumesWithTheEpochHoldingTheEdit() async throws {
        let directory = TemporaryDirectory()
        let journal = try Self.openJournal(directory)
        defer { try? journal.close() }
        let delegate = SaysYes()
        let manager = Self.manager(journal, delegate: delegate)
        let editor = Editor()
        try await saveAfterEdit(editor, manager: manager)
        try await saveAfterEdit(editor, manager: manager)
        let entry = try RestorableEntry(decoding: try #require(try journal.state()[RestorationPath("Editor")]))
        #expect(entry.values["cursor"] == .int(2))
        #expect(journal.lastDurable == journal.lastCommitted)
        withExtendedLifetime(delegate) {}
    }

    @MainActor
    @Test func aChangeIsAcknowledgedWithAnEpochThatHoldsIt() async throws {
        let directory = TemporaryDirectory()
        let journal = try Self.openJournal(directory)
        defer { try? journal.close() }
        let delegate = SaysYes()
        let manager = Self.manager(journal, delegate: delegate)
        let editor = Editor()
        let service = StateRestorationService(manager: manager, roots: { [editor] })
        let running = Task { try await service.run() }
        await service.waitUntilRestored()
        let epoch = try await acknowledge({ editor.cursor = 7 }, of: editor, through: service)
        let acknowledged = try #require(epoch)
        #expect(try #require(journal.lastDurable).epoch >= acknowledged)
        let entry = try RestorableEntry(
            decoding: try #require(try journal.state(through: acknowledged)[RestorationPath("Editor")]))
        #expect(entry.values["cursor"] == .int(7))
        running.cancel()
        _ = try? await running.value
        withExtendedLifetime(delegate) {}
    }
}
