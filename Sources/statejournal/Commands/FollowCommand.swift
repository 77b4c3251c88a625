import ArgumentParser
import Foundation
import Logging
import StateJournal
import StateJournalReplication

struct FollowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "follow",
        abstract:
            "Keep a local store up to date with a replica in S3-compatible object storage, until SIGTERM or SIGINT.",
        discussion: """
            The first generation is brought in as `restore` brings it (the directory must be missing or empty), or the \
            store already in the directory is continued (it must be the replica's store). Then it asks for the next \
            generation every --interval seconds (every quarter second while generations keep coming) and applies it in \
            place: readers (`log`, `show`, `history`, `timeline`, a read-only open) can read the directory all the while. \
            It holds the store's writer lock, so nothing opens the directory for writing. On SIGTERM or SIGINT it \
            abandons a generation it is applying, leaving the store as it was, and exits 0. With --failover it is the \
            standby of a primary: when the primary gives the replica's lease up or its lease expires, it takes the \
            lease in the next term, applies what the primary shipped before, and ships the store from then on (exit 76 \
            when another shipper later takes over from it). A directory whose store has a history of its own (epochs \
            the replica does not have, or that contradict it: a fenced primary's store) is never overwritten: the \
            command exits 76 naming those epochs, or with --set-aside-diverged renames the directory beside itself \
            and follows into a new one.
            """)

    @Argument(help: "The replica: s3://BUCKET/PREFIX.")
    var replica: String

    @Option(
        help: "The local store's directory (missing, empty, or holding the replica's store).", completion: .directory)
    var into: String

    @Option(help: "Seconds between polls while the replica does not change.")
    var interval: Double = 1

    @Flag(
        help:
            "Take over as the primary when the replica's lease is given up or expires, then ship the store like replicate."
    )
    var failover = false

    @Flag(
        help:
            "When the directory holds a store of another history (epochs the replica does not have, or that contradict it), rename it to DIR.diverged-EPOCH-TIME beside it and follow into a new DIR, instead of exiting 76."
    )
    var setAsideDiverged = false

    @Option(help: "Seconds the lease lasts unrenewed once this host ships (with --failover).")
    var leaseSeconds: Double = 10

    @Option(help: idleLeaseHelp)
    var idleLeaseSeconds: Double = 600

    @OptionGroup var storage: ObjectStorageOptions

    func validate() throws {
        guard leaseSeconds >= 0.5, leaseSeconds <= 3600 else {
            throw ValidationError("--lease-seconds must be between 0.5 and 3600.")
        }
        try validateIdleLease(idleLeaseSeconds, lease: leaseSeconds)
    }

    func run() throws {
        let (location, configuration, keyring) = try storage.replicaAccess(replica)
        let logger = Logger.standardError("statejournal.follow")
        let slow = Duration.milliseconds(Int64(max(interval, 0.01) * 1000))
        var options = ReplicaFollower.Options(
            pollInterval: slow, activePollInterval: min(slow, .milliseconds(250)), keyring: keyring, logger: logger)
        options.setsAsideDivergedStore = setAsideDiverged
        let directory = URL(fileURLWithPath: into)
        var shipping = ReplicationOptions(keyring: keyring, logger: logger)
        shipping.leaseDuration = .milliseconds(Int64(leaseSeconds * 1000))
        shipping.idleLeaseDuration = .milliseconds(Int64(idleLeaseSeconds * 1000))
        let failover = failover
        try runReplication { [logger, shipping, options] in
            logger.info("following \(location) at \(configuration.endpoint) into \(directory.path)")
            let follower = ReplicaFollower(
                from: location, into: directory, configuration: configuration, options: options)
            guard failover else {
                try await follower.run()
                logger.info("stopped; \(directory.path) holds the last generation applied")
                return
            }
            guard try await standBy(until: follower, holdsAGenerationPollingEvery: slow, logger: logger) else {
                logger.info("stopped while standing by; \(directory.path) holds no generation yet")
                return
            }
            try await promoteAndShip(follower, shipping: shipping, logger: logger)
        }
    }
}

