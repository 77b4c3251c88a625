/// The version of the on-disk format this library writes and reads.
///
/// It is stored in every segment header and in the manifest. Any change to the bytes changes it,
/// together with the format article and the golden-file test.
///
/// Version 2 added the synced end to commit records (``CommitRecord/syncedEnd``). Version 3 gave
/// records a varint length (``RecordFraming``) and added the compact commit record
/// (``CompactCommit``), whose state is a patch against the path's previous version
/// (``StatePatch``). This library reads versions 1 to 3 and writes 3; a writer that opens a store
/// of version 1 or 2 continues it in a new segment of version 3.
enum FormatVersion {
    static let current: UInt16 = 3
    /// The oldest version this library reads.
    static let oldestReadable: UInt16 = 1
    /// The first version whose commit records carry the synced end.
    static let syncedEndInCommits: UInt16 = 2
    /// The first version whose record headers store the length as a varint, and whose segments may
    /// hold compact commit records.
    static let compactRecords: UInt16 = 3

    static func isReadable(_ version: UInt16) -> Bool { (oldestReadable...current).contains(version) }

    static var readableDescription: String { "\(oldestReadable) to \(current)" }
}
