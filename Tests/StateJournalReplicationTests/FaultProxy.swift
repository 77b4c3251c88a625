import Foundation

@testable import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP proxy in front of the gateway whose faults a test changes while it runs:
/// `FaultProxy.py`, a child process driven over its stdin and stdout.
///
/// Give a client ``endpoint`` (or ``configuration(for:retry:minimumRate:)``) instead of the
/// gateway's. The process never outlives its test: ``stop()`` kills it and waits until it is gone,
/// and so does `deinit`; it also exits by itself when its stdin closes (this process ended), when
/// its parent is gone, and after `lifetime`. ``withFaultProxy(upstream:lifetime:_:)`` stops it
/// whether the body returns or throws.
///
/// What ``S3Client`` does under each fault, as `FaultProxyTests` shows on the gateway:
/// - `cut`: each attempt is reset at once and retried; the request fails with `unavailable` after
///   all its attempts, one connection each (the default policy's 6 take a few seconds of backoff).
/// - `blackhole`: each attempt ends by the session's idle timeout of 30 seconds (fixed, not part of
///   ``S3Configuration``) and is retried, so the default policy takes about 3 minutes. A request
///   without a body ends sooner, with `tooSlow` and no retry, when the minimum rate's window is
///   shorter than 30 seconds; an upload does not. Cancelling the calling task ends either at once,
///   with `cancelled`.
/// - `drop`, `dropRequests`: the HTTP layer sends a request again, once and unseen by the client,
///   when a reused connection is reset before any answer, so ``S3Client/requestsSent`` counts fewer
///   requests than went out: count them here.
final class FaultProxy: @unchecked Sendable {
    /// What the proxy does with connections.
    enum Mode: Sendable, Hashable {
        /// Forwards bytes both ways (the mode it starts in).
        case pass
        /// Resets every open connection at once and every new one as soon as it is accepted.
        case cut
        /// Open and new connections go silent: what clients send is read and thrown away, nothing
        /// is forwarded or answered, so only the clients' timeouts end their requests. A silenced
        /// connection stays silent after the mode changes, until its client closes it.
        case blackhole
        /// Each new connection is reset before anything is forwarded with probability
        /// `probability`, drawn from a generator seeded with `seed`; open connections pass.
        case drop(probability: Double, seed: UInt64)
        /// Each request, on open and new connections, is answered by resetting its connection with
        /// probability `probability` once its head has arrived; the others pass. A keep-alive
        /// connection is not affected by ``drop(probability:seed:)``; its requests are by this.
        case dropRequests(probability: Double, seed: UInt64)
        /// Each new connection forwards its first byte `milliseconds` after it is accepted.
        case delay(milliseconds: Int)

        var command: String {
            switch self {
            case .pass: "pass"
            case .cut: "cut"
            case .blackhole: "blackhole"
            case .drop(let probability, let seed): "drop \(probability) \(seed)"
            case .dropRequests(let probability, let seed): "droprequests \(probability) \(seed)"
            case .delay(let milliseconds): "delay \(milliseconds)"
            }
        }
    }

    /// One HTTP/1.1 request a client sent through the proxy: its request line.
    struct Request: Sendable, Hashable {
        var method: String
        /// The request target as sent: a path and perhaps `?query`.
        var target: String
        /// False when the proxy threw it away (a silent or dropped connection).
        var forwarded: Bool

        /// The target's path, without the query.
        var path: String { String(target.prefix { $0 != "?" }) }
        /// The target's query, without `?`; empty when there is none.
        var query: String { target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? "" }
    }

    /// What the proxy has seen since it started or was last zeroed.
    struct Counts: Sendable, Hashable {
        /// Connections accepted.
        var accepted: Int
        /// Connections the proxy reset (cut, dropped, or whose upstream could not be reached).
        var reset: Int
        /// Every request clients sent, in the order their heads arrived.
        var requests: [Request]

        /// Requests by method.
        var byMethod: [String: Int] { requests.reduce(into: [:]) { $0[$1.method, default: 0] += 1 } }

        /// The requests with `method` (any when `nil`) whose path matches the `fnmatch(3)` pattern
        /// `path` (where `*` also matches `/`), with a query when `query` is true, without one
        /// when it is false, either way when it is `nil`.
        func count(method: String? = nil, path: String = "*", query: Bool? = nil) -> Int {
            requests.filter { request in
                (method == nil || request.method == method) && fnmatch(path, request.path, 0) == 0
                    && (query == nil || query == !request.query.isEmpty)
            }.count
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The port the proxy listens on, on 127.0.0.1.
    private(set) var port = 0
    /// The endpoint to give an ``S3Configuration`` instead of the gateway's.
    var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// The proxy's process id.
    var processIdentifier: Int32 { process.processIdentifier }

    private let process: Process
    private let commands: FileHandle
    private let answersHandle: FileHandle
    private var answers: Int32 { answersHandle.fileDescriptor }
    private let lock = NSLock()
    private var buffer: [UInt8] = []
    private var stopped = false

    private init(process: Process, commands: FileHandle, answers: FileHandle) {
        self.process = process
        self.commands = commands
        self.answersHandle = answers
    }

    /// Starts a proxy to `upstream`, `host:port`, and returns once it listens.
    ///
    /// - Parameter lifetime: the proxy exits by itself after this long whatever happens.
    static func start(upstream: String, lifetime: Duration = .seconds(1800)) async throws -> FaultProxy {
        guard let colon = upstream.lastIndex(of: ":"), let upstreamPort = Int(upstream[upstream.index(after: colon)...])
        else { throw Failure(description: "\(upstream) is not host:port.") }
        // A write to the pipe of a proxy that died must fail, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("FaultProxy.py")
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            script.path, String(upstream[..<colon]), "\(upstreamPort)", "\(lifetime.components.seconds)",
        ]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let proxy = FaultProxy(
            process: process, commands: input.fileHandleForWriting,
            answers: output.fileHandleForReading)
        let line: String
        do {
            line = try proxy.lock.withLock { try proxy.readLine() }
        } catch {
            proxy.stop()
            throw error
        }
        guard line.hasPrefix("listening "), let port = Int(line.dropFirst("listening ".count)) else {
            proxy.stop()
            throw Failure(description: "FaultProxy.py did not start: \(line)")
        }
        proxy.port = port
        return proxy
    }

