import ArgumentParser
import Foundation
import StateJournal

struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "List the retained epochs: number, time, entries, bytes, metadata.",
        discussion: """
            Oldest first. METADATA is key=value pairs separated by spaces; a value that is empty or holds a space, \
            a quote, an equals sign, a backslash or a control character is in double quotes, with \\" \\\\ \\n \\t \
            escapes (logfmt), so that a tool can split it.
            """)

    @OptionGroup var store: StoreOptions

    @Option(
        name: [.customShort("n"), .customLong("max-count")], help: "Only the N most recent of the selected epochs.")
    var count: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Only epochs committed at or after this time (\(Date.commandLineForms)).", valueName: "time")
    )
    var since: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Only epochs committed at or before this time.", valueName: "time"))
    var until: String?

    @Option(help: "Only epochs that wrote or removed a path under this prefix (e.g. Main/Inbox).")
    var path: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let count, count < 0 { throw ValidationError("-n takes a count of 0 or more, not \(count).") }
        if let since { _ = try parseTime(since, option: "--since") }
        if let until { _ = try parseTime(until, option: "--until") }
        if let path { _ = try parsePath(path) }
    }

    func run() throws {
        try reportingErrors {
            let inspector = try StoreInspector(at: store.url)
            var epochs = try inspector.log()
            func milliseconds(_ date: Date) -> Double { (date.timeIntervalSince1970 * 1000).rounded() }
            if let since {
                let limit = milliseconds(try parseTime(since, option: "--since"))
                epochs.removeAll { milliseconds($0.timestamp) < limit }
            }
            if let until {
                let limit = milliseconds(try parseTime(until, option: "--until"))
                epochs.removeAll { milliseconds($0.timestamp) > limit }
            }
            if let path {
                let prefix = try parsePath(path)
                var touching = Set<UInt64>()
                // The paths under the prefix that are present: removing every path touches the
                // prefix only when some are.
                var present = Set<RestorationPath>()
                try inspector.reader.forEachEpoch { info, changes in
                    var touches = false
                    for change in changes {
                        switch change {
                        case .put(let changed, _) where changed.hasPrefix(prefix):
                            present.insert(changed)
                            touches = true
                        case .remove(let changed) where changed.hasPrefix(prefix):
                            present.remove(changed)
                            touches = true
                        case .removeAll:
                            touches = touches || !present.isEmpty
                            present.removeAll()
                        default: break
                        }
                    }
                    if touches { touching.insert(info.epoch) }
                    return true
                }
                epochs.removeAll { !touching.contains($0.epoch) }
            }
            if let count { epochs = Array(epochs.suffix(count)) }
            if store.json { return try printJSON(document: ["epochs": .array(epochs.map { JSON.epoch($0) })]) }
            try Terminal.withHumanOutput(output, json: false) {
                let rows = epochs.map { info in
                    [
                        String(info.epoch), info.timestamp.iso8601, String(info.entryCount), String(info.bytes),
                        Self.logfmt(info.metadata),
                    ]
                }
                print(
                    table(
                        ["EPOCH", "TIME (UTC)", "ENTRIES", "BYTES", "METADATA"], rows, rightAligned: [0, 2, 3],
                        styles: [0: .yellow, 1: .cyan]))
            }
        }
    }

    /// Metadata as logfmt: `key=value` pairs, sorted by key; a value that would not split cleanly
    /// is quoted with backslash escapes.
    static func logfmt(_ metadata: [String: String]) -> String {
        metadata.keys.sorted().map { key in "\(quoted(key))=\(quoted(metadata[key]!))" }.joined(separator: " ")
    }

    static func quoted(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && !text.unicodeScalars.contains { scalar in
                scalar == " " || scalar == "\"" || scalar == "=" || scalar == "\\" || scalar.value < 0x20
                    || scalar.value == 0x7F
            }
        if plain { return text }
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
