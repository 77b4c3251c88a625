import StateJournal

/// One saved object as a tool sees it: its type, its restoration class and its values, decoded
/// without the app's types.
///
/// This is the inspection entry point for the bytes of a journal entry written by
/// ``RestorationManager``; see the article "Entry Encoding" for the layout.
public struct RestorableEntry: Sendable, Hashable {
    /// Whether the entry belongs to a controller, a custom object or the application coder.
    public var kind: RestorableEntryKind
    /// The fully qualified name of the saved object's type, such as `MailApp.InboxController`.
    /// Empty for the application coder.
    public var typeName: String
    /// The fully qualified name of the object's restoration class, or `nil` when it had none.
    public var restorationClassName: String?
    /// The values the object encoded, by key.
    public var values: [String: RestorableValue]

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - kind: The kind of object.
    ///   - typeName: The object's type name.
    ///   - restorationClassName: Its restoration class name, if any.
    ///   - values: The encoded values.
    public init(
        kind: RestorableEntryKind, typeName: String, restorationClassName: String?,
        values: [String: RestorableValue]
    ) {
        self.kind = kind
        self.typeName = typeName
        self.restorationClassName = restorationClassName
        self.values = values
    }

    /// Decodes the bytes of a journal entry.
    ///
    /// Never crashes on malformed input; it throws instead.
    ///
    /// - Parameter bytes: The state bytes of one path, as a `JournalState` holds them.
    /// - Throws: ``RestorationError`` with code ``RestorationError/Code/unsupportedEntryVersion`` when
    ///   a newer format wrote the entry, or ``RestorationError/Code/corruptEntry`` when the bytes are
    ///   not a valid entry.
    public init(decoding bytes: [UInt8]) throws {
        var reader = EntryReader(bytes)
        let version = try reader.readByte()
        guard version == EntryFormatVersion.current else {
            throw RestorationError(
                .unsupportedEntryVersion,
                """
                The entry has format version \(version); this library reads version \(EntryFormatVersion.current). \
                Update the library to read it.
                """
            )
        }
        let kindByte = try reader.readByte()
        guard let kind = RestorableEntryKind(rawValue: kindByte) else {
            throw reader.corrupt("unknown entry kind \(kindByte)")
        }
        self.kind = kind
        typeName = try reader.readString()
        let className = try reader.readString()
        restorationClassName = className.isEmpty ? nil : className
        guard try reader.readByte() == ValueTag.dictionary.rawValue else {
            throw reader.corrupt("the values are not a dictionary")
        }
        values = try reader.readDictionaryBody(depth: 0)
        guard reader.isAtEnd else { throw reader.corrupt("bytes follow the values") }
    }

    /// The bytes of the entry in the entry encoding: what ``init(decoding:)`` reads back.
    public var encoded: [UInt8] {
        var writer = EntryWriter()
        writer.writeHeader(kind: kind, typeName: typeName, restorationClassName: restorationClassName)
        writer.writeDictionary(values)
        return writer.bytes
    }

    /// The entry as one JSON object: `{"kind": …, "type": …, "restorationClass": …, "values": {…}}`.
    ///
    /// - Parameter pretty: Whether to indent nested containers.
    public func jsonText(pretty: Bool = false) -> String {
        let kindName =
            switch kind {
            case .controller: "controller"
            case .object: "object"
            case .application: "application"
            }
        let object: [String: RestorableValue] = [
            "kind": .string(kindName),
            "type": .string(typeName),
            "restorationClass": restorationClassName.map(RestorableValue.string) ?? .null,
            "values": .dictionary(values),
        ]
        return RestorableValue.dictionary(object).jsonText(pretty: pretty)
    }
}
