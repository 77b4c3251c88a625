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
            abandons a generation it is applying, leaving the store as it was, and exits 0.
            """)

    @Argument(help: "The replica: s3://BUCKET/PREFIX.")
    var replica: String

    @Option(
        help: "The local store's directory (missing, empty, or holding the replica's store).", completion: .directory)
    var into: String

    @Option(help: "Seconds between polls while the replica does not change.")
    var interval: Double = 1

    @OptionGroup var storage: ObjectStorageOptions

    func run() throws {
        let location: S3Location
        let configuration: S3Configuration
        let keyring: ReplicationKeyring?
        do {
            location = try S3Location(parsing: replica)
            configuration = try storage.configuration()
            keyring = try storage.keyring()
        } catch let error as ReplicationError {
            throw ValidationError(error.message)
        }
        var logger = Logger(
            label: "statejournal.follow", factory: { label in StreamLogHandler.standardError(label: label) })
        logger.logLevel = .info
        let slow = Duration.milliseconds(Int64(max(interval, 0.01) * 1000))
        let options = ReplicaFollower.Options(
            pollInterval: slow, activePollInterval: min(slow, .milliseconds(250)), keyring: keyring, logger: logger)
        let directory = URL(fileURLWithPath: into)
        try runReplication { [logger] in
            logger.info("following \(location) at \(configuration.endpoint) into \(directory.path)")
            let follower = ReplicaFollower(
                from: location, into: directory, configuration: configuration, options: options)
            try await follower.run()
            logger.info("stopped; \(directory.path) holds the last generation applied")
        }
    }
}
