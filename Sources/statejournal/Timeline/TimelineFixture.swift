import Foundation
import StateJournal
import StateJournalComparison
import StateRestoration

/// A large, deterministic store shaped like an app's: `Main`, mailboxes of 1,000 messages each,
/// passes that change a few messages (and now and then remove one and add another), a launch every
/// few hundred epochs with its markers and report, one crash loop, and two compactions, the first
/// of which becomes the oldest retained epoch. The timeline's load test opens it.
///
/// With `outageReason`, a fifth of the way from the end, the pass after an outage: its metadata
/// says, as a catch-up pass's does, that the store was unavailable from just after the epoch three
/// before it, for that reason (which may hold any text, control characters included).
///
/// With `terms` above zero, that many replication terms begin at even intervals: each a marker epoch
/// as a promotion commits it, the even ones taken over by force.
struct TimelineFixture {
    var objects: Int
    var epochs: Int
    var seed: UInt64
    var outageReason: String? = nil
    var terms = 0

    /// Writes the store; returns how many epochs it retains.
    func write(to directory: URL, progress: (String) -> Void) throws -> Int {
        if let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path), !names.isEmpty {
            throw JournalError(
                .notAStore, "\(directory.path) is not empty; choose a new directory.", file: directory.path)
        }
        let journal = try Journal.open(
            at: directory,
            options: JournalOptions(
                durability: .none, retention: RetentionPolicy(checkpoints: 3),
                compaction: .manual))
        defer { try? journal.close() }
        var random = SplitMix64(seed: seed)
        let mailboxes = max(1, objects / 1000)
        var messages: [RestorationPath] = (0..<max(0, objects - mailboxes - 1)).map { index in
            RestorationPath("Main", mailbox(index % mailboxes), String(format: "Message-%06d", index))
        }
        var nextMessage = messages.count
        let pass: [String: String] = [
            EpochMetadataKey.kind: RestorationEpochKind.preservation.rawValue, EpochMetadataKey.bundleVersion: "42",
            EpochMetadataKey.interfaceIdiom: "desktop", EpochMetadataKey.systemVersion: "Linux",
        ]
        func marker(_ kind: RestorationEpochKind, restoring: UInt64, extra: [String: String] = [:]) -> [String: String]
        {
            var metadata = pass
            metadata[EpochMetadataKey.kind] = kind.rawValue
            metadata[EpochMetadataKey.restoringEpoch] = String(restoring)
            metadata[EpochMetadataKey.restoredLatest] = "1"
            return metadata.merging(extra) { $1 }
        }

