import ArgumentParser
import StateJournal

struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact", abstract: "Fold the journal into a checkpoint now (needs the writer lock).")

    @OptionGroup var store: StoreOptions

    @Flag(
        help: """
            Write the checkpoint and delete no history: every epoch stays readable (log, show --epoch, \
            rewind), and only checkpoints beyond the newest two are removed.
            """)
    var keepHistory = false

    func run() throws {
        try reportingErrors {
            // Refuse a directory that holds no store, rather than create one there.
            _ = try JournalReader(at: store.url)
            let progress = Progress()
            progress.update("compacting \(store.directory)…")
            let journal = try Journal.open(at: store.url)
            let report = try keepHistory ? journal.checkpoint() : journal.compact()
            try journal.close()
            progress.finish()
            if store.json {
                return try printJSON(document: [
                    "compacted": .bool(report != nil), "checkpointEpoch": .int(report?.checkpointEpoch),
                    "checkpointFile": .string(report?.checkpointFile), "checkpointBytes": .int(report?.checkpointBytes),
                    "liveEntries": .int(report?.liveEntries),
                    "removedFiles": .array((report?.removedFiles ?? []).map(JSON.string)),
                ])
            }
            guard let report else {
                return print(
                    keepHistory
                        ? "Nothing to do: the newest checkpoint is already as of the latest epoch."
                        : """
                        Nothing to compact: no epoch was committed since the newest checkpoint, and retention \
                        deletes nothing.
                        """
                )
            }
            print(
                """
                Checkpoint \(report.checkpointFile) holds \(report.liveEntries) paths as of epoch \
                \(report.checkpointEpoch) in \(report.checkpointBytes) bytes.
                """
            )
            if !report.removedFiles.isEmpty {
                print(
                    "Removed \(keepHistory ? "as superseded" : "by retention"): \(report.removedFiles.joined(separator: ", "))"
                )
            }
        }
    }
}
