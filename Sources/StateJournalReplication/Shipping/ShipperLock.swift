import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A shipper's hold on its store for one replica, for as long as the shipper lives: a second
/// shipper of the same store to the same replica on the same host is refused
/// (``ReplicationError/Code/shipperRunning``) rather than allowed to take the first one's lease
/// (both have the same holder id) and fence it.
///
/// It is an open-file-description lock (`F_OFD_SETLK`) on one byte of the store's `LOCK` file, at
/// an offset far past its end derived from the replica's location and the shipper's holder id (tests
/// that stand two hosts up in one process give them two), so that it never touches the
/// writer's own lock (`flock` on the same file, which Linux keeps apart from these) nor the lock of
/// a shipper of the store to another replica. The kernel drops it when the process ends, however it
/// ends.
final class ShipperLock: @unchecked Sendable {
    // @unchecked Sendable: `descriptor` is set in init and closed once, under `mutex`.
    private var descriptor: Int32
    private let mutex = NSLock()

    /// Linux's `F_OFD_SETLK`, which Glibc's module map does not export.
    private static let ofdSetLock: Int32 = 37

    /// The byte locked for `location`: past 2^40, so never within a `LOCK` file's bytes.
    static func offset(for location: S3Location, holder: String) -> Int64 {
        let digest = Array(SHA256.hash(data: Array("\(holder) \(location.bucket)/\(location.prefix)".utf8)))
        let low = digest.prefix(4).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        return (Int64(1) << 40) + low
    }

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Takes the hold on `store` for `location` and the holder id `holder`; `nil` when the store's `LOCK` file cannot be
    /// opened for writing (a read-only store), when nothing guards against a second shipper.
    ///
    /// - Throws: ``ReplicationError/Code/shipperRunning`` when another process holds it.
    static func acquire(store: URL, location: S3Location, holder: String) throws -> ShipperLock? {
        let path = store.appendingPathComponent("LOCK").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        var request = flock()
        request.l_type = Int16(F_WRLCK)
        request.l_whence = Int16(SEEK_SET)
        request.l_start = off_t(offset(for: location, holder: holder))
        request.l_len = 1
        guard fcntl(descriptor, ofdSetLock, &request) == 0 else {
            let error = errno
            close(descriptor)
            guard error == EAGAIN || error == EACCES else { return nil }
            throw ReplicationError(
                .shipperRunning,
                """
                Another shipper of the store at \(store.path) to \(location) runs on this host (another \
                `statejournal replicate`, or a ReplicationShipper in another process). A second one would take \
                its lease and fence it: stop it first, or ship the store to another prefix.
                """)
        }
        return ShipperLock(descriptor: descriptor)
    }

    /// Gives the hold up (also on deinit).
    func release() {
        mutex.withLock {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    deinit { release() }
}
