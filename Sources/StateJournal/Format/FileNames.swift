/// The names of a store's files. Sequence numbers are never reused, so no name is ever reused.
enum FileNames {
    static let manifest = "MANIFEST"
    static let lock = "LOCK"
    static let temporarySuffix = ".tmp"
    /// What a process left when it died of a crash signal with a note armed (``CrashNote``).
    static let crashNote = "CRASHNOTE"
    /// The epoch from which retention keeps history whatever its policy (``Journal/holdHistory(from:)``).
    static let historyHold = "HOLD"

    static func segment(_ sequence: UInt64) -> String { "segment-\(hex16(sequence)).sjl" }
    static func checkpoint(_ sequence: UInt64) -> String { "checkpoint-\(hex16(sequence)).lz4" }
    static func quarantine(_ sequence: UInt64, offset: Int64) -> String {
        "damaged-\(hex16(sequence))-at-\(offset).bin"
    }

    /// The sequence number in a segment file's name, or `nil` for any other name.
    static func segmentSequence(_ name: String) -> UInt64? { sequence(in: name, prefix: "segment-", suffix: ".sjl") }
    /// The sequence number in a checkpoint file's name, or `nil` for any other name.
    static func checkpointSequence(_ name: String) -> UInt64? {
        sequence(in: name, prefix: "checkpoint-", suffix: ".lz4")
    }

    private static func sequence(in name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count == prefix.count + 16 + suffix.count else {
            return nil
        }
        return UInt64(name.dropFirst(prefix.count).dropLast(suffix.count), radix: 16)
    }

    private static func hex16(_ value: UInt64) -> String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
