import Foundation
import StateJournal
import StateRestoration

/// Renders an entry's state bytes without the app's types: entries in the restoration layer's
/// self-describing encoding show their type and keyed values; other bytes show as JSON, text or
/// base64.
enum ValueRendering {
    /// How an entry's bytes are encoded, as `--json` names it in `encoding`.
    enum Encoding: String {
        /// The restoration layer's self-describing encoding.
        case restoration
        /// UTF-8 text that is a JSON document.
        case json
        /// Other UTF-8 text.
        case text
        /// Anything else.
        case bytes
    }

    /// The entry as a `--json` value: `encoding`, `kind`, `type`, `restorationClass` and `state`
    /// (every key present, `null` when it does not apply). A restoration entry's `state` maps each
    /// key to a typed value; any other entry's `state` is a string holding its bytes exactly: the
    /// text itself for `json` and `text`, base64 for `bytes`.
    static func entry(_ bytes: [UInt8]) -> JSON {
        if let entry = try? RestorableEntry(decoding: bytes) {
            return .object([
                "encoding": .string(Encoding.restoration.rawValue),
                "kind": .string(kindName(entry.kind)),
                "type": .string(entry.typeName),
                "restorationClass": .string(entry.restorationClassName),
                "state": .object(entry.values.mapValues(typed)),
            ])
        }
        let (encoding, state): (Encoding, String)
        if let text = String(validating: bytes, as: UTF8.self) {
            let isJSON = (try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)) != nil
            (encoding, state) = (isJSON ? .json : .text, text)
        } else {
            (encoding, state) = (.bytes, Data(bytes).base64EncodedString())
        }
        return .object([
            "encoding": .string(encoding.rawValue), "kind": .null, "type": .null, "restorationClass": .null,
            "state": .string(state),
        ])
    }

    /// The entry as plain JSON-compatible values, for display: `type` is the type name, or `json`,
    /// `text` or `bytes`, and `state` the decoded state, with numbers as doubles. Not lossless:
    /// `--json` uses ``entry(_:)``.
    static func object(_ bytes: [UInt8]) -> EntryJSON {
        if let entry = try? RestorableEntry(decoding: bytes) {
            return EntryJSON(
                type: entry.typeName, restorationClass: entry.restorationClassName,
                state: json(.dictionary(entry.values)))
        }
        if let text = String(validating: bytes, as: UTF8.self) {
            if let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) {
                return EntryJSON(type: "json", state: value)
            }
            return EntryJSON(type: "text", state: .string(text))
        }
        return EntryJSON(type: "bytes", state: .string(Data(bytes).base64EncodedString()))
    }

    /// A restoration value as a plain JSON value, for display.
    static func json(_ value: RestorableValue) -> JSONValue {
        (try? JSONDecoder().decode(JSONValue.self, from: Data(value.jsonText().utf8))) ?? .string(value.jsonText())
    }

    static func kindName(_ kind: RestorableEntryKind) -> String {
        switch kind {
        case .controller: "controller"
        case .object: "object"
        case .application: "application"
        }
    }

    /// A restoration value as `{"type": T, "value": V}`: every value keeps its type, integers are
    /// exact, doubles stay doubles, `null` stays, and dates keep every bit.
    static func typed(_ value: RestorableValue) -> JSON {
        func tagged(_ type: String, _ value: JSON, _ extra: [String: JSON] = [:]) -> JSON {
            .object(extra.merging(["type": .string(type), "value": value]) { $1 })
        }
        switch value {
        case .null: return tagged("null", .null)
        case .bool(let value): return tagged("bool", .bool(value))
        case .int(let value): return tagged("int", .int(value))
        case .double(let value): return tagged("double", .double(value))
        case .string(let value): return tagged("string", .string(value))
        case .data(let value): return tagged("data", .string(value.base64EncodedString()))
        case .date(let value):
            return tagged(
                "date", .string(value.rfc3339Microseconds),
                ["timeIntervalSinceReferenceDate": .double(value.timeIntervalSinceReferenceDate)])
        case .reference(let path): return tagged("reference", .string(path.description))
        case .array(let values): return tagged("array", .array(values.map(typed)))
        case .dictionary(let values): return tagged("dictionary", .object(values.mapValues(typed)))
        }
    }

    /// A one-line human rendering: the type, then the state as compact JSON (the `timeline` page
    /// shows states the same way).
    static func line(_ bytes: [UInt8]) -> String {
        let object = object(bytes)
        return (object.type == "json" || object.type == "text" || object.type == "bytes" ? "" : object.type + " ")
            + object.state.compactText
    }

    /// The keys whose values differ between two entries, with the old and new values (`nil` when
    /// the key is absent), when both are restoration entries.
    static func changedKeys(_ old: [UInt8], _ new: [UInt8]) -> [String: (old: RestorableValue?, new: RestorableValue?)]?
    {
        guard let before = try? RestorableEntry(decoding: old), let after = try? RestorableEntry(decoding: new) else {
            return nil
        }
        var changes: [String: (old: RestorableValue?, new: RestorableValue?)] = [:]
        for key in Set(before.values.keys).union(after.values.keys) where before.values[key] != after.values[key] {
            changes[key] = (before.values[key], after.values[key])
        }
        return changes
    }
}

extension Date {
    /// RFC 3339 in UTC with microseconds, for dates in saved state (commit times use ``iso8601``).
    var rfc3339Microseconds: String {
        guard let microseconds = Int64(exactly: (timeIntervalSince1970 * 1_000_000).rounded(.down)) else {
            return "\(self)"
        }
        let (seconds, fraction) = microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        let whole = fraction < 0 ? seconds - 1 : seconds
        let text = Date(timeIntervalSince1970: Double(whole)).formatted(.iso8601)
        return String(text.dropLast()) + String(format: ".%06dZ", (fraction + 1_000_000) % 1_000_000)
    }
}

/// An entry as plain values, for display: `type`, `restorationClass` (when the entry names one) and
/// `state`.
struct EntryJSON: Codable, Equatable {
    var type: String
    var restorationClass: String?
    var state: JSONValue
}

/// Any JSON value, with every number a double: for display, not for `--json` (see ``JSON``).
enum JSONValue: Codable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value.rounded() == value && abs(value) < 1e15 {
                try container.encode(Int64(value))
            } else {
                try container.encode(value)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Compact JSON text.
    var compactText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }
}
