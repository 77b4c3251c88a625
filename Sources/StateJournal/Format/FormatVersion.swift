/// The version of the on-disk format this library writes and reads.
///
/// It is stored in every segment header and in the manifest. Any change to the bytes changes it,
/// together with the format article and the golden-file test.
enum FormatVersion {
    static let current: UInt16 = 1
}
