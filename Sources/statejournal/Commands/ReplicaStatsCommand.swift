import ArgumentParser
import Foundation
import StateJournalReplication

/// `statejournal replica …`: commands about a replica itself rather than a store.
struct ReplicaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replica", abstract: "Look at a replica in S3-compatible object storage.",
        subcommands: [ReplicaStatsCommand.self])
}

/// `statejournal replica stats s3://BUCKET/PREFIX`.
struct ReplicaStatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print a replica's objects and bytes by kind, its generations, and how far back it reaches.",
        discussion: """
            One listing of the prefix and a GET of its newest and oldest readable generations (with --key-file for an \
            encrypted replica; without it, the generations are counted but not read). "Needed by the newest" is what \
            a restore of the latest epoch fetches; the rest serve restores to an earlier point or await retention.
            """)

    @Argument(help: "The replica: s3://BUCKET/PREFIX.")
    var replica: String

    @OptionGroup var storage: ObjectStorageOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        let (location, configuration, keyring) = try storage.replicaAccess(replica)
        let json = json
        try runReplication {
            let statistics = try await ReplicaRestorer(from: location, configuration: configuration, keyring: keyring)
                .statistics()
            if json {
                try printJSON(document: replicaStatsDocument(statistics, location: "\(location)"))
            } else {
                print(replicaStatsText(statistics, location: "\(location)"), terminator: "")
            }
        }
    }
}

/// What `replica stats` prints.
func replicaStatsText(_ statistics: ReplicaStatistics, location: String) -> String {
    func line(_ name: String, _ tally: ReplicaStatistics.Tally) -> String {
        let label = (name + ":").padding(toLength: 24, withPad: " ", startingAt: 0)
        return "  \(label)\(tally.objects) objects, \(tally.bytes) bytes\n"
    }
    var text = "\(location): replica of store \(statistics.storeID)\(statistics.encrypted ? ", encrypted" : "")\n"
    text += line("checkpoints", statistics.checkpoints) + line("segments", statistics.segments)
    text += line("pieces", statistics.pieces) + line("generations", statistics.generations)
    text += line("other", statistics.other) + line("total", statistics.total)
    text += line("needed by the newest", statistics.newestNeeds)
    if let numbers = statistics.generationNumbers {
        text += "  generations \(numbers.lowerBound)…\(numbers.upperBound)"
        if let newest = statistics.newestGeneration {
            text += "; newest readable \(newest) (term \(statistics.newestTerm ?? 0))"
            if let epochs = statistics.newestEpochs { text += ", epochs \(epochs.lowerBound)…\(epochs.upperBound)" }
            if let written = statistics.newestWritten { text += ", written \(written.iso8601)" }
        } else {
            text += "; none of the newest \(ReplicaStatistics.maximumGenerationsTried) could be read"
            text += statistics.encrypted ? " (encrypted: give --key-file)" : " (damaged, or not written by its shipper)"
        }
        text += "\n"
    } else {
        text += "  no generations\n"
    }
    if let oldest = statistics.oldestWritten {
        text += "  history reaches back to \(oldest.iso8601)\n"
    } else if statistics.newestGeneration != nil {
        text += "  none of the oldest \(ReplicaStatistics.maximumGenerationsTried) generations could be read\n"
    }
    if let term = statistics.leaseTerm { text += "  lease term \(term)\n" }
    return text
}

/// What `replica stats --json` prints (see the CommandLineJSON article).
func replicaStatsDocument(_ statistics: ReplicaStatistics, location: String) -> [String: JSON] {
    func tally(_ tally: ReplicaStatistics.Tally) -> JSON {
        .object(["objects": .int(tally.objects), "bytes": .int(tally.bytes)])
    }
    return [
        "replica": .string(location), "storeID": .string(statistics.storeID), "encrypted": .bool(statistics.encrypted),
        "checkpoints": tally(statistics.checkpoints), "segments": tally(statistics.segments),
        "pieces": tally(statistics.pieces), "generations": tally(statistics.generations),
        "other": tally(statistics.other), "total": tally(statistics.total),
        "neededByNewest": tally(statistics.newestNeeds),
        "firstGeneration": .int(statistics.generationNumbers?.lowerBound),
        "lastGeneration": .int(statistics.generationNumbers?.upperBound),
        "newestReadableGeneration": .int(statistics.newestGeneration),
        "newestFirstEpoch": .int(statistics.newestEpochs?.lowerBound),
        "newestLastEpoch": .int(statistics.newestEpochs?.upperBound),
        "newestTerm": .int(statistics.newestTerm), "newestWritten": .time(statistics.newestWritten),
        "oldestWritten": .time(statistics.oldestWritten), "leaseTerm": .int(statistics.leaseTerm),
    ]
}
