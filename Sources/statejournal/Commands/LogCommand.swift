import ArgumentParser
import StateJournal

struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "List the retained epochs: number, time, metadata, entries, bytes.")

    @OptionGroup var store: StoreOptions

    func run() throws {
        try reportingErrors {
            let epochs = try StoreInspector(at: store.url).log()
            if store.json { return try printJSON(epochs.map(EpochJSON.init)) }
            let rows = epochs.map { info in
                [
                    String(info.epoch), info.timestamp.iso8601, String(info.entryCount), String(info.bytes),
                    info.metadata.keys.sorted().map { "\($0)=\(info.metadata[$0]!)" }.joined(separator: " "),
                ]
            }
            print(table(["EPOCH", "TIME (UTC)", "ENTRIES", "BYTES", "METADATA"], rows, rightAligned: [0, 2, 3]))
        }
    }
}
