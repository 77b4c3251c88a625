#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The random 128-bit identifier written into every file of one store, so that a segment or
/// checkpoint copied elsewhere still says which store it belongs to.
struct StoreID: Hashable, Sendable, CustomStringConvertible {
    var bytes: [UInt8]

    init(bytes: [UInt8]) {
        precondition(bytes.count == 16)
        self.bytes = bytes
    }

    static func random() -> StoreID {
        var generator = SystemRandomNumberGenerator()
        return StoreID(bytes: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    var description: String {
        bytes.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
    }
}
