import Crypto
import Foundation
import Testing

@testable import StateJournalReplication

func import_sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

/// The real S3 server the tests ship to: the single-node Ceph RADOS Gateway `.ci/ceph-rgw-start`
/// starts, whose env file `.ci/run` names in `STATEJOURNAL_S3_ENV`.
struct Gateway: Sendable {
    var endpoint: URL
    var credentials: S3Credentials
    /// The radosgw process's pid file, to stop and restart it in fault tests.
    var pidFile: String?
    var environment: [String: String]

    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// The gateway, or an error saying why it is not there, which fails the test: these tests never
    /// pass without a server.
    static func required() throws -> Gateway {
        guard let path = ProcessInfo.processInfo.environment["STATEJOURNAL_S3_ENV"], !path.isEmpty else {
            let message =
                "STATEJOURNAL_S3_ENV is not set: these tests need a real S3 server. Start one with `.ci/ceph-rgw-start DIR` and run the tests with STATEJOURNAL_S3_ENV=DIR/s3.env (.ci/run does both)."
            throw Missing(description: message)
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            let message = "STATEJOURNAL_S3_ENV names \(path), which cannot be read: was the gateway started?"
            throw Missing(description: message)
        }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            var body = line.trimmingCharacters(in: .whitespaces)
            if body.hasPrefix("export ") { body.removeFirst(7) }
            guard let equals = body.firstIndex(of: "=") else { continue }
            values[String(body[..<equals])] = String(body[body.index(after: equals)...])
        }
        guard let endpoint = values["S3_ENDPOINT"].flatMap(URL.init(string:)), let id = values["AWS_ACCESS_KEY_ID"],
            let secret = values["AWS_SECRET_ACCESS_KEY"]
        else {
            let message = "\(path) lacks S3_ENDPOINT, AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY."
            throw Missing(description: message)
        }
        return Gateway(
            endpoint: endpoint, credentials: S3Credentials(accessKeyID: id, secretAccessKey: secret),
            pidFile: values["S3_RGW_PID_FILE"], environment: values)
    }

    func configuration(retry: RetryPolicy = RetryPolicy()) -> S3Configuration {
        S3Configuration(endpoint: endpoint, region: "us-east-1", credentials: credentials, retry: retry)
    }

    func client(retry: RetryPolicy = RetryPolicy()) -> S3Client { S3Client(configuration: configuration(retry: retry)) }

    /// A new bucket with a unique name.
    func freshBucket(_ client: S3Client? = nil) async throws -> String {
        let name = "sj-test-" + UUID().uuidString.lowercased().prefix(18)
        try await (client ?? self.client()).createBucket(name)
        return name
    }

    /// The environment a child `statejournal` process needs to reach the gateway.
    var childEnvironment: [String: String] {
        var result = ProcessInfo.processInfo.environment
        result["AWS_ACCESS_KEY_ID"] = credentials.accessKeyID
        result["AWS_SECRET_ACCESS_KEY"] = credentials.secretAccessKey
        result["AWS_ENDPOINT_URL"] = endpoint.absoluteString
        result["AWS_REGION"] = "us-east-1"
        return result
    }
}

/// A new empty temporary directory.
func temporaryDirectory(_ label: String = "replication") throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("sj-\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

extension ReplicationOptions {
    /// `options` with every file's bytes shipped as objects of their own, as a pass larger than what
    /// a generation carries ships them: for tests that damage, count or fetch particular objects.
    static func separateObjects(_ options: ReplicationOptions = ReplicationOptions()) -> ReplicationOptions {
        var options = options
        options.maximumInlineBytes = 0
        return options
    }
}

/// Every suite that uses the gateway, run one test at a time: a fault test stops the gateway, which
/// must not fail a test running beside it.
@Suite(.serialized) struct GatewayTests {}

/// Writes `generation` under its own number, in the clear, replacing whatever is there: what someone
/// who can write the bucket, or a shipper that had lost its lease, could leave in a replica.
func plantGeneration(_ generation: ReplicaGeneration, at location: S3Location, client: S3Client) async throws {
    let name = ReplicaLayout.generation(generation.generation)
    try await client.put(
        bucket: location.bucket, key: location.prefix + name,
        body: try ObjectEnvelope.seal(
            try GenerationContainer.seal(generation, inline: []), name: name, keyring: nil, storeID: nil,
            replicaID: nil,
            chunkBytes: ReplicaLimits.sealedChunkBytes))
}
