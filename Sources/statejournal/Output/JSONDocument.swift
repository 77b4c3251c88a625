import Foundation
import StateJournal

/// The version of every `--json` document's schema, in its `schemaVersion` field. It changes only
/// when a field is removed, renamed or changes type; new fields may appear in the same version.
let jsonSchemaVersion = 1

/// A JSON value as the tool writes it: integers and doubles stay apart, so that nothing is lost on
/// the way out (see the CommandLineJSON article).
enum JSON: Equatable {
    case null
    case bool(Bool)
    /// A signed integer: a JSON number within ±(2^53 − 1), where every JSON reader is exact, and a
    /// string of decimal digits beyond.
    case int(Int64)
    /// An unsigned integer, written as `int` is.
    case uint(UInt64)
    /// A double: always written with a fraction or an exponent (`5.0`, `1e+100`), so that it never
    /// reads as an integer; non-finite values are the strings `"NaN"`, `"Infinity"` and `"-Infinity"`.
    case double(Double)
    case string(String)
    case array([JSON])
    /// An object; its keys are written sorted.
    case object([String: JSON])

    /// The largest magnitude a JSON number may have here (`Number.MAX_SAFE_INTEGER`).
    static let maximumExactInteger: UInt64 = (1 << 53) - 1

    /// `.int`, or `.null` for `nil`.
    static func int<Integer: BinaryInteger>(_ value: Integer?) -> JSON {
        guard let value else { return .null }
        if let signed = Int64(exactly: value) { return .int(signed) }
        return .uint(UInt64(value))
    }

    /// `.string`, or `.null` for `nil`.
    static func string(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }

    /// A commit time: RFC 3339 in UTC with milliseconds, or `.null`.
    static func time(_ date: Date?) -> JSON { date.map { .string($0.iso8601) } ?? .null }

    /// A document: `body` with `schemaVersion` added.
    static func document(_ body: [String: JSON]) -> JSON {
        var body = body
        body["schemaVersion"] = .int(Int64(jsonSchemaVersion))
        return .object(body)
    }

    /// Indented text, two spaces per level, keys sorted, without escaped slashes.
    var text: String {
        var output = ""
        write(to: &output, indent: 0, pretty: true)
        return output
    }

    /// Text on one line.
    var compactText: String {
        var output = ""
        write(to: &output, indent: 0, pretty: false)
        return output
    }

    private func write(to output: inout String, indent: Int, pretty: Bool) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value):
            output += value.magnitude <= Self.maximumExactInteger ? String(value) : "\"\(value)\""
        case .uint(let value):
            output += value <= Self.maximumExactInteger ? String(value) : "\"\(value)\""
        case .double(let value): output += Self.text(of: value)
        case .string(let value): Self.appendString(value, to: &output)
        case .array(let values):
            Self.appendContainer("[", "]", values.count, to: &output, indent: indent, pretty: pretty) { index, output in
                values[index].write(to: &output, indent: indent + 1, pretty: pretty)
            }
        case .object(let values):
            let keys = values.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            Self.appendContainer("{", "}", keys.count, to: &output, indent: indent, pretty: pretty) { index, output in
                Self.appendString(keys[index], to: &output)
                output += pretty ? ": " : ":"
                values[keys[index]]!.write(to: &output, indent: indent + 1, pretty: pretty)
            }
        }
    }

    /// A double as JSON: the shortest text that reads back as the same double, always with a
    /// fraction or an exponent.
    static func text(of value: Double) -> String {
        if value.isNaN { return "\"NaN\"" }
        if value.isInfinite { return value < 0 ? "\"-Infinity\"" : "\"Infinity\"" }
        let text = "\(value)"
        return text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
    }

    private static func appendContainer(
        _ open: String, _ close: String, _ count: Int, to output: inout String, indent: Int, pretty: Bool,
        element: (Int, inout String) -> Void
    ) {
        output += open
        guard count > 0 else {
            output += close
            return
        }
        for index in 0..<count {
            if index > 0 { output += "," }
            if pretty { output += "\n" + String(repeating: "  ", count: indent + 1) }
            element(index, &output)
        }
        if pretty { output += "\n" + String(repeating: "  ", count: indent) }
        output += close
    }

    private static func appendString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\u{2028}" || scalar == "\u{2029}":
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

extension JSON {
    /// One epoch: `epoch`, `timestamp`, `metadata`, `entries`, `bytes`.
    static func epoch(_ info: EpochInfo) -> JSON {
        .object([
            "epoch": .int(info.epoch), "timestamp": .time(info.timestamp),
            "metadata": .object(info.metadata.mapValues(JSON.string)), "entries": .int(info.entryCount),
            "bytes": .int(info.bytes),
        ])
    }

    /// One epoch, or `.null`.
    static func epoch(_ info: EpochInfo?) -> JSON { info.map { epoch($0) } ?? .null }
}

/// Prints a `--json` document: `body` with `schemaVersion`, indented, keys sorted.
func printJSON(document body: [String: JSON]) throws {
    try StandardStream.write(JSON.document(body).text + "\n")
}
