import Crypto
import Foundation

/// AWS Signature Version 4 for one request, signed in headers (the `Authorization` header).
///
/// The signer works on the parts of a request, so that it can be checked against AWS's published
/// examples byte for byte: ``canonicalRequest(method:path:query:headers:payloadHash:)``,
/// ``stringToSign(canonicalRequest:date:)`` and ``signature(stringToSign:date:)``.
public struct SignatureV4: Sendable {
    /// The keys requests are signed with.
    public var credentials: S3Credentials
    /// The region in the credential scope, such as `us-east-1`.
    public var region: String
    /// The service in the credential scope: `s3` for object storage.
    public var service: String

    /// Creates a signer.
    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The SHA-256 of an empty payload, in hex.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The headers to add to a request so that it is signed: `Authorization`, `x-amz-date`, and
    /// `x-amz-security-token` with temporary credentials.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `GET`.
    ///   - path: the request's path, already percent-encoded as it is sent (S3 encodes it once).
    ///   - query: the query parameters, not encoded.
    ///   - headers: every header the request sends that should be signed, `host` included.
    ///   - payloadHash: the SHA-256 of the body in hex, or `UNSIGNED-PAYLOAD`.
    ///   - date: the signing time.
    public func signedHeaders(
        method: String, path: String, query: [(String, String)], headers: [String: String], payloadHash: String,
        date: Date
    ) -> [String: String] {
        var all = headers
        all["x-amz-date"] = Self.amzDate(date)
        if let token = credentials.sessionToken { all["x-amz-security-token"] = token }
        let canonical = canonicalRequest(
            method: method, path: path, query: query, headers: all, payloadHash: payloadHash)
        let toSign = stringToSign(canonicalRequest: canonical, date: date)
        let names = Self.signedHeaderNames(all)
        var result: [String: String] = ["x-amz-date": all["x-amz-date"]!]
        if let token = credentials.sessionToken { result["x-amz-security-token"] = token }
        result["Authorization"] =
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope(date)), SignedHeaders=\(names), Signature=\(signature(stringToSign: toSign, date: date))"
        return result
    }

    /// The canonical request: method, path, sorted query, sorted lower-cased headers with trimmed
    /// values, the signed header names, and the payload hash, one per line.
    public func canonicalRequest(
        method: String, path: String, query: [(String, String)], headers: [String: String], payloadHash: String
    ) -> String {
        var pairs: [(String, String)] = query.map { pair in (Self.encode(pair.0), Self.encode(pair.1)) }
        pairs.sort { left, right in left.0 == right.0 ? left.1 < right.1 : left.0 < right.0 }
        let canonicalQuery = pairs.map { pair in pair.0 + "=" + pair.1 }.joined(separator: "&")
        var lines: [(String, String)] = []
        for (name, value) in headers { lines.append((name.lowercased(), Self.trim(value))) }
        lines.sort { $0.0 < $1.0 }
        let canonicalHeaders = lines.map { "\($0.0):\($0.1)\n" }.joined()
        return [
            method, path.isEmpty ? "/" : path, canonicalQuery, canonicalHeaders, Self.signedHeaderNames(headers),
            payloadHash,
        ].joined(separator: "\n")
    }

    /// The string to sign: the algorithm, the time, the credential scope and the canonical request's hash.
    public func stringToSign(canonicalRequest: String, date: Date) -> String {
        "AWS4-HMAC-SHA256\n\(Self.amzDate(date))\n\(scope(date))\n\(Self.hex(SHA256.hash(data: Array(canonicalRequest.utf8))))"
    }

    /// The signature of a string to sign, with the key derived for the date, region and service.
    public func signature(stringToSign: String, date: Date) -> String {
        var key = SymmetricKey(data: Array("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [String(Self.amzDate(date).prefix(8)), region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return Self.hex(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key))
    }

    func scope(_ date: Date) -> String { "\(Self.amzDate(date).prefix(8))/\(region)/\(service)/aws4_request" }

    static func signedHeaderNames(_ headers: [String: String]) -> String {
        headers.keys.map { $0.lowercased() }.sorted().joined(separator: ";")
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC.
    static func amzDate(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters (`/` included).
    static func encode(_ text: String, keepingSlash: Bool = false) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlash:
                result.append("/")
            default:
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }

    static func trim(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            .trimmingCharacters(in: .whitespaces)
    }

    static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        digest.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
