import Foundation
import Testing

@testable import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif

extension GatewayTests {
    /// The fault proxy the failover tests put between each client and the gateway, against the
    /// real gateway.
    @Suite struct FaultProxyTests {
        @Test func requestsThroughAPassingProxySucceedAndAreCountedByMethodExactly() async throws {
            let gateway = try Gateway.required()
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let client = S3Client(configuration: proxy.configuration(for: gateway))
                let bucket = try await gateway.freshBucket(client)
                for index in 0..<3 {
                    try await client.put(
                        bucket: bucket, key: "k/\(index)", body: Array(repeating: 1, count: 100 * index))
                }
                #expect(try await client.get(bucket: bucket, key: "k/1") == Array(repeating: 1, count: 100))
                #expect(try await client.get(bucket: bucket, key: "k/missing") == nil)
                #expect(try await client.list(bucket: bucket, prefix: "k/").map(\.key) == ["k/0", "k/1", "k/2"])
                let head = try await client.send("HEAD", bucket: bucket, key: "k/2", accept: [200])
                #expect(head.headers["content-length"] == "200")
                try await client.delete(bucket: bucket, key: "k/0")
                // Two parts: POST to start, a PUT for each part, POST to complete.
                let large = [UInt8](repeating: 7, count: S3Client.multipartPartSize + 1)
                try await client.putMultipart(bucket: bucket, key: "large", body: large)
                #expect(try await client.get(bucket: bucket, key: "large") == large)

                let counts = try await proxy.counts()
                #expect(counts.byMethod == ["PUT": 6, "GET": 4, "HEAD": 1, "DELETE": 1, "POST": 2])
                #expect(counts.requests.count == client.requestsSent, "the client's count, retries included")
                #expect(counts.requests.allSatisfy { $0.forwarded })
                #expect(counts.count(method: "PUT", path: "/\(bucket)", query: false) == 1)
                #expect(counts.count(method: "PUT", path: "/\(bucket)/k/*") == 3)
                #expect(counts.count(method: "PUT", path: "/\(bucket)/large", query: true) == 2)
                #expect(counts.count(method: "GET", path: "/\(bucket)", query: true) == 1)
                #expect(counts.count(path: "/\(bucket)/large") == 5)
                #expect(counts.reset == 0)
                #expect(counts.accepted >= 1)
            }
        }