/// Waits, asking every `interval`, until the replica holds a generation and `follower` has applied
/// it: a standby started on its host before the primary first shipped (two hosts started together)
/// waits for it rather than exit. Returns `false` when cancelled meanwhile.
func standBy(
    until follower: ReplicaFollower, holdsAGenerationPollingEvery interval: Duration, logger: Logger
) async throws -> Bool {
    var said = false
    while true {
        do {
            try await follower.followOnce()
            return true
        } catch let error as ReplicationError where error.code == .cancelled {
            return false
        } catch let error as ReplicationError where error.code == .nothingShipped || error.code == .unavailable {
            if !said {
                said = true
                logger.notice("\(error.message) Standing by until its primary ships.")
            }
        }
        do {
            try await Task.sleep(for: interval)
        } catch {
            return false
        }
    }
}

/// Promotes `follower` (waiting, following, while another shipper holds the lease) and ships its
/// store until SIGTERM or SIGINT.
func promoteAndShip(_ follower: ReplicaFollower, shipping: ReplicationOptions, logger: Logger) async throws {
    let shipper: ReplicationShipper
    let report: PromotionReport
    do {
        (shipper, report) = try await follower.promote(shipping: shipping)
    } catch let error as ReplicationError where error.code == .cancelled {
        // A standby stopped by its service manager: nothing failed.
        logger.info("stopped while standing by; \(follower.directory.path) holds the last generation applied")
        return
    }
    logger.notice(
        "\(follower.directory.path) is the primary of \(follower.location) in term \(report.term) (after term \(report.previousTerm)\(report.forced ? ", taken over by force" : "")); the replica's history continues from epoch \(report.lastEpoch.map(String.init) ?? "none")"
    )
    try await shipper.run()
    logger.info("stopped; the replica holds every epoch committed before the signal")
}

struct PromoteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "promote",
        abstract: "Make a follower's store the primary of its replica, then ship it until SIGTERM or SIGINT.",
        discussion: """
            Stop `statejournal follow` on the directory first. The command brings the store up to the replica, takes \
            the replica's lease in the next term once the primary has given it up or its lease has expired (following \
            meanwhile), or at once with --take-over: the operator's decision that the primary is gone, which fences it \
            at its next pass. Then it ships the store like `replicate`; open the store for writing once it says it is \
            the primary. Epochs the old primary committed after the last one it shipped are not in the promoted store.
            """)

    @Argument(help: "The replica: s3://BUCKET/PREFIX.")
    var replica: String

    @Option(help: "The follower's store directory.", completion: .directory)
    var into: String

    @Flag(help: "Take the lease at once, even while the primary holds it.")
    var takeOver = false

    @Option(help: "Seconds the lease lasts unrenewed.")
    var leaseSeconds: Double = 10

    @Option(help: idleLeaseHelp)
    var idleLeaseSeconds: Double = 600

    @Option(help: "Seconds the replica may fall behind the store once shipping.")
    var interval: Double = 1

    @OptionGroup var storage: ObjectStorageOptions

    func validate() throws {
        guard leaseSeconds >= 0.5, leaseSeconds <= 3600 else {
            throw ValidationError("--lease-seconds must be between 0.5 and 3600.")
        }
        try validateIdleLease(idleLeaseSeconds, lease: leaseSeconds)
    }

    func run() throws {
        let (location, configuration, keyring) = try storage.replicaAccess(replica)
        let logger = Logger.standardError("statejournal.promote")
        var shipping = ReplicationOptions(
            interval: .milliseconds(Int64(max(interval, 0.01) * 1000)), keyring: keyring, logger: logger)
        shipping.leaseDuration = .milliseconds(Int64(leaseSeconds * 1000))
        shipping.idleLeaseDuration = .milliseconds(Int64(idleLeaseSeconds * 1000))
        shipping.takesOverImmediately = takeOver
        let directory = URL(fileURLWithPath: into)
        try runReplication { [logger, shipping] in
            let follower = ReplicaFollower(
                from: location, into: directory, configuration: configuration,
                options: ReplicaFollower.Options(keyring: keyring, logger: logger))
            try await promoteAndShip(follower, shipping: shipping, logger: logger)
        }
    }
}
