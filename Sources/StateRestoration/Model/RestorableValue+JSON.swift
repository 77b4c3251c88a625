import Foundation
import StateJournal

extension RestorableValue {
    /// The value as JSON text, for tools that show saved state.
    ///
    /// Scalars and containers map to their JSON forms, with dictionary keys sorted. Values JSON has
    /// no form for become one-key objects: `{"$data": "<base64>"}`, `{"$date": "<ISO 8601, UTC, ms>"}`
    /// and `{"$ref": "<restoration path>"}`. Infinite and NaN doubles become the strings
    /// `"Infinity"`, `"-Infinity"` and `"NaN"`.
    ///
    /// - Parameter pretty: Whether to indent nested containers by two spaces per level.
    public func jsonText(pretty: Bool = false) -> String {
        var text = ""
        JSONRendering.append(self, to: &text, pretty: pretty, indent: 0)
        return text
    }
}

enum JSONRendering {
    static func append(_ value: RestorableValue, to text: inout String, pretty: Bool, indent: Int) {
        switch value {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .int(let value): text += String(value)
        case .double(let value):
            if value.isNaN {
                text += "\"NaN\""
            } else if value.isInfinite {
                text += value < 0 ? "\"-Infinity\"" : "\"Infinity\""
            } else {
                text += "\(value)"
            }
        case .string(let value): appendString(value, to: &text)
        case .data(let value): appendTagged("$data", value.base64EncodedString(), to: &text, pretty: pretty)
        case .date(let value): appendTagged("$date", format(value), to: &text, pretty: pretty)
        case .reference(let path): appendTagged("$ref", path.description, to: &text, pretty: pretty)
        case .array(let values):
            appendContainer("[", "]", values.count, to: &text, pretty: pretty, indent: indent) { index, text in
                append(values[index], to: &text, pretty: pretty, indent: indent + 1)
            }
        case .dictionary(let values):
            let keys = values.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            appendContainer("{", "}", keys.count, to: &text, pretty: pretty, indent: indent) { index, text in
                appendString(keys[index], to: &text)
                text += pretty ? ": " : ":"
                append(values[keys[index]]!, to: &text, pretty: pretty, indent: indent + 1)
            }
        }
    }

    static func appendContainer(
        _ open: String, _ close: String, _ count: Int, to text: inout String, pretty: Bool, indent: Int,
        element: (Int, inout String) -> Void
    ) {
        text += open
        guard count > 0 else {
            text += close
            return
        }
        for index in 0..<count {
            if index > 0 { text += "," }
            if pretty { text += "\n" + String(repeating: "  ", count: indent + 1) }
            element(index, &text)
        }
        if pretty { text += "\n" + String(repeating: "  ", count: indent) }
        text += close
    }

    static func appendTagged(_ tag: String, _ value: String, to text: inout String, pretty: Bool) {
        text += "{"
        appendString(tag, to: &text)
        text += pretty ? ": " : ":"
        appendString(value, to: &text)
        text += "}"
    }

    static func appendString(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                text +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
