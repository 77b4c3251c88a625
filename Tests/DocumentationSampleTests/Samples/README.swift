// swift-format-ignore-file
// The README's sample of the engine ("Using the engine"). This file imports exactly what the sample
// imports, so that the sample compiles with its own imports and no others.
// It keeps the document's formatting, which swift-format would change.
import Foundation
import StateJournal

extension DocumentationSamples {
    /// Runs the README's engine sample and returns what it read and wrote.
    static func readmeEngine() throws -> (restored: JournalState, info: EpochInfo, then: JournalState) {
        // sample: README.md, using the engine
        let journal = try Journal.open(at: URL(fileURLWithPath: "/var/lib/notes/state"),
                                       options: JournalOptions(durability: .interval(seconds: 1)))
        let restored = journal.recoveredState            // entries as of the last commit, and any damage

        let encodedInboxState = Array(#"{"selected":"Message-42"}"#.utf8)   // the app's own bytes
        let epoch = try journal.beginEpoch()
        try epoch.put(RestorationPath("Main", "Inbox"), encodedInboxState)
        try epoch.remove(RestorationPath("Main", "Compose"))
        let info = try epoch.commit(metadata: ["bundleVersion": "42"])

        let then = try journal.state(through: journal.history()[0].epoch)   // time travel to the oldest epoch kept
        try journal.close()
        // end sample
        return (restored, info, then)
    }
}
