import Foundation
import Testing

@testable import StateJournalReplication

/// AWS's published examples: the generic SigV4 test suite (credentials `AKIDEXAMPLE`) and the S3
/// header-authentication examples (`AKIAIOSFODNN7EXAMPLE`, bucket `examplebucket`).
@Suite struct SignatureV4Tests {
    static let suiteSigner = SignatureV4(
        credentials: S3Credentials(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1", service: "service")
    static let suiteDate = Date(timeIntervalSince1970: 1_440_938_160)  // 20150830T123600Z
    static let s3Signer = SignatureV4(
        credentials: S3Credentials(
            accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    static let s3Date = Date(timeIntervalSince1970: 1_369_353_600)  // 20130524T000000Z

    @Test func theSignatureOfGetVanillaIsTheOneAWSPublishes() {
        let headers = Self.suiteSigner.signedHeaders(
            method: "GET", path: "/", query: [], headers: ["host": "example.amazonaws.com"],
            payloadHash: SignatureV4.emptyPayloadHash, date: Self.suiteDate)
        #expect(headers["x-amz-date"] == "20150830T123600Z")
        #expect(
            headers["Authorization"]
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        )
    }

    @Test func theCanonicalRequestOfGetVanillaIsTheOneAWSPublishes() {
        let canonical = Self.suiteSigner.canonicalRequest(
            method: "GET", path: "/", query: [],
            headers: ["Host": "example.amazonaws.com", "X-Amz-Date": "20150830T123600Z"],
            payloadHash: SignatureV4.emptyPayloadHash)
        #expect(
            canonical
                == "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        )
        #expect(
            Self.suiteSigner.stringToSign(canonicalRequest: canonical, date: Self.suiteDate)
                == "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63"
        )
    }

    @Test func queryParametersAreSortedBeforeSigningAsInGetVanillaQueryOrderKeyCase() {
        let headers = Self.suiteSigner.signedHeaders(
            method: "GET", path: "/", query: [("Param2", "value2"), ("Param1", "value1")],
            headers: ["host": "example.amazonaws.com"], payloadHash: SignatureV4.emptyPayloadHash,
            date: Self.suiteDate)
        #expect(
            headers["Authorization"]?.hasSuffix("b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500")
                == true)
    }

    @Test func theS3GetObjectExampleWithARangeSignsAsAWSPublishes() {
        let headers = Self.s3Signer.signedHeaders(
            method: "GET", path: "/test.txt", query: [],
            headers: [
                "host": "examplebucket.s3.amazonaws.com", "range": "bytes=0-9",
                "x-amz-content-sha256": SignatureV4.emptyPayloadHash,
            ], payloadHash: SignatureV4.emptyPayloadHash, date: Self.s3Date)
        #expect(
            headers["Authorization"]
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        )
    }

