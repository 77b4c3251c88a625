import Crypto
import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif

/// A directory of sentinel files around the directory a restore writes into, so that a test can
/// show that nothing outside the target changed: not a byte, not an inode, not a mode.
///
/// ```
/// ROOT/precious.txt
/// ROOT/victim-store/MANIFEST
/// ROOT/work/neighbour.txt
/// ROOT/work/target/          <- restore --into
/// ```
struct Sandbox {
    let root: URL
    var target: URL { root.appendingPathComponent("work/target") }

    init() throws {
        root = try temporaryDirectory("sandbox")
        let manager = FileManager.default
        try manager.createDirectory(at: root.appendingPathComponent("victim-store"), withIntermediateDirectories: true)
        try manager.createDirectory(at: root.appendingPathComponent("work"), withIntermediateDirectories: true)
        for (name, text) in [
            ("precious.txt", "the user's own file"), ("victim-store/MANIFEST", "another store's manifest"),
            ("work/neighbour.txt", "a file beside the target"),
        ] {
            try Data(text.utf8).write(to: root.appendingPathComponent(name))
        }
    }

    /// Every file and directory under the root but inside the target: its inode, mode, size,
    /// modification time (but for the target's parent) and (for files) SHA-256, by path.
    func outsideTarget() -> [String: String] {
        var result: [String: String] = [:]
        let manager = FileManager.default
        guard let walker = manager.enumerator(atPath: root.path) else { return result }
        while let relative = walker.nextObject() as? String {
            if relative == "work/target" || relative.hasPrefix("work/target/") { continue }
            let path = root.appendingPathComponent(relative).path
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            var line = "\(info.st_ino) \(info.st_mode) \(info.st_size)"
            // The target's parent changes its time when the target is made or removed; nothing else may.
            if relative != "work" { line += " \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)" }
            if let bytes = manager.contents(atPath: path) { line += " " + SHA256.hash(data: bytes).description }
            result[relative] = line
        }
        return result
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
}

/// What a `statejournal restore` run did: its exit, its messages, its peak memory and its time.
struct ToolRun {
    /// The exit status, or the negated signal that ended it.
    var status: Int
    var output: String
    var error: String
    /// Peak resident set size in KiB.
    var peakKiB: Int
    var seconds: Double
}

/// Runs `statejournal` with `arguments` under a python3 wrapper that reports the child's peak
/// memory (`getrusage(RUSAGE_CHILDREN)`) and wall time. A run that lasts 15 minutes is killed (a
/// hang; the wall time is only printed, never held to a bound: the tests run on loaded machines).
func measuredTool(_ arguments: [String], environment: [String: String]) throws -> ToolRun {
    let logs = try temporaryDirectory("measured")
    defer { try? FileManager.default.removeItem(at: logs) }
    let measure = """
        import resource, subprocess, sys, time
        start = time.monotonic()
        with open(sys.argv[2], "w") as out, open(sys.argv[3], "w") as err:
            result = subprocess.run(sys.argv[4:], stdout=out, stderr=err, timeout=900)
        with open(sys.argv[1], "w") as f:
            f.write(f"{result.returncode} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} {time.monotonic() - start}")
        """
    let files = ["result", "out", "err"].map { logs.appendingPathComponent($0).path }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", measure] + files + [statejournalBinary.path] + arguments
    process.environment = environment
    try process.run()
    process.waitUntilExit()
    let fields = ((try? String(contentsOfFile: files[0], encoding: .utf8)) ?? "").split(separator: " ")
    guard fields.count == 3, let status = Int(fields[0]), let peak = Int(fields[1]), let seconds = Double(fields[2])
    else {
        throw Gateway.Missing(description: "the measuring wrapper did not report (exit \(process.terminationStatus))")
    }
    return ToolRun(
        status: status, output: (try? String(contentsOfFile: files[1], encoding: .utf8)) ?? "",
        error: (try? String(contentsOfFile: files[2], encoding: .utf8)) ?? "", peakKiB: peak, seconds: seconds)
}

/// A store shipped to a fresh prefix of the gateway, and what an attacker with write access to the
/// bucket can do to it.
struct ShippedReplica {
    let gateway: Gateway
    let location: S3Location
    let keyring: ReplicationKeyring?
    let directory: URL
    let store: URL
    /// The state of the store after each pass, by the generation the pass wrote.
    var states: [UInt64: [RestorationPath: [UInt8]]] = [:]
    var lastEpochs: [UInt64: UInt64] = [:]

    var client: S3Client { gateway.client() }
    /// The replica as the attacker reads it (with the key, where a test grants it).
    var replica: Replica { Replica(client: client, location: location, keyring: keyring) }

