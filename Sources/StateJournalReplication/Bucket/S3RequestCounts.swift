import Foundation

/// The requests an ``S3Client`` has sent, by kind, retries included, and the bytes they carried:
/// what an object store's bill counts.
public struct S3RequestCounts: Sendable, Hashable, CustomStringConvertible {
    /// `GET` requests of objects.
    public var gets = 0
    /// `PUT` requests: objects, parts of multipart uploads, the lease.
    public var puts = 0
    /// `HEAD` requests.
    public var heads = 0
    /// `DELETE` requests.
    public var deletes = 0
    /// Listings: `ListObjectsV2` pages (`GET` requests that S3 bills as LIST).
    public var lists = 0
    /// `POST` requests: starting and completing multipart uploads.
    public var posts = 0
    /// Request body bytes sent.
    public var bytesSent: Int64 = 0
    /// Response body bytes received.
    public var bytesReceived: Int64 = 0

    /// Creates counts of nothing.
    public init() {}

    /// Every request counted.
    public var total: Int { gets + puts + heads + deletes + lists + posts }

    /// The requests and bytes counted in `self` and not in `earlier`: what was sent in between.
    public func since(_ earlier: S3RequestCounts) -> S3RequestCounts {
        var delta = S3RequestCounts()
        delta.gets = gets - earlier.gets
        delta.puts = puts - earlier.puts
        delta.heads = heads - earlier.heads
        delta.deletes = deletes - earlier.deletes
        delta.lists = lists - earlier.lists
        delta.posts = posts - earlier.posts
        delta.bytesSent = bytesSent - earlier.bytesSent
        delta.bytesReceived = bytesReceived - earlier.bytesReceived
        return delta
    }

    /// The counts by kind, as `12 requests (8 PUT, 2 GET, 1 LIST, 1 HEAD, 0 DELETE, 0 POST)`.
    public var description: String {
        "\(total) requests (\(puts) PUT, \(gets) GET, \(lists) LIST, \(heads) HEAD, \(deletes) DELETE, \(posts) POST)"
    }

    mutating func record(method: String, listing: Bool, bytesSent sent: Int) {
        switch method {
        case _ where listing: lists += 1
        case "GET": gets += 1
        case "PUT": puts += 1
        case "HEAD": heads += 1
        case "DELETE": deletes += 1
        default: posts += 1
        }
        bytesSent += Int64(sent)
    }
}
