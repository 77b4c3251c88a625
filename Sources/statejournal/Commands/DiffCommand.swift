import ArgumentParser
import Foundation
import StateJournal
import StateRestoration

struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff", abstract: "Show the paths added, removed and changed between two epochs.",
        discussion: """
            FROM and TO are epoch numbers or times as log prints them; --at TIME stands for FROM and takes a time \
            before now too (diff STORE --at -5m: what changed in the last five minutes). TO defaults to the latest \
            epoch.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The older epoch: a number, or a time as log prints it.")
    var from: String?

    @Argument(help: "The newer epoch: a number, or a time (default: the latest epoch).")
    var to: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Compare the state as of this time (instead of FROM): \(Date.commandLineForms).", valueName: "time"))
    var at: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if at != nil && to != nil { throw ValidationError("With --at, give at most one epoch: the newer one.") }
        if at == nil && from == nil {
            throw ValidationError("Give the epochs to compare (diff STORE FROM [TO]), or --at TIME.")
        }
        if let at { _ = try parseTime(at, option: "--at") }
    }

    func run() throws {
        try reportingErrors {
            let queries = try StoreQueries(store.url)
            // With --at, the one positional argument is the newer epoch.
            let older: EpochInfo
            let newerText: String?
            if let at {
                older = try queries.epoch(at: try parseTime(at, option: "--at"), given: at)
                newerText = from
            } else {
                older = try queries.epoch(numberOrTime: from!)
                newerText = to
            }
            let newer: EpochInfo
            if let newerText {
                newer = try queries.epoch(numberOrTime: newerText)
            } else if let last = queries.epochs.last {
                newer = last
            } else {
                throw CommandFailure(.usage, "this store holds no epoch yet.")
            }
            let (old, new) = (older.epoch, newer.epoch)
            let oldState = try queries.inspector.state(through: old)
            let newState = try queries.inspector.state(through: new)
            let difference = StateDifference(from: oldState.entries, to: newState.entries)
            if store.json {
                func entries(_ map: [RestorationPath: [UInt8]]) -> JSON {
                    .object(
                        Dictionary(
                            uniqueKeysWithValues: map.map { ($0.key.description, ValueRendering.entry($0.value)) }))
                }
                let changed = difference.changed.map { path, change -> (String, JSON) in
                    let keys = ValueRendering.changedKeys(change.old, change.new).map { keys in
                        JSON.object(
                            keys.mapValues { values in
                                .object([
                                    "old": values.old.map(ValueRendering.typed) ?? .null,
                                    "new": values.new.map(ValueRendering.typed) ?? .null,
                                ])
                            })
                    }
                    return (
                        path.description,
                        .object([
                            "old": ValueRendering.entry(change.old), "new": ValueRendering.entry(change.new),
                            "keys": keys ?? .null,
                        ])
                    )
                }
                try printJSON(document: [
                    "from": .int(old), "to": .int(new), "fromTimestamp": .time(older.timestamp),
                    "toTimestamp": .time(newer.timestamp),
                    "added": entries(difference.added), "removed": entries(difference.removed),
                    "changed": .object(Dictionary(uniqueKeysWithValues: changed)),
                ])
            } else {
                try Terminal.withHumanOutput(output, json: false) { print(Self.text(difference, from: old, to: new)) }
            }
        }
    }

    static func text(_ difference: StateDifference, from: UInt64, to: UInt64) -> String {
        if difference.isEmpty { return "No differences between epoch \(from) and epoch \(to)." }
        var lines: [String] = []
        for path in difference.added.keys.sorted() {
            lines.append(Style.green.apply("+ \(path)") + "  \(ValueRendering.line(difference.added[path]!))")
        }
        for path in difference.removed.keys.sorted() {
            lines.append(Style.red.apply("- \(path)") + "  \(ValueRendering.line(difference.removed[path]!))")
        }
        for path in difference.changed.keys.sorted() {
            let change = difference.changed[path]!
            lines.append(Style.yellow.apply("~ \(path)"))
            if let keys = ValueRendering.changedKeys(change.old, change.new), !keys.isEmpty {
                for key in keys.keys.sorted() {
                    let values = keys[key]!
                    let old = values.old.map { ValueRendering.json($0).compactText } ?? "(absent)"
                    let new = values.new.map { ValueRendering.json($0).compactText } ?? "(absent)"
                    lines.append("    \(key): " + Style.red.apply(old) + " -> " + Style.green.apply(new))
                }
            } else {
                lines.append("    was  \(ValueRendering.line(change.old))")
                lines.append("    now  \(ValueRendering.line(change.new))")
            }
        }
        return lines.joined(separator: "\n")
    }
}
