import Foundation

/// The keys S3 requests are signed with. Their descriptions never show the secret key or the
/// session token, and show only the first four characters of the access key id.
public struct S3Credentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The access key id, such as `AKIAIOSFODNN7EXAMPLE`.
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// The session token of temporary credentials.
    public var sessionToken: String?

    /// Creates credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The access key id with all but its first four characters hidden, the secret and token hidden.
    public var description: String {
        "S3Credentials(accessKeyID: \(accessKeyID.prefix(4))…, secretAccessKey: <redacted>"
            + (sessionToken == nil ? ")" : ", sessionToken: <redacted>)")
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// Credentials from the environment, as the AWS command-line tool finds them: the variables
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`, or else the profile
    /// `AWS_PROFILE` (or `default`) of the shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`,
    /// or `~/.aws/credentials`).
    ///
    /// - Throws: ``ReplicationError/Code/missingCredentials`` when neither has them.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> S3Credentials
    {
        if let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty,
            let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
        {
            let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: token)
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        let path = environment["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials"
        let profile = environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        if let text = try? String(contentsOfFile: path, encoding: .utf8),
            let section = parseProfiles(text)[profile], let id = section["aws_access_key_id"],
            let secret = section["aws_secret_access_key"]
        {
            return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: section["aws_session_token"])
        }
        throw ReplicationError(
            .missingCredentials,
            "No S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add a [\(profile)] profile with aws_access_key_id and aws_secret_access_key to \(path)."
        )
    }

    /// The sections of an INI-style credentials file, by name, with their keys lower-cased.
    static func parseProfiles(_ text: String) -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                var name = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                if name.hasPrefix("profile ") { name = String(name.dropFirst(8)).trimmingCharacters(in: .whitespaces) }
                current = name
                result[name, default: [:]] = result[name] ?? [:]
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            result[current, default: [:]][key] = value
        }
        return result
    }
}

/// Where a replica lives: a bucket and a prefix in it, written `s3://BUCKET/PREFIX`.
public struct S3Location: Sendable, Hashable, CustomStringConvertible {
    /// The bucket.
    public var bucket: String
    /// The prefix every object of the replica starts with, ending in `/` (empty for the whole bucket).
    public var prefix: String

    /// Creates a location; a prefix without a trailing `/` gets one.
    public init(bucket: String, prefix: String) {
        self.bucket = bucket
        var trimmed = prefix
        while trimmed.hasPrefix("/") { trimmed.removeFirst() }
        self.prefix = trimmed.isEmpty || trimmed.hasSuffix("/") ? trimmed : trimmed + "/"
    }

    /// Parses `s3://BUCKET/PREFIX`.
    ///
    /// - Throws: ``ReplicationError/Code/invalidArgument`` for anything else.
    public init(parsing text: String) throws {
        guard text.hasPrefix("s3://") else {
            throw ReplicationError(.invalidArgument, "\(text) is not an S3 location: write s3://BUCKET/PREFIX.")
        }
        let rest = text.dropFirst(5)
        let bucket = rest.prefix { $0 != "/" }
        guard !bucket.isEmpty else {
            throw ReplicationError(.invalidArgument, "\(text) names no bucket: write s3://BUCKET/PREFIX.")
        }
        self.init(bucket: String(bucket), prefix: String(rest.dropFirst(bucket.count)))
    }

    /// `s3://BUCKET/PREFIX`.
    public var description: String { "s3://\(bucket)/\(prefix)" }
}

/// How to reach an S3-compatible server: its endpoint, region and credentials, and how hard to retry.
public struct S3Configuration: Sendable, CustomStringConvertible {
    /// The server, such as `http://127.0.0.1:7480`; requests use path-style addressing.
    public var endpoint: URL
    /// The region requests are signed for.
    public var region: String
    /// The keys requests are signed with.
    public var credentials: S3Credentials
    /// How failed requests are retried.
    public var retry: RetryPolicy
    /// The slowest a response may arrive before its request is cancelled.
    public var minimumRate: MinimumTransferRate

    /// Creates a configuration.
    public init(
        endpoint: URL, region: String, credentials: S3Credentials, retry: RetryPolicy = RetryPolicy(),
        minimumRate: MinimumTransferRate = MinimumTransferRate()
    ) {
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
        self.retry = retry
        self.minimumRate = minimumRate
    }