    /// Ships a store of `passes.count` passes, each committing that many epochs; every file's bytes
    /// go up as objects of their own unless `inline`, when generations carry them as a shipper's do
    /// by default.
    static func ship(
        _ gateway: Gateway, bucket: String, prefix: String, keyring: ReplicationKeyring? = nil, passes: [Int] = [6, 4],
        inline: Bool = false
    ) async throws -> ShippedReplica {
        let directory = try temporaryDirectory("shipped")
        let store = directory.appendingPathComponent("store")
        var shipped = ShippedReplica(
            gateway: gateway, location: S3Location(bucket: bucket, prefix: prefix), keyring: keyring,
            directory: directory, store: store)
        let journal = try Journal.open(at: store, options: JournalOptions(durability: .everyCommit))
        defer { try? journal.close() }
        let shipper = ReplicationShipper(
            store: store, to: shipped.location, configuration: gateway.configuration(),
            options: inline
                ? ReplicationOptions(keyring: keyring) : .separateObjects(ReplicationOptions(keyring: keyring)))
        for count in passes {
            try commit(journal, count: count, marker: prefix)
            let report = try await shipper.shipOnce()
            let generation = try #require(report.generation)
            shipped.states[generation] = try journal.state().entries
            shipped.lastEpochs[generation] = report.lastEpoch
        }
        return shipped
    }

    var newestGeneration: UInt64 { states.keys.max() ?? 0 }

    /// The replica bound to the identity its `replica.json` states, as a restore reads it.
    func boundReplica() async throws -> Replica {
        guard let identity = try await replica.identity() else { return replica }
        return replica.bound(to: identity)
    }

    /// Generation `number` as its shipper wrote it.
    func generation(_ number: UInt64) async throws -> ReplicaGeneration {
        let payload = try #require(
            try await boundReplica().get(
                ReplicaLayout.generation(number), maximumPayload: ReplicaLimits.maximumGenerationBytes))
        return try ReplicaGeneration.decode(payload, key: ReplicaLayout.generation(number))
    }

    /// Writes `generation` as generation `number`, sealed with `keyring` (an attacker has none: in
    /// the clear), replacing whatever is there.
    ///
    /// The bytes the generation in its place carried inline (version 3) are carried on, so that the
    /// forged generation differs from the shipper's only where it was changed.
    func forge(_ generation: ReplicaGeneration, as number: UInt64, keyring: ReplicationKeyring? = nil) async throws {
        let name = ReplicaLayout.generation(number)
        let existing = try? await boundReplica().get(name, maximumPayload: ReplicaLimits.maximumGenerationBytes)
        let inline = existing.flatMap { try? GenerationContainer.open($0, key: name).inline }.map { Array($0) } ?? []
        try await put(
            name, payload: try GenerationContainer.seal(generation, inline: inline), keyring: keyring,
            storeID: generation.storeID)
    }

    /// Writes an object's payload in an envelope sealed with `keyring` for `storeID` and for this
    /// replica (or in the clear).
    func put(_ name: String, payload: [UInt8], keyring: ReplicationKeyring? = nil, storeID: String? = nil)
        async throws
    {
        let replicaID = keyring == nil ? nil : try await replica.identity()?.replicaID
        let bytes = try ObjectEnvelope.seal(
            payload, name: name, keyring: keyring, storeID: storeID, replicaID: replicaID)
        try await client.put(bucket: location.bucket, key: location.prefix + name, body: bytes)
    }

    /// Writes raw bytes as the object `name`.
    func putRaw(_ name: String, _ bytes: [UInt8]) async throws {
        if bytes.count > S3Client.multipartPartSize {
            try await client.putMultipart(bucket: location.bucket, key: location.prefix + name, body: bytes)
        } else {
            try await client.put(bucket: location.bucket, key: location.prefix + name, body: bytes)
        }
    }

    /// Copies the object `name` of `other` here, byte for byte, as `newName`.
    func copy(_ name: String, from other: ShippedReplica, as newName: String? = nil) async throws {
        let bytes = try #require(
            try await client.get(bucket: other.location.bucket, key: other.location.prefix + name))
        try await putRaw(newName ?? name, bytes)
    }

    /// `restore` as a user runs it, into `target`, with the key file when the replica has a key.
    func restoreWithTool(into target: URL, extra: [String] = [], keyFile: URL? = nil) throws -> ToolRun {
        var arguments = ["restore", "s3://\(location.bucket)/\(location.prefix)", "--into", target.path] + extra
        if let keyFile { arguments += ["--key-file", keyFile.path] }
        return try measuredTool(arguments, environment: gateway.childEnvironment)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// A key file holding `key`, in `directory`.
func keyFile(for key: ReplicationKey, bytes: [UInt8], in directory: URL) throws -> URL {
    let url = directory.appendingPathComponent("key-\(key.id)")
    let hex = bytes.map { String(format: "%02x", $0) }.joined()
    try Data("\(key.id):\(hex)\n".utf8).write(to: url)
    return url
}
