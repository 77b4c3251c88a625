import ArgumentParser
import Dispatch
import Foundation
import Logging
import StateJournal
import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif

/// The options every command that talks to object storage takes.
struct ObjectStorageOptions: ParsableArguments {
    @Option(
        help:
            "The S3 endpoint, such as http://127.0.0.1:7480 (default: AWS_ENDPOINT_URL, else AWS's regional endpoint).")
    var endpoint: String?

    @Option(help: "The region requests are signed for (default: AWS_REGION, else us-east-1).")
    var region: String?

    @Option(
        help: ArgumentHelp(
            "A file of ID:KEY lines (KEY: 64 hex digits or base64 of 32 bytes), the first being the key new objects are encrypted with (default: the key in STATEJOURNAL_REPLICATION_KEY, else no encryption).",
            valueName: "path"))
    var keyFile: String?

    func configuration() throws -> S3Configuration {
        try S3Configuration.fromEnvironment(endpoint: endpoint, region: region)
    }

    /// The replica named by `text` (`s3://BUCKET/PREFIX`), the configuration and the keyring, or a
    /// usage error saying what is wrong with them.
    func replicaAccess(_ text: String) throws -> (S3Location, S3Configuration, ReplicationKeyring?) {
        do {
            return (try S3Location(parsing: text), try configuration(), try keyring())
        } catch let error as ReplicationError {
            throw ValidationError(error.message)
        }
    }

    func keyring() throws -> ReplicationKeyring? {
        if let keyFile { return try ReplicationKeyring(contentsOfFile: keyFile) }
        if let text = ProcessInfo.processInfo.environment["STATEJOURNAL_REPLICATION_KEY"], !text.isEmpty {
            return ReplicationKeyring(current: try ReplicationKey(parsing: text))
        }
        return nil
    }
}

extension Logger {
    /// A logger that writes to standard error at `info` and above: what the replication commands log.
    static func standardError(_ label: String) -> Logger {
        var logger = Logger(label: label, factory: { label in StreamLogHandler.standardError(label: label) })
        logger.logLevel = .info
        return logger
    }
}

/// Runs async replication work from a synchronous command: turns a `ReplicationError` or a
/// `JournalError` into one sentence on standard error and exit status 1 (2 when the directory holds
/// no store), and cancels the work on SIGTERM or SIGINT.
func runReplication(_ body: @escaping @Sendable () async throws -> Void) throws {
    StandardStream.prepare()
    let done = DispatchSemaphore(value: 0)
    let outcome = OutcomeBox()
    // The signals are handled before the work starts, so that none comes while nothing would
    // cancel it, and one that comes before the task exists cancels it as it starts.
    let cancellation = PendingCancellation()
    var sources: [any DispatchSourceSignal] = []
    for number in [SIGTERM, SIGINT] {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { cancellation.request() }
        source.resume()
        sources.append(source)
    }
    cancellation.start(
        Task {
            do {
                try await body()
            } catch {
                outcome.set(error)
            }
            done.signal()
        })
    done.wait()
    for source in sources { source.cancel() }
    switch outcome.error {
    case nil: return
    case let error as ReplicationError:
        if let cause = error.cause as? JournalError, error.code == .store {
            printError(ExitStatus.message(for: cause))
            throw ExitCode(ExitStatus(for: cause).rawValue)
        }
        printError(error.message)
        throw ExitCode(ExitStatus(for: error).rawValue)
    case let error as JournalError:
        printError(ExitStatus.message(for: error))
        throw ExitCode(ExitStatus(for: error).rawValue)
    case let error?:
        throw error
    }
}

extension ExitStatus {
    /// The status for a replication error: the store's meanings carried over to the replica (no
    /// replica is no input, an unreadable one is a data error, a refused key or credential is a
    /// permission error, a server that cannot be reached is an I/O error).
    init(for error: ReplicationError) {
        switch error.code {
        case .invalidArgument, .missingCredentials, .noSuchEpoch: self = .usage
        case .noSuchBucket, .nothingShipped: self = .noInput
        case .accessDenied, .wrongKey, .missingKey: self = .noPermission
        case .notS3, .unavailable, .unexpectedResponse, .tooSlow: self = .ioError
        case .foreignPrefix, .otherStore, .damagedObject, .unauthenticated: self = .dataError
        case .targetNotEmpty: self = .cannotCreate
        case .shipperRunning: self = .locked
        case .cancelled: self = .interrupted
        case .fenced, .diverged: self = .fenced
        default: self = .software
        }
    }
}

