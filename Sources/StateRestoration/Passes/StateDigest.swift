import StateJournal

/// A 128-bit fingerprint of an entry's bytes, kept per path so that a pass writes only what changed.
///
/// Not cryptographic: two independent 64-bit multiply-rotate lanes plus the length. An accidental
/// collision (which would skip writing one changed object) has a probability of about 2⁻¹²⁸.
struct StateDigest: Hashable {
    let count: Int
    let first: UInt64
    let second: UInt64

    /// A digest no entry has: the digest of a path whose bytes the manager does not trust, so that
    /// the next full pass writes it again (or removes it).
    static let unknown = StateDigest(count: -1, first: 0, second: 0)

    private init(count: Int, first: UInt64, second: UInt64) {
        self.count = count
        self.first = first
        self.second = second
    }

    init(_ bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { StateDigest($0) }
    }

    init(_ raw: UnsafeRawBufferPointer) {
        var first: UInt64 = 0x9E37_79B9_7F4A_7C15
        var second: UInt64 = 0xC2B2_AE3D_27D4_EB4F ^ UInt64(raw.count)
        var offset = 0
        while offset + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            first = Self.rotate(first ^ word, 29) &* 0x9FB2_1C65_1E98_DF25
            second = Self.rotate(second &+ word, 37) &* 0xD6E8_FEB8_6659_FD93
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < raw.count {
            tail |= UInt64(raw[offset]) << shift
            shift += 8
            offset += 1
        }
        first = Self.rotate(first ^ tail, 29) &* 0x9FB2_1C65_1E98_DF25
        second = Self.rotate(second &+ tail, 37) &* 0xD6E8_FEB8_6659_FD93
        self.count = raw.count
        self.first = Self.finalize(first)
        self.second = Self.finalize(second)
    }

    private static func rotate(_ value: UInt64, _ amount: UInt64) -> UInt64 {
        (value << amount) | (value >> (64 - amount))
    }

    private static func finalize(_ value: UInt64) -> UInt64 {
        var value = value
        value ^= value >> 33
        value &*= 0xFF51_AFD7_ED55_8CCD
        value ^= value >> 33
        value &*= 0xC4CE_B9FE_1A85_EC53
        value ^= value >> 33
        return value
    }
}

/// The digest of every entry in the journal's latest state, shared by reference so that a pass can
/// read it and the manager update it in place, without copying it.
final class DigestTable {
    // Read for every object a pass encodes; exempt from dynamic exclusivity checks (see
    // PreservationPass).
    @exclusivity(unchecked) var digests: [RestorationPath: StateDigest] = [:]

    subscript(path: RestorationPath) -> StateDigest? {
        get { digests[path] }
        set { digests[path] = newValue }
    }
}