    /// Starts a proxy to the host and port of `upstream`.
    static func start(upstream: URL, lifetime: Duration = .seconds(1800)) async throws -> FaultProxy {
        guard let host = upstream.host else { throw Failure(description: "\(upstream) names no host.") }
        let port = upstream.port ?? (upstream.scheme == "https" ? 443 : 80)
        return try await start(upstream: "\(host):\(port)", lifetime: lifetime)
    }

    /// The gateway's configuration, with this proxy as its endpoint.
    func configuration(
        for gateway: Gateway, retry: RetryPolicy = RetryPolicy(),
        minimumRate: MinimumTransferRate = MinimumTransferRate()
    ) -> S3Configuration {
        var configuration = gateway.configuration(retry: retry)
        configuration.endpoint = endpoint
        configuration.minimumRate = minimumRate
        return configuration
    }

    /// Changes what the proxy does; it has done so when this returns.
    func set(_ mode: Mode) async throws {
        let answer = try exchange(mode.command)
        guard answer == "ok" else { throw Failure(description: "FaultProxy.py refused \(mode.command): \(answer)") }
    }

    /// What the proxy has seen since it started or was last zeroed.
    func counts() async throws -> Counts {
        let answer = try exchange("counts")
        struct Document: Decodable {
            var accepted: Int
            var reset: Int
            var requests: [[Value]]
            enum Value: Decodable {
                case text(String)
                case flag(Bool)
                init(from decoder: any Decoder) throws {
                    let container = try decoder.singleValueContainer()
                    if let flag = try? container.decode(Bool.self) {
                        self = .flag(flag)
                    } else {
                        self = .text(try container.decode(String.self))
                    }
                }
            }
        }
        let document = try JSONDecoder().decode(Document.self, from: Data(answer.utf8))
        let requests = try document.requests.map { fields -> Request in
            guard fields.count == 3, case .text(let method) = fields[0], case .text(let target) = fields[1],
                case .flag(let forwarded) = fields[2]
            else { throw Failure(description: "FaultProxy.py gave a malformed request: \(fields)") }
            return Request(method: method, target: target, forwarded: forwarded)
        }
        return Counts(accepted: document.accepted, reset: document.reset, requests: requests)
    }

    /// Sets the counts to zero.
    func zero() async throws {
        let answer = try exchange("zero")
        guard answer == "ok" else { throw Failure(description: "FaultProxy.py refused zero: \(answer)") }
    }

    /// Kills the proxy and waits until the process is gone (reaped); calling it again does nothing.
    func stop() {
        let first = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        kill(process.processIdentifier, SIGKILL)
        try? commands.close()
        try? answersHandle.close()
        // Not waitUntilExit: on Linux it can wait for ever when called from a task. Foundation
        // reaps the child; wait for that, for 10 seconds at most.
        for _ in 0..<1000 where process.isRunning { usleep(10_000) }
    }

    /// Closes the proxy's stdin without killing it, as the end of this process would: it exits by
    /// itself. For the test that shows it does.
    func abandon() {
        let first = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        try? commands.close()
        try? answersHandle.close()
    }

    /// Whether the process is still there (a zombie not yet reaped counts as there).
    var isRunning: Bool { kill(process.processIdentifier, 0) == 0 }

    deinit { stop() }

    // MARK: The line protocol

    /// Sends one command and returns its one-line answer.
    private func exchange(_ command: String) throws -> String {
        try lock.withLock {
            guard !stopped else { throw Failure(description: "The proxy was stopped.") }
            let bytes = Array((command + "\n").utf8)
            let written = bytes.withUnsafeBytes { write(commands.fileDescriptor, $0.baseAddress, $0.count) }
            guard written == bytes.count else {
                throw Failure(description: "FaultProxy.py is gone: writing \(command) failed (errno \(errno)).")
            }
            return try readLine()
        }
    }

    /// The next line of the proxy's stdout, waiting 30 seconds at most; the caller holds `lock`.
    private func readLine() throws -> String {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var descriptor = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 30_000)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { throw Failure(description: "FaultProxy.py did not answer within 30 seconds.") }
            let count = chunk.withUnsafeMutableBytes { read(answers, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure(description: "FaultProxy.py ended its output.") }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}

/// Runs `body` with a proxy to the host and port of `upstream` (a gateway's endpoint), stopping the
/// proxy when it returns or throws.
func withFaultProxy<Result>(
    upstream: URL, lifetime: Duration = .seconds(1800), _ body: (FaultProxy) async throws -> Result
) async throws -> Result {
    let proxy = try await FaultProxy.start(upstream: upstream, lifetime: lifetime)
    defer { proxy.stop() }
    return try await body(proxy)
}
