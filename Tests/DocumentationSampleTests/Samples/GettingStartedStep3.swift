// swift-format-ignore-file
// Step 3 of Getting Started (StateRestoration.docc/GettingStarted.md). This file imports exactly
// what the sample imports.
// It keeps the document's formatting, which swift-format would change.
import Foundation
import StateJournal
import StateRestoration

extension DocumentationSamples {
    /// Runs step 3 and returns the controller it saved.
    static func gettingStartedStep3() throws -> NotesController {
        // sample: GettingStarted.md, step 3: save and restore with a manager
        let journal = try Journal.open(at: URL(fileURLWithPath: "/var/lib/notes/state"))
        let manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(bundleVersion: "42", interfaceIdiom: "desktop"))
        let delegate = NotesDelegate()
        manager.delegate = delegate            // held weakly: keep it alive

        let notes = NotesController()
        try manager.restoreState(roots: [notes])     // at launch: decode, then the finish pass

        notes.scrollOffset = 120                     // @Preserved invalidates the controller
        try manager.preserveState(roots: [notes], mode: .incremental)   // encodes only what was invalidated

        try manager.preserveState(roots: [notes])    // the default: encodes everything, writes what changed
        try journal.close()
        // end sample
        return notes
    }
}
