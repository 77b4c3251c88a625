// swift-format-ignore-file
// The sample of the StateJournal module's overview (StateJournal.docc/StateJournal.md). This file
// imports exactly what the sample imports.
// It keeps the document's formatting, which swift-format would change.
import Foundation
import StateJournal

extension DocumentationSamples {
    /// Runs the overview's sample and returns what it read and wrote.
    static func stateJournalOverview() throws -> (inbox: [UInt8]?, bytes: [UInt8], info: EpochInfo, journal: Journal) {
        // sample: StateJournal.md, overview
        let journal = try Journal.open(at: URL(fileURLWithPath: "/var/lib/myapp/state"))
        let restored = journal.recoveredState                  // the state as of the last commit
        let inbox = restored[RestorationPath("Main", "Inbox")]  // one path's state bytes, or nil
        for (path, state) in restored { print(path, state.count) } // every path, parents first

        let bytes = Array(#"{"selected":"Message-42"}"#.utf8)   // the app's own encoding
        let epoch = try journal.beginEpoch()
        try epoch.put(RestorationPath("Main", "Inbox"), bytes)
        try epoch.remove(RestorationPath("Main", "Compose"))
        let info = try epoch.commit(metadata: ["bundleVersion": "42"])   // the epoch's number, time and size
        // end sample
        return (inbox, bytes, info, journal)
    }
}
