import ArgumentParser
import Foundation
import StateJournal

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Show every retained epoch that wrote one path, with what it wrote.")

    @OptionGroup var store: StoreOptions

    @Argument(help: "The restoration path, components separated by / (escape / and \\ with \\).")
    var path: String

    struct Row: Codable {
        var epoch: UInt64
        var timestamp: Date
        var removed: Bool
        var value: EntryJSON?
    }

    func run() throws {
        try reportingErrors {
            let rows = try StoreInspector(at: store.url).history(of: try parsePath(path))
            if store.json {
                return try printJSON(
                    rows.map { Row(epoch: $0.epoch.epoch, timestamp: $0.epoch.timestamp, removed: $0.state == nil, value: $0.state.map(ValueRendering.object)) })
            }
            if rows.isEmpty { return print("No retained epoch wrote \(path).") }
            print(
                table(
                    ["EPOCH", "TIME (UTC)", "STATE"],
                    rows.map { [String($0.epoch.epoch), $0.epoch.timestamp.iso8601, $0.state.map(ValueRendering.line) ?? "(removed)"] },
                    rightAligned: [0]))
        }
    }
}
