import ArgumentParser
import StateJournal

struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff", abstract: "Show the paths added, removed and changed between two epochs.")

    @OptionGroup var store: StoreOptions

    @Argument(help: "The older epoch.")
    var from: UInt64

    @Argument(help: "The newer epoch.")
    var to: UInt64

    struct Change: Codable {
        var old: EntryJSON
        var new: EntryJSON
        /// For restoration entries: each changed key with its old and new value (null when absent).
        var keys: [String: KeyChange]?
    }

    struct KeyChange: Codable {
        var old: JSONValue?
        var new: JSONValue?
    }

    struct Output: Codable {
        var from: UInt64
        var to: UInt64
        var added: [String: EntryJSON]
        var removed: [String: EntryJSON]
        var changed: [String: Change]
    }

    func run() throws {
        try reportingErrors {
            let difference = try StoreInspector(at: store.url).difference(from: from, to: to)
            if store.json {
                return try printJSON(
                    Output(
                        from: from, to: to,
                        added: Dictionary(uniqueKeysWithValues: difference.added.map { ($0.key.description, ValueRendering.object($0.value)) }),
                        removed: Dictionary(uniqueKeysWithValues: difference.removed.map { ($0.key.description, ValueRendering.object($0.value)) }),
                        changed: Dictionary(
                            uniqueKeysWithValues: difference.changed.map {
                                (
                                    $0.key.description,
                                    Change(
                                        old: ValueRendering.object($0.value.old), new: ValueRendering.object($0.value.new),
                                        keys: ValueRendering.changedKeys($0.value.old, $0.value.new)?.mapValues { KeyChange(old: $0.old, new: $0.new) })
                                )
                            })))
            }
            if difference.isEmpty { return print("No differences between epoch \(from) and epoch \(to).") }
            for path in difference.added.keys.sorted() { print("+ \(path)  \(ValueRendering.line(difference.added[path]!))") }
            for path in difference.removed.keys.sorted() { print("- \(path)  \(ValueRendering.line(difference.removed[path]!))") }
            for path in difference.changed.keys.sorted() {
                let change = difference.changed[path]!
                print("~ \(path)")
                if let keys = ValueRendering.changedKeys(change.old, change.new), !keys.isEmpty {
                    for key in keys.keys.sorted() {
                        let values = keys[key]!
                        print("    \(key): \(values.old?.compactText ?? "(absent)") -> \(values.new?.compactText ?? "(absent)")")
                    }
                } else {
                    print("    was  \(ValueRendering.line(change.old))")
                    print("    now  \(ValueRendering.line(change.new))")
                }
            }
        }
    }
}