        // The first epoch: everything.
        var first: [JournalChange] = [.put(RestorationPath("Main"), entry("MailNavigationController", ["stack": 2]))]
        for index in 0..<mailboxes {
            first.append(.put(RestorationPath("Main", mailbox(index)), entry("MailboxController", ["unread": 0])))
        }
        for (index, path) in messages.enumerated() { first.append(.put(path, message(index, version: 0))) }
        var last = try journal.commit(first, metadata: pass).epoch
        // The oldest retained checkpoint: a little after the first epoch.
        let firstCompaction: UInt64 = 20
        let secondCompaction = firstCompaction + UInt64(epochs / 2)
        let lastEpoch = firstCompaction + UInt64(epochs) - 1
        var launches = 0
        var compactedTwice = false
        let catchUpEpoch = lastEpoch - UInt64(epochs / 5)
        var outageStarted: Date?
        let termStarts = Set(
            (0..<max(0, terms)).map { k in firstCompaction + UInt64(epochs * (k + 1) / (terms + 1)) + 1 })
        var termsBegun = 0
        while last < lastEpoch {
            let epoch = last + 1
            if termStarts.contains(epoch) && epoch != catchUpEpoch {
                // What a promotion commits: the previous epoch's metadata, and the term's.
                termsBegun += 1
                var metadata = pass
                metadata[EventMarkerKey.event] = EventMarkerKind.replicaTermBegan.rawValue
                metadata[EventMarkerKey.term] = String(termsBegun + 1)
                metadata[EventMarkerKey.previousTerm] = String(termsBegun)
                metadata[EventMarkerKey.continuesFrom] = String(last)
                metadata[EventMarkerKey.takenOver] = termsBegun % 2 == 0 ? "1" : "0"
                last = try journal.commit([], metadata: metadata).epoch
                continue
            }
            if epoch % 97 == 0 { progress("epoch \(epoch) of \(lastEpoch)") }
            if epoch > firstCompaction && epoch % 700 == 0 && epoch + 4 < lastEpoch {
                launches += 1
                let restoring = last
                _ = try journal.commit([], metadata: marker(.restorationBegan, restoring: restoring))
                if launches == 3 {
                    // A crash while restoring, twice, then a fallback to the epoch before.
                    _ = try journal.commit(
                        [],
                        metadata: marker(.restorationBegan, restoring: restoring, extra: ["unfinishedAttempts": "1"]))
                    _ = try journal.commit(
                        [],
                        metadata: marker(
                            .restorationBegan, restoring: restoring - 1, extra: ["restoredLatest": "0"]))
                    last = try journal.commit(
                        [],
                        metadata: marker(
                            .restorationCompleted, restoring: restoring - 1,
                            extra: [
                                EpochMetadataKey.restoredLatest: "0",
                                EpochMetadataKey.restorationReport: report(
                                    restoring - 1, "crashLoopFallback\t\(restoring)", skipped: 2),
                            ])
                    ).epoch
                } else {
                    let reason = launches % 2 == 0 ? "recoveryAfterCrash" : "launch"
                    last = try journal.commit(
                        [],
                        metadata: marker(
                            .restorationCompleted, restoring: restoring,
                            extra: [
                                EpochMetadataKey.restorationReport: report(restoring, reason, skipped: launches % 3)
                            ])
                    ).epoch
                }
                continue
            }
            var changes: [JournalChange] = []
            for _ in 0..<Int.random(in: 1...12, using: &random) where !messages.isEmpty {
                let index = Int.random(in: 0..<messages.count, using: &random)
                changes.append(.put(messages[index], message(index, version: Int(epoch))))
            }
            if epoch % 53 == 0, !messages.isEmpty {
                let index = Int.random(in: 0..<messages.count, using: &random)
                changes.append(.remove(messages[index]))
                messages[index] = RestorationPath(
                    "Main", mailbox(nextMessage % mailboxes), String(format: "Message-%06d", nextMessage))
                changes.append(.put(messages[index], message(nextMessage, version: Int(epoch))))
                nextMessage += 1
            }
            if epoch % 11 == 0 {
                let box = Int.random(in: 0..<mailboxes, using: &random)
                changes.append(
                    .put(RestorationPath("Main", mailbox(box)), entry("MailboxController", ["unread": Int(epoch % 17)]))
                )
            }
            var metadata = pass
            if let reason = outageReason, epoch == catchUpEpoch, let started = outageStarted {
                metadata[EpochMetadataKey.outageStarted] = started.formatted(
                    Date.ISO8601FormatStyle(includingFractionalSeconds: true))
                metadata[EpochMetadataKey.outageReason] = reason
            }
            last = try journal.commit(changes, metadata: metadata).epoch
            if outageReason != nil, last + 3 == catchUpEpoch {
                // Epoch timestamps have milliseconds: the outage begins strictly after this one
                // and strictly before the next.
                usleep(3_000)
                outageStarted = Date()
                usleep(3_000)
            }
            if last == firstCompaction || (last >= secondCompaction && !compactedTwice) {
                compactedTwice = last >= secondCompaction
                progress("compacting at epoch \(last)")
                _ = try journal.compact()
            }
        }
        try journal.close()
        return try StoreInspector(at: directory).log().count
    }

    private func mailbox(_ index: Int) -> String { String(format: "Mailbox-%02d", index) }

    private func entry(_ type: String, _ values: [String: Int]) -> [UInt8] {
        RestorableEntry(
            kind: .controller, typeName: "MailFixture." + type, restorationClassName: nil,
            values: values.mapValues { .int(Int64($0)) }
        ).encoded
    }

    private func message(_ index: Int, version: Int) -> [UInt8] {
        RestorableEntry(
            kind: .controller, typeName: "MailFixture.MessageController",
            restorationClassName: "MailFixture.MessageFactory",
            values: [
                "subject": .string("Re: quarterly report \(index % 977)"),
                "from": .string("user\(index % 313)@example.org"),
                "read": .bool(version % 2 == 1),
                "flagged": .bool(index % 7 == 0),
                "scrollOffset": .double(Double((index * 37 + version * 11) % 4000) / 4),
                "selectedAttachment": .int(Int64(version % 3)),
            ]
        ).encoded
    }

    private func report(_ epoch: UInt64, _ reason: String, skipped: Int) -> String {
        var text = "SJRR\t1\nepoch\t\(epoch)\nreason\t\(reason)\ncounts\t\(objects - skipped)\t\(skipped)\t0\n"
        for index in 0..<skipped {
            text += "s\tunregistered\tMailFixture.LegacyFactory\tMailFixture.LegacyController\tMain/Legacy-\(index)\n"
        }
        return text
    }
}
