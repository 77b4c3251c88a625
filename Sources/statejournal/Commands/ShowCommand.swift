import ArgumentParser
import Foundation
import StateJournal

struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show the state tree at the latest consistent epoch, or as of an epoch or a time.",
        discussion: """
            The header names the epoch the state is as of, and the epoch that last wrote entries at or before it \
            with that epoch's metadata (a restoration marker writes none). Exits 2 when nothing is under --path, \
            naming near paths, and 1 when replay stopped at damage (the state shown is the one replay reaches).
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: "Show the state as of this epoch.")
    var epoch: UInt64?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Show the state as of this time: \(Date.commandLineForms).", valueName: "time"))
    var at: String?

    @Option(help: "Show only paths under this prefix (e.g. Main/Inbox).")
    var path: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if epoch != nil && at != nil { throw ValidationError("Give either --epoch or --at, not both.") }
        if let at { _ = try parseTime(at, option: "--at") }
        if let path { _ = try parsePath(path) }
    }

    func run() throws {
        try reportingErrors {
            let queries = try StoreQueries(store.url)
            let through: EpochInfo? =
                if let epoch { try queries.epoch(epoch) } else if let at {
                    try queries.epoch(at: try parseTime(at, option: "--at"), given: at)
                } else { nil }
            let prefix = try path.map(parsePath)
            let state = try queries.inspector.state(through: through?.epoch, under: prefix)
            let asOf = state.epoch?.epoch
            let writer = queries.epochs.last { $0.epoch <= (asOf ?? 0) && $0.entryCount > 0 }
            if let path, state.entries.isEmpty {
                let whole = try queries.inspector.state(through: asOf)
                throw PathSuggestions.failure(
                    "nothing is under \(path) at epoch \(asOf.map(String.init) ?? "0").", path: path,
                    candidates: whole.entries.keys, store: store.directory)
            }
            if store.json {
                try printJSON(document: [
                    "epoch": .int(asOf), "timestamp": .time(state.epoch?.timestamp),
                    "metadata": .object((state.epoch?.metadata ?? [:]).mapValues(JSON.string)),
                    "writtenBy": .epoch(writer), "path": .string(path),
                    "objects": .object(
                        Dictionary(
                            uniqueKeysWithValues: state.map { ($0.path.description, ValueRendering.entry($0.state)) })),
                    "damage": .string(state.damage?.description),
                ])
            } else {
                try Terminal.withHumanOutput(output, json: false) {
                    if let info = state.epoch {
                        print(Style.bold.apply("Epoch \(info.epoch)") + ", committed \(info.timestamp.iso8601)")
                        if let writer, writer.epoch != info.epoch {
                            let kind = info.metadata["kind"].map { " (\($0))" } ?? ""
                            print(
                                """
                                  epoch \(info.epoch)\(kind) wrote no entries; the state was last written by epoch \
                                \(writer.epoch), committed \(writer.timestamp.iso8601):
                                """
                            )
                        }
                        let shown = writer ?? info
                        for key in shown.metadata.keys.sorted() { print("  \(key): \(shown.metadata[key]!)") }
                    } else {
                        print("No epoch has been committed.")
                    }
                    if let damage = state.damage { print(Style.red.apply("Damage: \(damage)")) }
                    print("")
                    for (path, bytes) in state {
                        let depth = path.components.count - 1
                        print(
                            String(repeating: "  ", count: depth) + Style.cyan.apply(path.description) + "  "
                                + ValueRendering.line(bytes))
                    }
                }
            }
            if state.damage != nil { throw ExitCode(ExitStatus.damage.rawValue) }
        }
    }
}
