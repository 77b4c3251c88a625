import Foundation
import ServiceLifecycle

/// A swift-service-lifecycle `Service` that keeps a local store up to date with a replica while the
/// app runs: add it to the app's `ServiceGroup` beside the services that read the store.
///
/// On graceful shutdown it abandons a generation it is applying (the store stays as it was),
/// releases the store's writer lock and returns. Failures that retrying cannot fix (another store
/// in the directory, refused credentials, a missing bucket) end it with their ``ReplicationError``.
public struct ReplicaFollowerService: Service, Sendable {
    /// The follower the service runs.
    public let follower: ReplicaFollower

    /// Creates a service that runs `follower`.
    public init(follower: ReplicaFollower) {
        self.follower = follower
    }

    /// Creates a service that follows the replica at `location` into `directory`.
    public init(
        from location: S3Location, into directory: URL, configuration: S3Configuration,
        options: ReplicaFollower.Options = ReplicaFollower.Options()
    ) {
        self.init(
            follower: ReplicaFollower(from: location, into: directory, configuration: configuration, options: options))
    }

    /// Follows until graceful shutdown or cancellation.
    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await follower.run()
        }
    }
}
