import StateJournal

/// The one-byte tags of the entry encoding (see the article "Entry Encoding").
///
/// These numbers are on disk: never renumber or reuse one; add new tags after the last.
enum ValueTag: UInt8 {
    case null = 0x00
    case `false` = 0x01
    case `true` = 0x02
    case int = 0x03
    case double = 0x04
    case string = 0x05
    case data = 0x06
    case date = 0x07
    case array = 0x08
    case dictionary = 0x09
    case reference = 0x0A
}

/// What kind of object an entry belongs to (the entry's kind byte).
///
/// These numbers are on disk: never renumber or reuse one.
public enum RestorableEntryKind: UInt8, Sendable, Hashable {
    /// A controller of the walked hierarchy.
    case controller = 0
    /// A registered custom object.
    case object = 1
    /// The application coder: the keys the app wrote in
    /// ``ApplicationRestorationDelegate/willEncodeRestorableState(_:)``.
    case application = 2
}

/// The version byte that starts every entry.
enum EntryFormatVersion {
    /// The version this library writes and the newest it reads.
    static let current: UInt8 = 1
}