    /// A configuration from the environment, with explicit values taking precedence: the endpoint
    /// from `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (else AWS's regional endpoint), the region
    /// from `AWS_REGION` or `AWS_DEFAULT_REGION` (else `us-east-1`), the credentials as
    /// ``S3Credentials/fromEnvironment(_:)`` finds them, and the minimum transfer rate from
    /// `STATEJOURNAL_S3_MINIMUM_RATE` (see ``MinimumTransferRate/init(parsing:)``).
    ///
    /// - Throws: ``ReplicationError/Code/missingCredentials`` or ``ReplicationError/Code/invalidArgument``.
    public static func fromEnvironment(
        endpoint: String? = nil, region: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> S3Configuration {
        func value(_ names: String...) -> String? {
            names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        }
        let region = region ?? value("AWS_REGION", "AWS_DEFAULT_REGION") ?? "us-east-1"
        let text = endpoint ?? value("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL") ?? "https://s3.\(region).amazonaws.com"
        guard let url = URL(string: text), let scheme = url.scheme, scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw ReplicationError(.invalidArgument, "\(text) is not an http or https endpoint URL.")
        }
        var minimumRate = MinimumTransferRate()
        if let text = value("STATEJOURNAL_S3_MINIMUM_RATE") {
            minimumRate = try MinimumTransferRate(parsing: text)
        }
        return S3Configuration(
            endpoint: url, region: region, credentials: try S3Credentials.fromEnvironment(environment),
            minimumRate: minimumRate)
    }

    /// The endpoint and region; the credentials redacted.
    public var description: String {
        "S3Configuration(endpoint: \(endpoint), region: \(region), credentials: \(credentials))"
    }
}

/// How failed requests are retried: on connection errors, 5xx statuses and throttling, with
/// exponential backoff and full jitter.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included.
    public var attempts: Int
    /// The delay before the first retry, before jitter.
    public var baseDelay: Duration
    /// The longest delay between two attempts, before jitter.
    public var maximumDelay: Duration

    /// Creates a policy; the default tries 6 times over about 6 seconds.
    public init(attempts: Int = 6, baseDelay: Duration = .milliseconds(200), maximumDelay: Duration = .seconds(5)) {
        self.attempts = max(1, attempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
    }

    /// The delay before retry number `retry` (1 for the first): a random duration between zero and
    /// `baseDelay · 2^(retry-1)`, capped at `maximumDelay`.
    public func delay(beforeRetry retry: Int) -> Duration {
        let ceiling = min(maximumDelay, baseDelay * (1 << min(max(retry - 1, 0), 20)))
        let nanoseconds = ceiling.components.seconds * 1_000_000_000 + ceiling.components.attoseconds / 1_000_000_000
        return .nanoseconds(Int64.random(in: 0...max(nanoseconds, 0)))
    }
}

/// The slowest a response may arrive: a request whose response brought fewer than
/// `bytesPerSecond × window` bytes over the last `window`, without being complete, is cancelled with
/// ``ReplicationError/Code/tooSlow`` and not retried (as curl's `--speed-limit` and `--speed-time`
/// do). A request is also cancelled once it has taken `window` plus its declared size at
/// `bytesPerSecond`. The window starts when a request is sent for one without a body, and when the
/// response starts for an upload (whose sending only the idle timeout bounds).
public struct MinimumTransferRate: Sendable, Hashable, CustomStringConvertible {
    /// The average rate a response must keep, in bytes a second; 0 turns the check off.
    public var bytesPerSecond: Int
    /// The window the rate is averaged over, from 1 second to an hour.
    public var window: Duration

    /// Creates a minimum; the default is ``ReplicaLimits/minimumTransferRate`` over
    /// ``ReplicaLimits/transferRateWindow``.
    public init(
        bytesPerSecond: Int = ReplicaLimits.minimumTransferRate, window: Duration = ReplicaLimits.transferRateWindow
    ) {
        self.bytesPerSecond = max(0, bytesPerSecond)
        self.window = min(max(window, .seconds(1)), .seconds(3600))
    }

    /// Parses `BYTES` or `BYTES/SECONDS` (bytes a second, and the window in whole seconds), the text
    /// of `STATEJOURNAL_S3_MINIMUM_RATE`; `0` turns the check off.
    ///
    /// - Throws: ``ReplicationError/Code/invalidArgument`` for anything else.
    public init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let rate = Int(parts[0]), (0...(1 << 40)).contains(rate),
            parts.count == 1 || Int(parts[1]).map({ (1...3600).contains($0) }) == true
        else {
            throw ReplicationError(
                .invalidArgument,
                "\(printable(text)) is not a minimum transfer rate: write BYTES or BYTES/SECONDS, such as 1024/30 (0 turns the check off; the window is 1 to 3600 seconds)."
            )
        }
        self.init(
            bytesPerSecond: rate,
            window: parts.count == 2 ? .seconds(Int(parts[1])!) : ReplicaLimits.transferRateWindow)
    }

    /// The window in seconds.
    var windowSeconds: Double {
        Double(window.components.seconds) + Double(window.components.attoseconds) / 1e18
    }

    /// `BYTES/SECONDS`.
    public var description: String { "\(bytesPerSecond)/\(Int(windowSeconds))" }
}
