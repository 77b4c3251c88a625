import ArgumentParser
import Foundation
import StateJournal

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Show every retained epoch that wrote one path, with what it wrote.",
        discussion: "Exits 2, naming near paths, when no retained epoch wrote the path.")

    @OptionGroup var store: StoreOptions

    @Argument(help: "The restoration path, components separated by / (escape / and \\ with \\).")
    var path: String

    @OptionGroup var output: OutputOptions

    func validate() throws { _ = try parsePath(path) }

    func run() throws {
        try reportingErrors {
            let queries = try StoreQueries(store.url)
            let rows = try queries.inspector.history(of: try parsePath(path))
            if rows.isEmpty {
                throw PathSuggestions.failure(
                    "no retained epoch wrote \(path); \(queries.range).", path: path,
                    candidates: try queries.allPaths(),
                    store: store.directory)
            }
            if store.json {
                return try printJSON(document: [
                    "path": .string(path),
                    "epochs": .array(
                        rows.map { row in
                            .object([
                                "epoch": .int(row.epoch.epoch), "timestamp": .time(row.epoch.timestamp),
                                "removed": .bool(row.state == nil),
                                "value": row.state.map(ValueRendering.entry) ?? .null,
                            ])
                        }),
                ])
            }
            try Terminal.withHumanOutput(output, json: false) {
                print(
                    table(
                        ["EPOCH", "TIME (UTC)", "STATE"],
                        rows.map {
                            [
                                String($0.epoch.epoch), $0.epoch.timestamp.iso8601,
                                $0.state.map(ValueRendering.line) ?? "(removed)",
                            ]
                        },
                        rightAligned: [0], styles: [0: .yellow, 1: .cyan]))
            }
        }
    }
}
