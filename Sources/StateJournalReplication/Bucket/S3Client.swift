import Crypto
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One object in a listing.
public struct S3Object: Sendable, Hashable {
    /// The object's full key.
    public var key: String
    /// Its size in bytes.
    public var size: Int64
}

/// The outcome of a create-only PUT.
public enum S3PutOutcome: Sendable, Hashable {
    /// The object was written.
    case created
    /// An object with that key was already there; nothing was written.
    case alreadyExists
}

/// A small client for S3-compatible object storage: path-style requests signed with
/// ``SignatureV4``, over Foundation's `URLSession`.
///
/// Every request is retried on connection errors, 5xx statuses and throttling according to the
/// configuration's ``RetryPolicy``; when the attempts are used up it throws
/// ``ReplicationError/Code/unavailable``. Other failures become typed errors at once:
/// ``ReplicationError/Code/accessDenied``, ``ReplicationError/Code/noSuchBucket``,
/// ``ReplicationError/Code/notS3``.
public final class S3Client: Sendable {
    /// Where and how requests are sent.
    public let configuration: S3Configuration
    private let session: URLSession
    private let transfers: BoundedTransfers
    private let signer: SignatureV4
    private let counter = RequestCounter()

    /// The HTTP requests this client has sent, retries included: what a bill counts.
    public var requestsSent: Int { counter.value }

    /// The listings (`ListObjectsV2` pages) this client has sent, retries included.
    public var listRequestsSent: Int { counter.lists }

    /// The requests this client has sent, by kind, retries included, and the bytes they carried.
    public var requestCounts: S3RequestCounts { counter.counts }

    /// Parts of a multipart upload, except the last, are this large (S3's smallest is 5 MiB).
    public static let multipartPartSize = 8 << 20

    /// The most pages of one listing followed: 10,000 pages of up to 1,000 keys.
    static let maximumListPages = 10_000

    /// The most bytes of a response body read when a request sets no smaller limit: 16 MiB, more
    /// than any listing page or error document (a GET names its own limit).
    public static let defaultResponseLimit = 16 << 20

