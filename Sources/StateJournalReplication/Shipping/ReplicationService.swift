import Foundation
import ServiceLifecycle
import StateJournal

/// A swift-service-lifecycle `Service` that ships a store while the app runs: add it to the app's
/// `ServiceGroup` beside the service that writes the store.
///
/// On graceful shutdown it runs one last pass, so that every epoch committed before the shutdown
/// is in the replica, and returns. Failures that retrying cannot fix (another store's prefix,
/// refused credentials, a missing bucket) end it with their ``ReplicationError``.
public struct ReplicationService: Service, Sendable {
    /// The shipper the service runs.
    public let shipper: ReplicationShipper

    /// Creates a service that runs `shipper`.
    public init(shipper: ReplicationShipper) {
        self.shipper = shipper
    }

    /// Creates a service that ships the store in `store` to `location`.
    public init(
        store: URL, to location: S3Location, configuration: S3Configuration,
        options: ReplicationOptions = ReplicationOptions()
    ) {
        self.init(
            shipper: ReplicationShipper(store: store, to: location, configuration: configuration, options: options))
    }

    /// Ships until graceful shutdown or cancellation, then ships what is committed and returns.
    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await shipper.run()
        }
    }
}
