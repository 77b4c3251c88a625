import Foundation
import Testing

@testable import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif

extension GatewayTests {
    /// The S3 client against the real gateway.
    @Suite struct S3ClientTests {
        @Test func objectsGoUpAndComeBackWholeAndByRange() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let bucket = try await gateway.freshBucket(client)
            let body = (0..<10_000).map { UInt8($0 % 251) }
            #expect(try await client.put(bucket: bucket, key: "a/b c+d", body: body) == .created)
            #expect(try await client.get(bucket: bucket, key: "a/b c+d") == body)
            #expect(try await client.get(bucket: bucket, key: "a/b c+d", range: 100..<200) == Array(body[100..<200]))
            #expect(try await client.get(bucket: bucket, key: "missing") == nil)
            try await client.delete(bucket: bucket, key: "a/b c+d")
            #expect(try await client.get(bucket: bucket, key: "a/b c+d") == nil)
        }

        @Test func aCreateOnlyPutNeverReplacesAnObject() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let bucket = try await gateway.freshBucket(client)
            #expect(try await client.put(bucket: bucket, key: "once", body: [1], createOnly: true) == .created)
            #expect(try await client.put(bucket: bucket, key: "once", body: [2], createOnly: true) == .alreadyExists)
            #expect(try await client.get(bucket: bucket, key: "once") == [1])
        }

        @Test func listingsFollowContinuationTokensAndSortByKey() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let bucket = try await gateway.freshBucket(client)
            for index in (0..<7).reversed() {
                try await client.put(bucket: bucket, key: "p/\(index)", body: [UInt8(index)])
            }
            try await client.put(bucket: bucket, key: "q/other", body: [])
            let listed = try await client.list(bucket: bucket, prefix: "p/", pageSize: 2)
            #expect(listed.map(\.key) == (0..<7).map { "p/\($0)" })
            #expect(listed.allSatisfy { $0.size == 1 })
            #expect(
                try await client.list(bucket: bucket, prefix: "p/", startAfter: "p/4").map(\.key) == ["p/5", "p/6"])
        }

        @Test func aLargeObjectGoesUpInPartsAndComesBackWhole() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let bucket = try await gateway.freshBucket(client)
            var generator = SystemRandomNumberGenerator()
            var body = [UInt8](repeating: 0, count: S3Client.multipartPartSize * 2 + 12345)
            for index in stride(from: 0, to: body.count, by: 8) {
                withUnsafeBytes(of: generator.next() as UInt64) { word in
                    for offset in 0..<min(8, body.count - index) { body[index + offset] = word[offset] }
                }
            }
            try await client.putMultipart(bucket: bucket, key: "big", body: body)
            #expect(try await client.get(bucket: bucket, key: "big") == body)
        }

        @Test func badCredentialsAreAccessDenied() async throws {
            let gateway = try Gateway.required()
            var configuration = gateway.configuration()
            configuration.credentials.secretAccessKey = "wrong-secret-key-0000000000000000000000000"
            let error = await #expect(throws: ReplicationError.self) {
                _ = try await S3Client(configuration: configuration).list(bucket: "anything", prefix: "")
            }
            #expect(error?.code == .accessDenied)
            #expect(error.map { "\($0)" }?.contains("wrong-secret") == false)
        }

        @Test func aMissingBucketIsNoSuchBucket() async throws {
            let gateway = try Gateway.required()
            let error = await #expect(throws: ReplicationError.self) {
                _ = try await gateway.client().list(
                    bucket: "sj-no-such-bucket-\(UUID().uuidString.prefix(8).lowercased())", prefix: "")
            }
            #expect(error?.code == .noSuchBucket)
        }

        @Test func anEndpointThatIsNotS3IsSaidToBeNotS3() async throws {
            let gateway = try Gateway.required()
            let server = try PlainHTTPServer()
            defer { server.stop() }
            var configuration = gateway.configuration(retry: RetryPolicy(attempts: 2, baseDelay: .milliseconds(10)))
            configuration.endpoint = URL(string: "http://127.0.0.1:\(server.port)")!
            let error = await #expect(throws: ReplicationError.self) {
                _ = try await S3Client(configuration: configuration).list(bucket: "bucket", prefix: "")
            }
            #expect(error?.code == .notS3)
        }

        @Test(.timeLimit(.minutes(10))) func anUnreachableEndpointIsUnavailableAfterItsRetries() async throws {
            let gateway = try Gateway.required()
            var configuration = gateway.configuration(retry: RetryPolicy(attempts: 3, baseDelay: .milliseconds(10)))
            configuration.endpoint = URL(string: "http://127.0.0.1:1")!
            let client = S3Client(configuration: configuration)
            let error = await #expect(throws: ReplicationError.self) {
                _ = try await client.get(bucket: "bucket", key: "k")
            }
            #expect(error?.code == .unavailable)
            // It gives up after its three attempts, not after a time: three requests were sent, and
            // no more. (The time limit only catches a client that keeps retrying.)
            #expect(client.requestCounts.gets == 3, "\(client.requestCounts)")
            #expect(client.requestCounts.total == 3, "\(client.requestCounts)")
            #expect(error.map { "\($0)" }?.contains("failed 3 times") == true, "\(String(describing: error))")
        }
    }
}

/// A plain web server on loopback that is not S3: `python3 -m http.server`.
final class PlainHTTPServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    let directory: URL

    init() throws {
        directory = try temporaryDirectory("www")
        try "hello".write(to: directory.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        port = Int.random(in: 30000...45000)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-m", "http.server", "\(port)", "--bind", "127.0.0.1", "--directory", directory.path,
            "--protocol", "HTTP/1.1",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<100 {
            if isListening(port: port) { return }
            usleep(50_000)
        }
    }

    func stop() {
        // Not waitUntilExit: on Linux it can wait for ever when called from a task.
        kill(process.processIdentifier, SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func isListening(port: Int) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}