    /// Creates a client.
    public init(configuration: S3Configuration) {
        self.configuration = configuration
        transfers = BoundedTransfers(minimumRate: configuration.minimumRate)
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = 30
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        session = URLSession(configuration: sessionConfiguration, delegate: transfers, delegateQueue: nil)
        signer = SignatureV4(credentials: configuration.credentials, region: configuration.region)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// A response: status, headers (names lower-cased), body.
    struct Response: Sendable {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        /// The error document's code, made printable: it is the server's text.
        var errorCode: String? { S3XML.firstValue(of: "Code", in: body).map { printable($0) } }
    }

    // MARK: Operations

    /// Writes an object. With `createOnly`, sends `If-None-Match: *` so that an existing object is
    /// never replaced. Sends `Content-MD5`, which the server checks.
    @discardableResult
    public func put(
        bucket: String, key: String, body: [UInt8], createOnly: Bool = false, metadata: [String: String] = [:]
    ) async throws -> S3PutOutcome {
        try await put(bucket: bucket, key: key, body: body, createOnly: createOnly, metadata: metadata, while: nil)
    }

    /// Writes an object as ``put(bucket:key:body:createOnly:metadata:)`` does, attempting (and
    /// retrying) it only while `mayAttempt` says so: a shipper's generation is never sent, first or
    /// again, once its lease may have run out.
    func put(
        bucket: String, key: String, body: [UInt8], createOnly: Bool, metadata: [String: String] = [:],
        while mayAttempt: (@Sendable () async -> Bool)?
    ) async throws -> S3PutOutcome {
        var headers = ["content-md5": Data(Insecure.MD5.hash(data: body)).base64EncodedString()]
        if createOnly { headers["if-none-match"] = "*" }
        for (name, value) in metadata { headers["x-amz-meta-" + name.lowercased()] = value }
        let response = try await send(
            "PUT", bucket: bucket, key: key, headers: headers, body: body, accept: [200, 412], while: mayAttempt)
        return response.status == 412 ? .alreadyExists : .created
    }

    /// Writes an object only if the server's copy is as the caller last saw it: with `etag`, only
    /// while the object's ETag is still that one (`If-Match`); without, only when there is no such
    /// object (`If-None-Match: *`). Returns the new ETag, or `nil` when the condition failed (HTTP
    /// 412) and nothing was written.
    ///
    /// The ETag is sent without its quotes: the Ceph RADOS Gateway (16.2) compares `If-Match` with
    /// the unquoted value and fails every quoted one, and AWS S3 accepts both forms.
    func put(bucket: String, key: String, body: [UInt8], ifMatching etag: String?) async throws -> String? {
        var headers = ["content-md5": Data(Insecure.MD5.hash(data: body)).base64EncodedString()]
        if let etag {
            headers["if-match"] = Self.unquoted(etag)
        } else {
            headers["if-none-match"] = "*"
        }
        let response = try await send(
            "PUT", bucket: bucket, key: key, headers: headers, body: body, accept: [200, 412])
        guard response.status == 200 else { return nil }
        return response.headers["etag"].map(Self.unquoted) ?? ""
    }

    /// Reads an object with its ETag (unquoted); `nil` when there is no such object.
    func getWithETag(bucket: String, key: String, maximumBytes: Int) async throws -> (body: [UInt8], etag: String)? {
        let response = try await send("GET", bucket: bucket, key: key, accept: [200, 404], limit: maximumBytes)
        if response.status == 404 {
            if response.errorCode == "NoSuchBucket" { throw noSuchBucket(bucket) }
            return nil
        }
        return (response.body, response.headers["etag"].map(Self.unquoted) ?? "")
    }

    /// An object's ETag (unquoted), read with `HEAD`; `nil` when there is no such object.
    func etag(bucket: String, key: String) async throws -> String? {
        let response = try await send("HEAD", bucket: bucket, key: key, accept: [200, 404])
        guard response.status == 200 else { return nil }
        return response.headers["etag"].map(Self.unquoted) ?? ""
    }

    static func unquoted(_ etag: String) -> String {
        var text = etag.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("W/") { text.removeFirst(2) }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
        return text
    }

    /// Reads an object, or the bytes `range` of it; `nil` when there is no such object, and no bytes
    /// when `range` starts beyond its end.
    ///
    /// At most `maximumBytes` of the body are read: a larger object (by its `Content-Length`, or by
    /// the bytes the server sends) is not read further.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` when the object is larger than
    ///   `maximumBytes`, or the errors of every request.
    public func get(
        bucket: String, key: String, range: Range<Int64>? = nil,
        maximumBytes: Int = Int(ReplicaLimits.maximumObjectBytes) + 1024
    ) async throws -> [UInt8]? {
        try await getResponse(bucket: bucket, key: key, range: range, maximumBytes: maximumBytes)?.body
    }

    /// Reads an object as ``get(bucket:key:range:maximumBytes:)`` does, with its age by the server's
    /// own clock: the response's `Date` less the object's `Last-Modified`, in whole seconds as HTTP
    /// gives them (`nil` when either is missing or unreadable). No clock of this host is involved.
    func getWithAge(bucket: String, key: String, maximumBytes: Int) async throws -> (body: [UInt8], age: Int64?)? {
        guard
            let response = try await getResponse(
                bucket: bucket, key: key, range: 0..<Int64(maximumBytes), maximumBytes: maximumBytes)
        else { return nil }
        let age = response.headers["date"].flatMap(HTTPDate.seconds).flatMap { now in
            response.headers["last-modified"].flatMap(HTTPDate.seconds).map { now - $0 }
        }
        return (response.body, age)
    }

    /// The response to a GET of an object (or of `range` of it): `nil` when there is no such object,
    /// and no body or headers when `range` starts beyond its end.
    private func getResponse(bucket: String, key: String, range: Range<Int64>?, maximumBytes: Int) async throws
        -> Response?
    {
        var headers: [String: String] = [:]
        if let range { headers["range"] = "bytes=\(range.lowerBound)-\(range.upperBound - 1)" }
        let response = try await send(
            "GET", bucket: bucket, key: key, headers: headers, accept: [200, 206, 404, 416], limit: maximumBytes)
        if response.status == 416 { return Response(status: 416, headers: [:], body: []) }
        if response.status == 404 {
            if response.errorCode == "NoSuchBucket" { throw noSuchBucket(bucket) }
            return nil
        }
        return response
    }

    /// Every object whose key starts with `prefix`, in key order, following continuation tokens.
    public func list(bucket: String, prefix: String, startAfter: String? = nil, pageSize: Int? = nil) async throws
        -> [S3Object]
    {
        var objects: [S3Object] = []
        var token: String?
        var tokens: Set<String> = []
        repeat {
            // A server that never ends a listing (a token it gave before, or more pages than any
            // replica has) is not followed for ever.
            if let token, !tokens.insert(token).inserted || tokens.count > Self.maximumListPages {
                throw ReplicationError(
                    .unexpectedResponse,
                    "\(configuration.endpoint) keeps continuing the listing of \(bucket)/\(printable(prefix)) (\(tokens.count) pages); it was stopped."
                )
            }
            var query = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            if token == nil, let startAfter { query.append(("start-after", startAfter)) }
            if let pageSize { query.append(("max-keys", "\(pageSize)")) }
            let response = try await send("GET", bucket: bucket, key: nil, query: query, accept: [200])
            objects += try listedObjects(in: response)
            token =
                S3XML.firstValue(of: "IsTruncated", in: response.body) == "true"
                ? S3XML.firstValue(of: "NextContinuationToken", in: response.body) : nil
        } while token != nil
        return objects
    }

    /// The first objects whose keys start with `prefix`, at most `maximumKeys`: one request, whatever
    /// the prefix holds.
    func listFirstPage(bucket: String, prefix: String, maximumKeys: Int) async throws -> [S3Object] {
        let query = [("list-type", "2"), ("prefix", prefix), ("max-keys", "\(maximumKeys)")]
        let response = try await send("GET", bucket: bucket, key: nil, query: query, accept: [200])
        return Array(try listedObjects(in: response).prefix(maximumKeys))
    }

    /// The objects one page of a listing names.
    ///
    /// - Throws: ``ReplicationError/Code/notS3`` when it is not a `ListBucketResult`.
    private func listedObjects(in response: Response) throws -> [S3Object] {
        guard String(decoding: response.body.prefix(512), as: UTF8.self).contains("ListBucketResult") else {
            throw ReplicationError(
                .notS3,
                "\(configuration.endpoint) answered a bucket listing without a ListBucketResult; it does not look like an S3 server."
            )
        }
        return S3XML.elements("Contents", in: response.body).compactMap { contents in
            S3XML.firstValue(of: "Key", in: contents).map {
                S3Object(key: $0, size: Int64(S3XML.firstValue(of: "Size", in: contents) ?? "") ?? 0)
            }
        }
    }

    /// Deletes an object; deleting one that is not there succeeds.
    public func delete(bucket: String, key: String) async throws {
        _ = try await send("DELETE", bucket: bucket, key: key, accept: [200, 204, 404])
    }

    /// The most keys one `DeleteObjects` request names (S3's limit).
    public static let maximumKeysPerDelete = 1000

    /// Deletes objects, up to ``maximumKeysPerDelete`` in one request (`DeleteObjects`, a `POST`),
    /// and returns the keys the server could not delete, with its reason; deleting one that is not
    /// there succeeds. A server that does not offer `DeleteObjects` gets one `DELETE` per key.
    public func delete(bucket: String, keys: [String]) async throws -> [(key: String, reason: String)] {
        var failed: [(key: String, reason: String)] = []
        var start = keys.startIndex
        while start < keys.endIndex {
            let end = min(start + Self.maximumKeysPerDelete, keys.endIndex)
            let batch = Array(keys[start..<end])
            start = end
            guard batch.count > 1 else {
                for key in batch { try await delete(bucket: bucket, key: key) }
                continue
            }
            var body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>"
            for key in batch { body += "<Object><Key>\(S3XML.escape(key))</Key></Object>" }
            body += "</Delete>"
            let bytes = Array(body.utf8)
            let md5 = Data(Insecure.MD5.hash(data: bytes)).base64EncodedString()
            let response = try await send(
                "POST", bucket: bucket, key: nil, query: [("delete", "")],
                headers: ["content-md5": md5, "content-type": "application/xml"], body: bytes,
                accept: [200, 400, 405, 501])
            guard response.status == 200 else {
                // Not offered (NotImplemented, MethodNotAllowed): one request per key.
                for key in batch { try await delete(bucket: bucket, key: key) }
                continue
            }
            let asked = Set(batch)
            for error in S3XML.elements("Error", in: response.body) {
                guard let key = S3XML.firstValue(of: "Key", in: error), asked.contains(key) else { continue }
                failed.append((key, S3XML.firstValue(of: "Code", in: error) ?? "an error"))
            }
        }
        return failed
    }

    /// Writes a large object in parts of ``multipartPartSize`` bytes (a single PUT when it is
    /// smaller), aborting the upload when a part fails. A multipart upload always replaces an
    /// existing object: S3-compatible servers ignore `If-None-Match` on its completion.
    public func putMultipart(bucket: String, key: String, body: [UInt8], metadata: [String: String] = [:]) async throws
    {
        guard body.count > Self.multipartPartSize else {
            try await put(bucket: bucket, key: key, body: body, metadata: metadata)
            return
        }
        var headers: [String: String] = [:]
        for (name, value) in metadata { headers["x-amz-meta-" + name.lowercased()] = value }
        let created = try await send(
            "POST", bucket: bucket, key: key, query: [("uploads", "")], headers: headers, accept: [200])
        guard let uploadID = S3XML.firstValue(of: "UploadId", in: created.body) else {
            throw ReplicationError(.notS3, "The server started a multipart upload without an UploadId.", key: key)
        }
        do {
            var parts: [(Int, String)] = []
            var number = 1
            for start in stride(from: 0, to: body.count, by: Self.multipartPartSize) {
                let part = Array(body[start..<min(body.count, start + Self.multipartPartSize)])
                let response = try await send(
                    "PUT", bucket: bucket, key: key, query: [("partNumber", "\(number)"), ("uploadId", uploadID)],
                    headers: ["content-md5": Data(Insecure.MD5.hash(data: part)).base64EncodedString()], body: part,
                    accept: [200])
                parts.append((number, response.headers["etag"] ?? ""))
                number += 1
            }
            let document =
                "<CompleteMultipartUpload>"
                + parts.map { "<Part><PartNumber>\($0.0)</PartNumber><ETag>\(S3XML.escape($0.1))</ETag></Part>" }
                .joined()
                + "</CompleteMultipartUpload>"
            let completed = try await send(
                "POST", bucket: bucket, key: key, query: [("uploadId", uploadID)], body: Array(document.utf8),
                accept: [200])
            // A completion can fail after a 200 status: the error is then in the body.
            if S3XML.elements("Error", in: completed.body).first != nil {
                throw ReplicationError(
                    .unexpectedResponse,
                    "Completing the multipart upload failed: \(completed.errorCode ?? "unknown error").",
                    key: key)
            }
        } catch {
            _ = try? await send(
                "DELETE", bucket: bucket, key: key, query: [("uploadId", uploadID)], accept: [204, 200, 404])
            throw error
        }
    }

    /// Creates a bucket (tests and first-time setup); an existing bucket of the same owner is fine.
    public func createBucket(_ bucket: String) async throws {
        _ = try await send("PUT", bucket: bucket, key: nil, accept: [200, 409])
    }

    /// Deletes an empty bucket.
    public func deleteBucket(_ bucket: String) async throws {
        _ = try await send("DELETE", bucket: bucket, key: nil, accept: [200, 204, 404])
    }

    // MARK: Requests

    private func noSuchBucket(_ bucket: String) -> ReplicationError {
        ReplicationError(
            .noSuchBucket, "The bucket \(bucket) does not exist at \(configuration.endpoint); create it first.")
    }

    /// Sends one signed request, retrying as the policy says, and returns a response whose status
    /// is in `accept`.
    func send(
        _ method: String, bucket: String, key: String?, query: [(String, String)] = [], headers: [String: String] = [:],
        body: [UInt8] = [], accept: Set<Int>, limit: Int = S3Client.defaultResponseLimit,
        while mayAttempt: (@Sendable () async -> Bool)? = nil
    ) async throws -> Response {
        var lastFailure: (any Error & Sendable)?
        let target = "\(method) \(bucket)/\(printable(key ?? ""))"
        for attempt in 1...configuration.retry.attempts {
            if attempt > 1 {
                do {
                    try await Task.sleep(for: configuration.retry.delay(beforeRetry: attempt - 1))
                } catch {
                    throw ReplicationError(.cancelled, "Cancelled while retrying \(target).")
                }
            }
            if Task.isCancelled { throw ReplicationError(.cancelled, "Cancelled before \(target).") }
            if let mayAttempt, !(await mayAttempt()) {
                throw ReplicationError(
                    .unavailable,
                    "\(target) was not \(attempt > 1 ? "sent again" : "sent"): the time it could be sent in ran out.",
                    cause: lastFailure, key: key)
            }
            let response: Response
            do {
                response = try await once(
                    method, bucket: bucket, key: key, query: query, headers: headers, body: body, limit: limit)
            } catch let error as URLError {
                if error.code == .cancelled && Task.isCancelled {
                    throw ReplicationError(.cancelled, "Cancelled during \(target).")
                }
                lastFailure = error
                continue
            }
            if accept.contains(response.status) { return response }
            let code = response.errorCode
            switch response.status {
            case 500...599, 429:
                lastFailure = ReplicationError(
                    .unavailable, "\(target) failed with HTTP \(response.status) \(code ?? "")")
                continue
            case 400 where code == "RequestTimeout" || code == "SlowDown":
                lastFailure = ReplicationError(.unavailable, "\(target) failed with \(code!)")
                continue
            default: break
            }
            throw classify(response, target: target, bucket: bucket, key: key)
        }
        throw ReplicationError(
            .unavailable,
            "\(configuration.endpoint) could not be reached or kept failing: \(target) failed \(configuration.retry.attempts) times.",
            cause: lastFailure, key: key)
    }

    private func classify(_ response: Response, target: String, bucket: String, key: String?) -> ReplicationError {
        let code = response.errorCode
        if (300...399).contains(response.status) {
            return ReplicationError(
                .unexpectedResponse,
                "\(configuration.endpoint) answered \(target) with a redirect (HTTP \(response.status)); redirects are not followed, so that signed requests go to the configured endpoint only. Give the endpoint the bucket lives at.",
                key: key)
        }
        let isXML = String(decoding: response.body.prefix(256), as: UTF8.self).contains("<Error")
        if !isXML && response.status != 403 && response.status != 404 {
            return ReplicationError(
                .notS3,
                "\(configuration.endpoint) answered \(target) with HTTP \(response.status) and no S3 error document; it does not look like an S3 server.",
                key: key)
        }
        switch (response.status, code) {
        case (404, "NoSuchBucket"):
            return noSuchBucket(bucket)
        case (404, _) where !isXML:
            return ReplicationError(
                .notS3,
                "\(configuration.endpoint) answered \(target) with HTTP 404 and no S3 error document; it does not look like an S3 server.",
                key: key)
        case (403, _):
            return ReplicationError(
                .accessDenied,
                "\(configuration.endpoint) refused \(target) (\(code ?? "HTTP 403")): check the access key id (\(configuration.credentials.accessKeyID.prefix(4))…), the secret key and the bucket's permissions.",
                key: key)
        default:
            return ReplicationError(
                .unexpectedResponse, "\(target) failed with HTTP \(response.status) \(code ?? "")", key: key)
        }
    }

    private func once(
        _ method: String, bucket: String, key: String?, query: [(String, String)], headers: [String: String],
        body: [UInt8], limit: Int
    ) async throws -> Response {
        var path = configuration.endpoint.path
        while path.hasSuffix("/") { path.removeLast() }
        path += "/" + SignatureV4.encode(bucket)
        if let key { path += "/" + SignatureV4.encode(key, keepingSlash: true) }
        let queryText = query.map { "\(SignatureV4.encode($0.0))=\(SignatureV4.encode($0.1))" }.joined(separator: "&")
        var components = "\(configuration.endpoint.scheme!)://\(configuration.endpoint.host!)"
        if let port = configuration.endpoint.port { components += ":\(port)" }
        guard let url = URL(string: components + path + (queryText.isEmpty ? "" : "?" + queryText)) else {
            throw ReplicationError(.invalidArgument, "Could not form a URL for \(bucket)/\(key ?? "").")
        }
        var host = configuration.endpoint.host!
        if let port = configuration.endpoint.port { host += ":\(port)" }
        var signed = headers
        signed["host"] = host
        let payloadHash = SignatureV4.hex(SHA256.hash(data: body))
        signed["x-amz-content-sha256"] = payloadHash
        let authorization = signer.signedHeaders(
            method: method, path: path, query: query, headers: signed, payloadHash: payloadHash, date: Date())
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in signed.merging(authorization, uniquingKeysWith: { $1 }) where name != "host" {
            request.setValue(value, forHTTPHeaderField: name)
        }
        if !body.isEmpty || method == "PUT" || method == "POST" { request.httpBody = Data(body) }
        counter.record(method: method, listing: query.contains { $0.0 == "list-type" }, bytesSent: body.count)
        let http: HTTPURLResponse
        let data: Data
        switch try await transfers.send(request, on: session, limit: limit) {
        case .response(let response, let body):
            (http, data) = (response, body)
        case .failed(let error as URLError):
            throw error
        case .failed(let error):
            throw ReplicationError(
                .unavailable, "\(configuration.endpoint) did not answer \(method) \(bucket)/\(key ?? "").", cause: error
            )
        case .tooSlow(let received, let seconds, let expected):
            let rate = configuration.minimumRate
            throw ReplicationError(
                .tooSlow,
                "\(configuration.endpoint) sent \(bucket)/\(printable(key ?? "")) too slowly: \(received) bytes\(expected.map { " of \($0)" } ?? "") in \(Int(seconds)) seconds, under the minimum of \(rate.bytesPerSecond) bytes a second over \(Int(rate.windowSeconds)) seconds, so the request was cancelled. The network may be congested, or the endpoint (or someone on the way) may be holding the transfer open: try again, or, on a link this slow, lower the minimum with STATEJOURNAL_S3_MINIMUM_RATE=BYTES/SECONDS.",
                key: key)
        case .tooLarge(let limit):
            throw ReplicationError(
                .damagedObject,
                "\(bucket)/\(printable(key ?? "")) is larger than the \(limit) bytes it may have; it was not read.",
                key: key)
        }
        counter.received(data.count)
        var responseHeaders: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { responseHeaders[name.lowercased()] = value }
        }
        return Response(status: http.statusCode, headers: responseHeaders, body: [UInt8](data))
    }
}