    @Test func theS3PutObjectExampleSignsAsAWSPublishes() {
        let payloadHash = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"
        #expect(SignatureV4.hex(Array("Welcome to Amazon S3.".utf8).sha256) == payloadHash)
        let headers = Self.s3Signer.signedHeaders(
            method: "PUT", path: "/test%24file.text", query: [],
            headers: [
                "host": "examplebucket.s3.amazonaws.com", "date": "Fri, 24 May 2013 00:00:00 GMT",
                "x-amz-storage-class": "REDUCED_REDUNDANCY", "x-amz-content-sha256": payloadHash,
            ], payloadHash: payloadHash, date: Self.s3Date)
        #expect(
            headers["Authorization"]?.hasSuffix(
                "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd") == true)
    }

    @Test func theS3ListObjectsAndLifecycleExamplesSignAsAWSPublishes() {
        let base = [
            "host": "examplebucket.s3.amazonaws.com", "x-amz-content-sha256": SignatureV4.emptyPayloadHash,
        ]
        let list = Self.s3Signer.signedHeaders(
            method: "GET", path: "/", query: [("prefix", "J"), ("max-keys", "2")], headers: base,
            payloadHash: SignatureV4.emptyPayloadHash, date: Self.s3Date)
        #expect(
            list["Authorization"]?.hasSuffix("34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7") == true
        )
        let lifecycle = Self.s3Signer.signedHeaders(
            method: "GET", path: "/", query: [("lifecycle", "")], headers: base,
            payloadHash: SignatureV4.emptyPayloadHash, date: Self.s3Date)
        #expect(
            lifecycle["Authorization"]?.hasSuffix("fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
                == true)
    }

    @Test func credentialsNeverShowTheirSecretsInDescriptions() {
        let credentials = S3Credentials(
            accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "SECRETSECRET", sessionToken: "TOKENTOKEN")
        let texts = [
            "\(credentials)", String(reflecting: credentials),
            "\(S3Configuration(endpoint: URL(string: "http://h")!, region: "r", credentials: credentials))",
        ]
        for text in texts {
            #expect(
                !text.contains("SECRETSECRET") && !text.contains("TOKENTOKEN") && !text.contains("AKIAIOSFODNN7EXAMPLE")
            )
        }
    }

    @Test func credentialsComeFromTheEnvironmentThenTheSharedFileProfile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("creds-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("credentials")
        try
            "[default]\naws_access_key_id = DEFAULTID\naws_secret_access_key = defaultsecret\n\n[work]\naws_access_key_id=WORKID\naws_secret_access_key=worksecret\naws_session_token=worktoken\n"
            .write(to: file, atomically: true, encoding: .utf8)
        let fromVariables = try S3Credentials.fromEnvironment([
            "AWS_ACCESS_KEY_ID": "ENVID", "AWS_SECRET_ACCESS_KEY": "envsecret", "AWS_SESSION_TOKEN": "envtoken",
            "AWS_SHARED_CREDENTIALS_FILE": file.path,
        ])
        #expect(
            fromVariables == S3Credentials(accessKeyID: "ENVID", secretAccessKey: "envsecret", sessionToken: "envtoken")
        )
        let fromProfile = try S3Credentials.fromEnvironment([
            "AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "work",
        ])
        #expect(
            fromProfile
                == S3Credentials(accessKeyID: "WORKID", secretAccessKey: "worksecret", sessionToken: "worktoken"))
        let fromDefault = try S3Credentials.fromEnvironment([
            "HOME": directory.path, "AWS_SHARED_CREDENTIALS_FILE": file.path,
        ])
        #expect(fromDefault.accessKeyID == "DEFAULTID")
        #expect(throws: ReplicationError.self) {
            try S3Credentials.fromEnvironment([
                "HOME": directory.path, "AWS_SHARED_CREDENTIALS_FILE": directory.path + "/none",
            ])
        }
    }

    @Test func theMinimumTransferRateComesFromTheEnvironmentAndRefusesNonsense() throws {
        let base = ["AWS_ACCESS_KEY_ID": "ID", "AWS_SECRET_ACCESS_KEY": "secret"]
        let defaults = try S3Configuration.fromEnvironment(environment: base)
        #expect(defaults.minimumRate == MinimumTransferRate(bytesPerSecond: 1024, window: .seconds(30)))
        var slow = base
        slow["STATEJOURNAL_S3_MINIMUM_RATE"] = "256/60"
        #expect(
            try S3Configuration.fromEnvironment(environment: slow).minimumRate
                == MinimumTransferRate(bytesPerSecond: 256, window: .seconds(60)))
        #expect(try MinimumTransferRate(parsing: "0").bytesPerSecond == 0)
        #expect(try MinimumTransferRate(parsing: "2048").window == ReplicaLimits.transferRateWindow)
        for text in ["", "-1", "1/0", "1/3601", "1/2/3", "fast", "99999999999999999999", "1/"] {
            #expect(throws: ReplicationError.self, "\(text)") { try MinimumTransferRate(parsing: text) }
        }
    }

    @Test func retryDelaysGrowExponentiallyWithJitterUnderACap() {
        let policy = RetryPolicy(attempts: 6, baseDelay: .milliseconds(100), maximumDelay: .seconds(1))
        for retry in 1...10 {
            let ceiling = min(Duration.seconds(1), .milliseconds(100) * (1 << (retry - 1)))
            for _ in 0..<50 { #expect(policy.delay(beforeRetry: retry) <= ceiling) }
        }
        let delays = (0..<50).map { _ in policy.delay(beforeRetry: 3) }
        #expect(Set(delays).count > 1)
    }
}

extension Array where Element == UInt8 {
    var sha256: [UInt8] {
        import_sha256(self)
    }
}
