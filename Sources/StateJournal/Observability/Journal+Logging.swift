import Logging

extension Logger {
    /// A logger that discards everything: the default of ``JournalOptions/logger``.
    static let silent = Logger(label: "StateJournal", factory: { _ in SwiftLogNoOpLogHandler() })
}

extension Journal {
    /// Logs what opening found and repaired: nothing when the store was intact.
    func logRecovery() {
        let report = recoveryReport
        if let tail = report.unsyncedTail {
            logger.notice(
                "Cut off an unsynced tail that a power cut left partly on the disk; every durable epoch is kept",
                metadata: [
                    "file": "\(tail.file)", "offset": "\(tail.offset)", "reason": "\(tail.reason)",
                    "bytes_dropped": "\(tail.bytesDropped)", "epochs_dropped": "\(tail.epochsDropped)",
                    "last_consistent_epoch": "\(tail.lastConsistentEpoch.map(String.init) ?? "none")",
                ])
        } else if report.truncatedTailBytes > 0 {
            logger.notice(
                "Cut off a torn tail after the last commit: an epoch a crash interrupted",
                metadata: ["bytes": "\(report.truncatedTailBytes)", "epoch": "\(lastCommittedInfo?.epoch ?? 0)"])
        }
        if let damage = report.damage {
            logger.warning(
                """
                Found damage in the journal; replay stops at the last consistent epoch and the damaged part was set \
                aside
                """,
                metadata: Self.metadata(of: damage).merging(
                    ["quarantined": .array(report.quarantinedFiles.map { .string($0) })], uniquingKeysWith: { $1 }))
        }
        for checkpoint in report.damagedCheckpoints {
            logger.warning(
                "A checkpoint is damaged; replay fell back to an older checkpoint and the damaged one was set aside",
                metadata: Self.metadata(of: checkpoint))
        }
        if !report.removedLeftovers.isEmpty {
            logger.notice(
                "Removed files a crash left behind that no manifest names",
                metadata: ["files": .array(report.removedLeftovers.map { .string($0) })])
        }
    }

    /// Logs a committed compaction.
    func logCompaction(_ report: CompactionReport) {
        logger.info(
            "Compacted the journal into a checkpoint",
            metadata: [
                "epoch": "\(report.checkpointEpoch)", "checkpoint": "\(report.checkpointFile)",
                "bytes": "\(report.checkpointBytes)", "entries": "\(report.liveEntries)",
                "removed": .array(report.removedFiles.map { .string($0) }),
            ])
    }

    /// Records `error` as the reason the journal refuses further commits, and logs it. Called with
    /// `condition` locked.
    func poison(with error: JournalError) {
        poison = error
        releaseDurabilityWaiters(failure: error)
        logger.error(
            "The journal refuses further commits until it is reopened",
            metadata: ["error": "\(error)"])
    }

    private static func metadata(of damage: DamageReport) -> Logger.Metadata {
        [
            "file": "\(damage.file)", "offset": "\(damage.offset)", "reason": "\(damage.reason)",
            "bytes_dropped": "\(damage.bytesDropped)", "epochs_lost": "\(damage.epochsLost)",
            "last_consistent_epoch": "\(damage.lastConsistentEpoch.map(String.init) ?? "none")",
        ]
    }
}