        @Test func requestsOnOneKeepAliveConnectionAreFoundByTheirFramingNotByTheirBodies() async throws {
            let gateway = try Gateway.required()
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                // Bodies that hold request lines, one sized by Content-Length and one chunked, sent
                // in one write with the requests around them.
                let inner = "GET /inside-a-body HTTP/1.1\r\nHost: x\r\n\r\n"
                let chunk = "DELETE /inside-a-chunk HTTP/1.1\r\n\r\n"
                let hexLength = String(chunk.utf8.count, radix: 16)
                let text =
                    "PUT /sized HTTP/1.1\r\nHost: x\r\nContent-Length: \(inner.utf8.count)\r\n\r\n\(inner)"
                    + "\r\nPOST /chunked?uploads HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "\(hexLength);name=value\r\n\(chunk)\r\n0\r\nTrailer: 1\r\n\r\n"
                    + "HEAD /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                _ = try exchangeRaw(Array(text.utf8), port: proxy.port)
                let counts = try await proxy.counts()
                #expect(
                    counts.requests.map { "\($0.method) \($0.target)" } == [
                        "PUT /sized", "POST /chunked?uploads", "HEAD /last",
                    ])
                #expect(counts.accepted == 1)
            }
        }

        @Test func aCutProxyFailsRequestsAsUnavailableUntilItHeals() async throws {
            let gateway = try Gateway.required()
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let retry = RetryPolicy(attempts: 3, baseDelay: .milliseconds(10))
                let client = S3Client(configuration: proxy.configuration(for: gateway, retry: retry))
                let bucket = try await gateway.freshBucket(client)
                try await client.put(bucket: bucket, key: "lease", body: [1])
                try await proxy.set(.cut)
                try await proxy.zero()
                let sent = client.requestsSent
                let error = await #expect(throws: ReplicationError.self) {
                    _ = try await client.get(bucket: bucket, key: "lease")
                }
                #expect(error?.code == .unavailable)
                #expect(client.requestsSent - sent == retry.attempts)
                let cut = try await proxy.counts()
                // Each attempt is a new connection, reset before a byte of it is read.
                #expect(cut.accepted == retry.attempts, "\(cut)")
                #expect(cut.reset == cut.accepted)
                #expect(cut.requests.isEmpty)

                try await proxy.set(.pass)
                #expect(try await client.get(bucket: bucket, key: "lease") == [1])
                try await client.put(bucket: bucket, key: "lease", body: [2])
                #expect(try await client.get(bucket: bucket, key: "lease") == [2])
            }
        }

        @Test func aBlackholedReadEndsByAShortMinimumRateWindowWithoutARetry() async throws {
            let gateway = try Gateway.required()
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let retry = RetryPolicy(attempts: 3, baseDelay: .milliseconds(10))
                let minimumRate = MinimumTransferRate(bytesPerSecond: 1024, window: .seconds(1))
                let client = S3Client(
                    configuration: proxy.configuration(for: gateway, retry: retry, minimumRate: minimumRate))
                let bucket = try await gateway.freshBucket(client)
                try await client.put(bucket: bucket, key: "lease", body: [1])
                try await proxy.set(.blackhole)
                try await proxy.zero()
                let error = await #expect(throws: ReplicationError.self) {
                    _ = try await client.get(bucket: bucket, key: "lease")
                }
                #expect(error?.code == .tooSlow)
                let silent = try await proxy.counts()
                #expect(silent.requests == [.init(method: "GET", target: "/\(bucket)/lease", forwarded: false)])
                #expect(silent.reset == 0)

                try await proxy.set(.pass)
                #expect(try await client.get(bucket: bucket, key: "lease") == [1])
            }
        }

        @Test func aBlackholedUploadEndsByTheIdleTimeoutAsUnavailable() async throws {
            let gateway = try Gateway.required()
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                // An upload's rate is measured from its response, which never comes: the session's
                // idle timeout of 30 seconds ends each attempt.
                let retry = RetryPolicy(attempts: 1)
                let client = S3Client(configuration: proxy.configuration(for: gateway, retry: retry))
                let bucket = try await gateway.freshBucket(client)
                try await proxy.set(.blackhole)
                let error = await #expect(throws: ReplicationError.self) {
                    try await client.put(bucket: bucket, key: "lease", body: [1])
                }
                #expect(error?.code == .unavailable)
                #expect((error?.cause as? URLError)?.code == .timedOut)
                let counts = try await proxy.counts()
                #expect(counts.count(method: "PUT", path: "/\(bucket)/lease") == 1)
                #expect(counts.requests.last?.forwarded == false)

                try await proxy.set(.pass)
                try await client.put(bucket: bucket, key: "lease", body: [2])
                #expect(try await client.get(bucket: bucket, key: "lease") == [2])
            }
        }

        @Test func aBlackholedUploadEndsAsCancelledWhenItsTaskIsCancelled() async throws {
            let gateway = try Gateway.required()
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let client = S3Client(configuration: proxy.configuration(for: gateway))
                let bucket = try await gateway.freshBucket(client)
                try await proxy.set(.blackhole)
                try await proxy.zero()
                let upload = Task { try await client.put(bucket: bucket, key: "lease", body: [1]) }
                // Cancelled once the request is on its way (10 seconds at most).
                for _ in 0..<1000 where try await proxy.counts().requests.isEmpty {
                    try await Task.sleep(for: .milliseconds(10))
                }
                upload.cancel()
                let error = await #expect(throws: ReplicationError.self) { try await upload.value }
                #expect(error?.code == .cancelled)
                #expect(try await proxy.counts().requests.count == 1, "no retry after the cancellation")
            }
        }

        @Test func aDroppingProxyResetsAboutThatFractionOfFreshConnections() async throws {
            let gateway = try Gateway.required()
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let bucket = try await gateway.freshBucket(S3Client(configuration: proxy.configuration(for: gateway)))
                try await proxy.set(.drop(probability: 0.3, seed: 28))
                try await proxy.zero()
                var failures = 0
                for _ in 0..<100 {
                    // A client of its own is a connection of its own; one attempt, so no retry hides a drop.
                    let client = S3Client(
                        configuration: proxy.configuration(for: gateway, retry: RetryPolicy(attempts: 1)))
                    do {
                        _ = try await client.get(bucket: bucket, key: "absent")
                    } catch let error as ReplicationError where error.code == .unavailable {
                        failures += 1
                    }
                }
                let counts = try await proxy.counts()
                #expect((15...45).contains(failures), "\(failures) of 100 failed")
                #expect(counts.accepted == 100)
                #expect(counts.reset == failures)
                #expect(counts.requests.count == 100 - failures)
            }
        }

        @Test func aKeepAliveConnectionIsUntouchedByDropButFailsNowAndThenByDropRequests() async throws {
            let gateway = try Gateway.required()
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let client = S3Client(
                    configuration: proxy.configuration(for: gateway, retry: RetryPolicy(attempts: 1)))
                let bucket = try await gateway.freshBucket(client)
                try await proxy.set(.drop(probability: 1, seed: 1))
                for _ in 0..<10 { #expect(try await client.get(bucket: bucket, key: "absent") == nil) }

                try await proxy.set(.dropRequests(probability: 0.3, seed: 28))
                try await proxy.zero()
                let sent = client.requestsSent
                var failures = 0
                for _ in 0..<100 {
                    do {
                        _ = try await client.get(bucket: bucket, key: "absent")
                    } catch let error as ReplicationError where error.code == .unavailable {
                        failures += 1
                    }
                }
                let counts = try await proxy.counts()
                let dropped = counts.requests.filter { !$0.forwarded }.count
                // The HTTP layer sends a request again, once, on a new connection when a reused one
                // is reset before any answer: a drop fails the request only when the resend (or a
                // request on a new connection) is dropped too. So the client counts fewer requests
                // than went out, and every dropped request either failed or was sent again.
                #expect(
                    (15...45).contains(dropped * 100 / counts.requests.count), "\(dropped) of \(counts.requests.count)")
                #expect(failures > 0)
                #expect(client.requestsSent - sent == 100)
                #expect(counts.requests.count - 100 == dropped - failures, "\(failures) failed, \(dropped) dropped")
                #expect(counts.reset == dropped)
            }
        }

        @Test func aDelayingProxyStillPassesManyConcurrentConnections() async throws {
            let gateway = try Gateway.required()
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let bucket = try await gateway.freshBucket(S3Client(configuration: proxy.configuration(for: gateway)))
                try await proxy.set(.delay(milliseconds: 200))
                try await proxy.zero()
                let configuration = proxy.configuration(for: gateway)
                let found = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<64 {
                        group.addTask {
                            try await S3Client(configuration: configuration).get(bucket: bucket, key: "k") == nil
                        }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(found == 64)
                let counts = try await proxy.counts()
                #expect(counts.accepted == 64)
                #expect(counts.byMethod == ["GET": 64])
            }
        }

        @Test func theProxyProcessIsGoneAfterStop() async throws {
            let gateway = try Gateway.required()
            let proxy = try await FaultProxy.start(upstream: gateway.endpoint)
            let process = proxy.processIdentifier
            #expect(proxy.isRunning)
            proxy.stop()
            #expect(kill(process, 0) == -1 && errno == ESRCH, "no process, not even a zombie")
            await #expect(throws: FaultProxy.Failure.self) { try await proxy.set(.cut) }
            proxy.stop()
        }

        @Test func aProxyWhoseTestProcessLetsGoExitsByItself() async throws {
            let gateway = try Gateway.required()
            let proxy = try await FaultProxy.start(upstream: gateway.endpoint)
            defer { proxy.stop() }
            // Its stdin closes as it would if this process died.
            proxy.abandon()
            for _ in 0..<1000 where proxy.isRunning { try await Task.sleep(for: .milliseconds(10)) }
            #expect(!proxy.isRunning)
        }
    }
}

/// Sends `bytes` to 127.0.0.1:`port` in one write, closes the sending side, and returns what comes
/// back until the other side closes (30 seconds at most).
func exchangeRaw(_ bytes: [UInt8], port: Int) throws -> [UInt8] {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw FaultProxy.Failure(description: "socket failed: errno \(errno)") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else { throw FaultProxy.Failure(description: "connect failed: errno \(errno)") }
    var timeout = timeval(tv_sec: 30, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let written = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    guard written == bytes.count else { throw FaultProxy.Failure(description: "send failed: errno \(errno)") }
    shutdown(descriptor, Int32(SHUT_WR))
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { break }
        received.append(contentsOf: buffer[..<count])
    }
    return received
}
