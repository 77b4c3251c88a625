import Foundation
import StateJournal
import StateRestoration

/// Renders an entry's state bytes without the app's types: entries in the restoration layer's
/// self-describing encoding show their type and keyed values; other bytes show as JSON, text or
/// base64.
enum ValueRendering {
    /// The entry as JSON-compatible values.
    static func object(_ bytes: [UInt8]) -> EntryJSON {
        if let entry = try? RestorableEntry(decoding: bytes) {
            return EntryJSON(
                type: entry.typeName, restorationClass: entry.restorationClassName, state: json(.dictionary(entry.values)))
        }
        if let text = String(validating: bytes, as: UTF8.self) {
            if let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) {
                return EntryJSON(type: "json", state: value)
            }
            return EntryJSON(type: "text", state: .string(text))
        }
        return EntryJSON(type: "bytes", state: .string(Data(bytes).base64EncodedString()))
    }

    /// A one-line human rendering: the type, then the state as compact JSON.
    static func line(_ bytes: [UInt8]) -> String {
        let object = object(bytes)
        return (object.type == "json" || object.type == "text" || object.type == "bytes" ? "" : object.type + " ")
            + object.state.compactText
    }

    /// The keys whose values differ between two entries, with the old and new values, when both are
    /// restoration entries.
    static func changedKeys(_ old: [UInt8], _ new: [UInt8]) -> [String: (old: JSONValue?, new: JSONValue?)]? {
        guard let before = try? RestorableEntry(decoding: old), let after = try? RestorableEntry(decoding: new) else { return nil }
        var changes: [String: (old: JSONValue?, new: JSONValue?)] = [:]
        for key in Set(before.values.keys).union(after.values.keys) where before.values[key] != after.values[key] {
            changes[key] = (before.values[key].map(json), after.values[key].map(json))
        }
        return changes
    }

    static func json(_ value: RestorableValue) -> JSONValue {
        (try? JSONDecoder().decode(JSONValue.self, from: Data(value.jsonText().utf8))) ?? .string(value.jsonText())
    }
}

/// One entry in `--json` output: `type`, `restorationClass` (when the entry names one) and `state`.
struct EntryJSON: Codable, Equatable {
    var type: String
    var restorationClass: String?
    var state: JSONValue
}

/// Any JSON value.
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
            if value.rounded() == value && abs(value) < 1e15 { try container.encode(Int64(value)) } else { try container.encode(value) }
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
