import ArgumentParser
import Foundation
import Logging
import StateJournal
import StateJournalComparison

struct SoakCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Run a deterministic writer for crash testing, or check a store it wrote.",
        discussion: """
            The simulated app's state at epoch E is a pure function of the seed, E, the workload and the number of \
            objects. It commits continuously, with frequent compactions and segment rolls, and prints "committed E" \
            on its own line after each commit returns. With --check, exits 0 only if the latest state and the state \
            at every retained epoch match (the store records the workload and the objects; --check needs neither).
            """)

    @Argument(help: "The store directory.", completion: .directory)
    var directory: String

    @Option(help: "How long to write, in seconds.")
    var seconds: Double = 10

    @Option(
        help: """
            Keep writing past --seconds until this run has committed at least this many epochs, so that a \
            slow or loaded machine still writes as much as a test needs (not with --restoration).
            """)
    var atLeast: Int = 0

    @Option(help: "How many objects the simulated app has.")
    var objects: Int = 100

    @Option(
        help: """
            steady (one object changes per epoch, every path is defined in the first epochs) or churn (every epoch \
            creates paths never written before, removes, re-creates and changes others, in ~128 KiB spanning several \
            batch records; with --restoration, children appear and disappear under containers at every save).
            """)
    var workload: String = SoakWorkload.Kind.steady.rawValue

    @Option(help: "everyCommit, interval or none.")
    var durability: String = "interval"

    @Option(help: "The seed every state derives from.")
    var seed: UInt64 = 1

    @Flag(help: "Check the store instead of writing.")
    var check = false

    @Flag(
        help: """
            Write with automatic compaction off: checkpoints are still written by themselves, and \
            every ~97th epoch by hand, but no history is deleted.
            """)
    var keepHistory = false

    @Flag(
        help: """
            Write through the restoration layer: a simulated app saves each change with a RestorationManager, which \
            recovers by itself from failed writes and syncs, and prints "acknowledged C T S" (the change, and the Unix \
            times at which the save returned and began) after each save that returned. With --check, restores the store and checks the objects against the change it \
            holds, printing "ok: restored change C".
            """)
    var restoration = false

    func validate() throws {
        guard ["everyCommit", "interval", "none"].contains(durability) else {
            throw ValidationError("--durability must be everyCommit, interval or none, not \"\(durability)\".")
        }
        guard SoakWorkload.Kind(rawValue: workload) != nil else {
            throw ValidationError("--workload must be steady or churn, not \"\(workload)\".")
        }
        guard objects >= 1 else { throw ValidationError("--objects must be at least 1.") }
        guard (0...10_000_000).contains(atLeast) else {
            throw ValidationError("--at-least must be between 0 and 10000000.")
        }
        guard atLeast == 0 || !restoration else { throw ValidationError("--at-least does not apply to --restoration.") }
    }

    func run() throws {
        let url = URL(fileURLWithPath: directory)
        if restoration {
            try runRestorationSoak(url)
            return
        }
        if check {
            try reportingErrors {
                // The kind of workload and the object count are part of it; the store records them with
                // every epoch.
                let metadata = try JournalReader(at: url).history().last?.metadata ?? [:]
                guard let workload = SoakWorkload.recorded(in: metadata, seed: seed, objects: objects) else {
                    throw CommandFailure(
                        .dataError,
                        """
                        the store was written by the soak workload "\(metadata[SoakWorkload.kindKey] ?? "")", \
                        which this version does not know.
                        """)
                }
                let progress = Progress()
                progress.update("checking every retained epoch of \(directory)…")
                let result = try workload.check(url)
                progress.finish()
                switch result {
                case .success(let epochs):
                    print("ok: \(epochs) retained epochs match the workload")
                case .failure(let mismatch):
                    print("mismatch: \(mismatch)")
                    throw ExitCode.failure
                }
            }
            return
        }
        let workload = SoakWorkload(objects: objects, seed: seed, kind: SoakWorkload.Kind(rawValue: self.workload)!)
        guard StandardStream.prepare() else {
            printError("standard output is closed: soak reports each acknowledged epoch there; nothing was written.")
            throw ExitCode(74)
        }
        try reportingErrors {
            let policy: Durability =
                switch durability {
                case "everyCommit": .everyCommit
                case "none": .none
                default: .interval(seconds: 0.05)
                }
            var options = JournalOptions(
                durability: policy, segmentSizeLimit: workload.segmentSizeLimit,
                retention: RetentionPolicy(checkpoints: 2))
            options.compaction = CompactionPolicy(
                isAutomatic: !keepHistory, growthRatio: 1, minimumJournalBytes: Int64(workload.compactionThreshold))
            let journal = try Journal.open(at: url, options: options)
            if let last = journal.lastCommitted {
                let recorded = last.metadata[SoakWorkload.kindKey] ?? SoakWorkload.Kind.steady.rawValue
                guard recorded == workload.kind.rawValue else {
                    try journal.close()
                    throw CommandFailure(
                        .usage,
                        """
                        the store was written by soak --workload \(recorded); continue it with --workload \(recorded), \
                        or soak another directory. Nothing was written.
                        """)
                }
            }
            var epoch = (journal.lastCommitted?.epoch ?? 0) + 1
            let deadline = Date(timeIntervalSinceNow: seconds)
            var committed = 0
            let previous = journal.lastCommitted
            while Date() < deadline || committed < atLeast {
                let changes =
                    committed == 0 ? workload.firstChanges(at: epoch, after: previous) : workload.changes(at: epoch)
                let info = try journal.commit(changes, metadata: workload.metadata)
                guard info.epoch == epoch else {
                    throw JournalError(
                        .damaged,
                        """
                        The store committed epoch \(info.epoch) where the soak expected \(epoch); it was not written \
                        by this soak.
                        """
                    )
                }
                // Written straight to the descriptor, so a kill right after cannot lose the line.
                do {
                    try StandardStream.write("committed \(epoch)\n")
                } catch {
                    try journal.close()
                    printError("\(error); stopped after epoch \(epoch), which is committed and kept.")
                    throw ExitCode(74)
                }
                if epoch % 97 == 0 { try keepHistory ? journal.checkpoint() : journal.compact() }
                epoch += 1
                committed += 1
            }
            try journal.close()
        }
    }

    /// `--restoration`: writes or checks through a `RestorationManager` (see ``RestorationSoak``).
    private func runRestorationSoak(_ url: URL) throws {
        let soak = RestorationSoak(objects: objects, seed: seed, kind: SoakWorkload.Kind(rawValue: workload)!)
        if check {
            try reportingErrors {
                let journal = try Journal.open(at: url, options: JournalOptions(durability: .none))
                defer { try? journal.close() }
                switch try soak.check(journal) {
                case .restored(let change, nil): print("ok: restored change \(change)")
                case .restored(let change, let children?):
                    print("ok: restored change \(change), with the \(children) children of the churn workload")
                case .mismatch(let mismatch):
                    print("mismatch: \(mismatch)")
                    throw ExitCode.failure
                }
            }
            return
        }
        guard StandardStream.prepare() else {
            printError("standard output is closed: soak reports each acknowledged save there; nothing was written.")
            throw ExitCode(74)
        }
        try reportingErrors {
            let policy: Durability =
                switch durability {
                case "everyCommit": .everyCommit
                case "none": .none
                default: .interval(seconds: 0.05)
                }
            let journal = try Journal.open(
                at: url, options: JournalOptions(durability: policy, segmentSizeLimit: 256 << 10))
            var logger = Logger(label: "soak", factory: { StreamLogHandler.standardError(label: $0) })
            logger.logLevel = .notice
            try soak.write(to: journal, seconds: seconds, logger: logger)
            try journal.close()
        }
    }
}
