import Foundation
import StateJournal

/// A saved value, readable without the app's types: the tree every entry is made of.
///
/// The coder turns what an object encodes into these values, and any tool can turn an entry back
/// into them with ``RestorableEntry/init(decoding:)`` and render them with ``jsonText(pretty:)``.
public enum RestorableValue: Sendable, Hashable {
    /// No value (an encoded `nil`).
    case null
    /// A Boolean.
    case bool(Bool)
    /// A signed integer; every Swift integer type that fits in 64 signed bits is stored this way.
    case int(Int64)
    /// A floating-point number (`Float` is widened).
    case double(Double)
    /// A string.
    case string(String)
    /// Raw bytes.
    case data(Data)
    /// A point in time, exact to the bit of `Date`.
    case date(Date)
    /// An ordered list.
    case array([RestorableValue])
    /// A string-keyed dictionary; saved with its keys in ascending UTF-8 order.
    case dictionary([String: RestorableValue])
    /// A reference to another restorable object, by its restoration path.
    case reference(RestorationPath)

    /// A short name of the case, as used in error messages: `"int"`, `"string"`, `"reference"`…
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .double: "double"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .array: "array"
        case .dictionary: "dictionary"
        case .reference: "reference"
        }
    }
}
