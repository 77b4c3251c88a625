// swift-format-ignore-file
// The README's restoration sample ("State restoration in twenty lines"). This file imports exactly
// what the sample imports, so that the sample compiles with its own imports and no others.
// It keeps the document's formatting, which swift-format would change.
import Foundation
import StateJournal
import StateRestoration

extension DocumentationSamples {
    /// Runs the README's restoration sample (one launch of the app) and returns its restoration report.
    static func readmeRestoration() throws -> RestorationReport {
        // sample: README.md, state restoration in twenty lines
        final class InboxController: RestorableController {
            var restorationIdentifier: String? { "Inbox" }
            @Preserved("selectedMessage") var selectedMessage: String? = nil
        }

        final class MailDelegate: ApplicationRestorationDelegate {
            func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
            func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
        }

        let journal = try Journal.open(at: URL(fileURLWithPath: "/var/lib/mail/state"))
        let manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(bundleVersion: "42", interfaceIdiom: "desktop"))
        let delegate = MailDelegate()
        manager.delegate = delegate                   // held weakly: keep it alive

        let inbox = InboxController()
        let report = try manager.restoreState(roots: [inbox])   // at launch: where the user left off
        print("restored:", inbox.selectedMessage ?? "nothing yet")
        inbox.selectedMessage = "Message-42"          // the user works; @Preserved marks the change
        try manager.preserveState(roots: [inbox])     // one epoch, with only what changed
        try journal.close()
        // end sample
        return report
    }
}
