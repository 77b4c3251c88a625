/// The version of the on-disk format this library writes and reads.
///
/// It is stored in every segment header and in the manifest. Any change to the bytes changes it,
/// together with the format article and the golden-file test.
///
/// Version 2 added the synced end to commit records (``CommitRecord/syncedEnd``). This library
/// reads versions 1 and 2 and writes 2; a writer that opens a store of version 1 continues it in a
/// new segment of version 2.
enum FormatVersion {
    static let current: UInt16 = 2
    /// The oldest version this library reads.
    static let oldestReadable: UInt16 = 1
    /// The first version whose commit records carry the synced end.
    static let syncedEndInCommits: UInt16 = 2

    static func isReadable(_ version: UInt16) -> Bool { (oldestReadable...current).contains(version) }

    static var readableDescription: String { "\(oldestReadable) to \(current)" }
}
