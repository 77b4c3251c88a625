import ArgumentParser
import Foundation
import StateJournal

struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show the state tree at the latest consistent epoch, or as of an epoch or a time.")

    @OptionGroup var store: StoreOptions

    @Option(help: "Show the state as of this epoch.")
    var epoch: UInt64?

    @Option(help: "Show the state as of this time (RFC 3339, as log prints it, e.g. 2026-11-21T10:00:00.250Z).")
    var at: String?

    @Option(help: "Show only paths under this prefix (e.g. Main/Inbox).")
    var path: String?

    func validate() throws {
        if epoch != nil && at != nil { throw ValidationError("Give either --epoch or --at, not both.") }
        if let at, Date(commandLine: at) == nil {
            throw ValidationError(
                "--at needs an RFC 3339 time as log prints it, such as 2026-11-21T10:00:00.250Z, not \"\(at)\".")
        }
    }

    struct Output: Codable {
        var epoch: UInt64?
        var timestamp: Date?
        var metadata: [String: String]
        var objects: [String: EntryJSON]
        var damage: String?
    }

    func run() throws {
        try reportingErrors {
            let inspector = try StoreInspector(at: store.url)
            let through = try epoch ?? at.flatMap(Date.init(commandLine:)).map { try inspector.epoch(at: $0) }
            let state = try inspector.state(through: through, under: try path.map(parsePath))
            if store.json {
                return try printJSON(
                    Output(
                        epoch: state.epoch?.epoch, timestamp: state.epoch?.timestamp,
                        metadata: state.epoch?.metadata ?? [:],
                        objects: Dictionary(
                            uniqueKeysWithValues: state.map { ($0.path.description, ValueRendering.object($0.state)) }),
                        damage: state.damage?.description))
            }
            if let info = state.epoch {
                print("Epoch \(info.epoch), committed \(info.timestamp.iso8601)")
                for key in info.metadata.keys.sorted() { print("  \(key): \(info.metadata[key]!)") }
            } else {
                print("No epoch has been committed.")
            }
            if let damage = state.damage { print("Damage: \(damage)") }
            print("")
            for (path, bytes) in state {
                let depth = path.components.count - 1
                print(String(repeating: "  ", count: depth) + path.description + "  " + ValueRendering.line(bytes))
            }
        }
    }
}
