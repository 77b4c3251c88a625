import Foundation
import StateJournal

/// Renders an entry's state bytes without the app's types.
enum ValueRendering {
    /// The entry as JSON-compatible values: its type and its state.
    static func object(_ bytes: [UInt8]) -> EntryJSON {
        if let text = String(validating: bytes, as: UTF8.self),
            let data = text.data(using: .utf8),
            let value = try? JSONDecoder().decode(JSONValue.self, from: data)
        {
            return EntryJSON(type: "json", state: value)
        }
        if let text = String(validating: bytes, as: UTF8.self) { return EntryJSON(type: "text", state: .string(text)) }
        return EntryJSON(type: "bytes", state: .string(Data(bytes).base64EncodedString()))
    }

    /// A one-line human rendering of the state.
    static func line(_ bytes: [UInt8]) -> String {
        let object = object(bytes)
        return object.state.compactText
    }
}

/// One entry in `--json` output: `type` and `state`.
struct EntryJSON: Codable, Equatable {
    var type: String
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
        case .number(let value): try container.encode(value)
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