private final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (any Error)?
    func set(_ error: any Error) { lock.withLock { stored = error } }
    var error: (any Error)? { lock.withLock { stored } }
}

struct ReplicateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replicate",
        abstract: "Ship a store to S3-compatible object storage, continuously, until SIGTERM or SIGINT.",
        discussion: """
            Opens the store read-only, beside the app's writer. Sealed segments and checkpoints go up whole, the live \
            segment's committed tail in pieces (at most about --interval behind), and after them a generation naming \
            them. Only the shipper holding the replica's lease writes generations: a second one waits, and takes \
            over when the lease is released or expires (or at once with --take-over); a shipper whose lease another \
            took exits 76. On SIGTERM or SIGINT it ships what is committed, gives the lease up, then exits 0. Credentials come from \
            AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or the shared credentials file \
            (~/.aws/credentials, profile AWS_PROFILE).
            """)

    @Argument(help: "The store directory.", completion: .directory)
    var directory: String

    @Option(help: "Where to ship: s3://BUCKET/PREFIX.")
    var to: String

    @OptionGroup var storage: ObjectStorageOptions

    @Option(
        help:
            "Seconds the replica may fall behind the store: a pass starts every 0.92 of it, and its upload follows."
    )
    var interval: Double = 1

    @Option(help: "Hours that generations from before a compaction are kept, for restores to older epochs.")
    var retentionHours: Double = 24

    @Option(
        help:
            "Seconds the shipper's lease on the replica lasts unrenewed: another shipper of the store takes over once neither the lease nor the generations have changed for this long."
    )
    var leaseSeconds: Double = 10

    @Option(help: idleLeaseHelp)
    var idleLeaseSeconds: Double = 600

    @Flag(
        help:
            "Take the lease at once, even while another shipper holds it (the operator's decision that it is gone); that shipper is fenced at its next pass."
    )
    var takeOver = false

    func validate() throws {
        guard leaseSeconds >= 0.5, leaseSeconds <= 3600 else {
            throw ValidationError("--lease-seconds must be between 0.5 and 3600.")
        }
        try validateIdleLease(idleLeaseSeconds, lease: leaseSeconds)
    }

    func run() throws {
        let (location, configuration, keyring) = try storage.replicaAccess(to)
        let logger = Logger.standardError("statejournal.replicate")
        var options = ReplicationOptions(
            interval: .milliseconds(Int64(max(interval, 0.01) * 1000)),
            retention: .seconds(Int64(retentionHours * 3600)), keyring: keyring, logger: logger)
        options.leaseDuration = .milliseconds(Int64(leaseSeconds * 1000))
        options.idleLeaseDuration = .milliseconds(Int64(idleLeaseSeconds * 1000))
        options.takesOverImmediately = takeOver
        let store = URL(fileURLWithPath: directory)
        let interval = interval
        try runReplication { [logger, options] in
            logger.info(
                "replicating \(store.path) to \(location) at \(configuration.endpoint) every \(interval) s\(keyring.map { ", encrypting with key \($0.current.id)" } ?? "")"
            )
            let shipper = ReplicationShipper(store: store, to: location, configuration: configuration, options: options)
            try await shipper.run()
            let shipped = await shipper.generationsWritten > 0
            let claimed = await shipper.hasClaimedReplica
            logger.info(
                shipped
                    ? "stopped; the replica holds every epoch committed before the signal"
                    : claimed
                        ? "stopped while another shipper held the replica's lease; this one shipped nothing"
                        : "stopped before it could reach \(location) at \(configuration.endpoint); this one shipped nothing"
            )
        }
    }
}

struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract:
            "Write a local store from a replica in S3-compatible object storage, as of its latest epoch, an epoch or a time.",
        discussion: """
            Every object is checked; the store written is verified down to its framing (every record and checkpoint \
            checksum, every commit) before the command says it is done, in memory that does not grow with the store; \
            `statejournal verify DIR` replays it whole. When an object is damaged the store stops at the latest consistent epoch before it; the command names the object and the \
            epochs lost and exits 1. With --delta, DIR may hold an older copy of the same store: only the objects \
            it lacks are fetched, the new store is built in DIR.restoring and replaces DIR once verified, and a \
            restore that was interrupted resumes when run again.
            """)

    @Argument(help: "The replica: s3://BUCKET/PREFIX.")
    var replica: String

    @Option(
        help: "The new store's directory (must not exist, or be empty; with --delta, may hold the same store).",
        completion: .directory)
    var into: String

    @Flag(
        help:
            "Update an older copy of the same store in the directory (or resume an interrupted delta restore), fetching only what it lacks."
    )
    var delta = false

    @Option(help: "The epoch the restored store ends at (default: the latest).")
    var epoch: UInt64?

    @Option(help: "Restore the latest epoch committed at or before this time (RFC 3339, as `log` prints it).")
    var at: String?

    @OptionGroup var storage: ObjectStorageOptions

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if epoch != nil && at != nil { throw ValidationError("Give --epoch or --at, not both.") }
        if let at { _ = try parseTime(at, option: "--at") }
    }

    func run() throws {
        let (location, configuration, keyring) = try storage.replicaAccess(replica)
        let target: RestoreTarget =
            try epoch.map { .epoch($0) } ?? at.map { .time(try parseTime($0, option: "--at")) } ?? .latest
        let directory = URL(fileURLWithPath: into)
        let json = json
        let delta = delta
        let damaged = OutcomeFlag()
        try runReplication {
            let report = try await ReplicaRestorer(from: location, configuration: configuration, keyring: keyring)
                .restore(into: directory, target: target, delta: delta)
            for damage in report.damage {
                printError("\(damage). Restored the latest consistent epoch before it.")
                damaged.set()
            }
            for orphan in report.orphans {
                printError(
                    "note: \(orphan); it is not in the replica's history (a late write of a shipper that had lost its lease), and was not restored from."
                )
            }
            if json {
                try printJSON(document: restoreDocument(report, directory: directory.path))
            } else {
                print(
                    "Restored \(directory.path): epoch \(report.epoch.epoch) (\(report.epoch.timestamp.iso8601)) from generation \(report.generation) of \(location), \(report.objectsDownloaded) objects, \(report.bytesDownloaded) bytes"
                        + (delta
                            ? " fetched, \(report.objectsReused) objects, \(report.bytesReused) bytes reused from the local copy"
                            : "") + "; verified clean."
                )
            }
        }
        if damaged.isSet { throw ExitCode(1) }
    }
}

/// The task a signal cancels, and whether one came before it started.
private final class PendingCancellation: @unchecked Sendable {
    // @unchecked Sendable: both properties are read and written under `lock` only.
    private let lock = NSLock()
    private var task: Task<Void, Never>?
    private var requested = false

    func request() {
        lock.withLock {
            requested = true
            return task
        }?.cancel()
    }

    func start(_ task: Task<Void, Never>) {
        if lock.withLock({
            self.task = task
            return requested
        }) {
            task.cancel()
        }
    }
}

private final class OutcomeFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// What `restore --json` prints (see the CommandLineJSON article).
func restoreDocument(_ report: RestoreReport, directory: String) -> [String: JSON] {
    [
        "directory": .string(directory), "epoch": .epoch(report.epoch), "generation": .int(report.generation),
        "objectsDownloaded": .int(report.objectsDownloaded), "bytesDownloaded": .int(report.bytesDownloaded),
        "objectsReused": .int(report.objectsReused), "bytesReused": .int(report.bytesReused),
        "verified": .string("clean"),
        "damagedObjects": .array(
            report.damage.map { damage in
                .object([
                    "key": .string(damage.key), "file": .string(damage.file.isEmpty ? nil : damage.file),
                    "reason": .string(damage.reason), "firstEpochLost": .int(damage.epochsLost?.lowerBound),
                    "lastEpochLost": .int(damage.epochsLost?.upperBound),
                ])
            }),
        "orphanedGenerations": .array(
            report.orphans.map { orphan in
                .object([
                    "generation": .int(orphan.generation), "term": .int(orphan.term),
                    "firstEpoch": .int(orphan.epochs?.lowerBound), "lastEpoch": .int(orphan.epochs?.upperBound),
                    "reason": .string(orphan.reason),
                ])
            }),
    ]
}

/// The help of `--idle-lease-seconds`.
let idleLeaseHelp = ArgumentHelp(
    "Seconds the lease lasts once the shipper is idle, while a standby (follow --failover) watches the replica.",
    discussion:
        "The lease is then written every half of it. With no standby, an idle shipper's lease is dormant: it sends nothing, and nobody takes the lease over unless it is given up or taken with --take-over."
)

/// Checks `--idle-lease-seconds` against `--lease-seconds`.
func validateIdleLease(_ idle: Double, lease: Double) throws {
    guard idle >= lease, idle <= 3600 else {
        throw ValidationError("--idle-lease-seconds must be between --lease-seconds and 3600.")
    }
}