/// Just enough XML for S3's answers: the text of elements by name, entities decoded.
enum S3XML {
    /// The inner bytes of every `<name>…</name>` element, in order (not nested in itself).
    static func elements(_ name: String, in body: [UInt8]) -> [[UInt8]] {
        let text = String(decoding: body, as: UTF8.self)
        var result: [[UInt8]] = []
        var rest = text[...]
        while let open = rest.range(of: "<\(name)>") {
            guard let close = rest[open.upperBound...].range(of: "</\(name)>") else { break }
            result.append(Array(rest[open.upperBound..<close.lowerBound].utf8))
            rest = rest[close.upperBound...]
        }
        return result
    }

    /// The decoded text of the first `<name>` element.
    static func firstValue(of name: String, in body: [UInt8]) -> String? {
        elements(name, in: body).first.map { unescape(String(decoding: $0, as: UTF8.self)) }
    }

    static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&#34;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

private final class RequestCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded = S3RequestCounts()
    func record(method: String, listing: Bool, bytesSent: Int) {
        lock.withLock { recorded.record(method: method, listing: listing, bytesSent: bytesSent) }
    }
    func received(_ bytes: Int) { lock.withLock { recorded.bytesReceived += Int64(bytes) } }
    var value: Int { lock.withLock { recorded.total } }
    var lists: Int { lock.withLock { recorded.lists } }
    var counts: S3RequestCounts { lock.withLock { recorded } }
}
