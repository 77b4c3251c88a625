import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

/// Commits `count` epochs, each putting a few paths, and returns the epochs committed.
@discardableResult
func commit(_ journal: Journal, count: Int, marker: String = "state") throws -> [UInt64] {
    var epochs: [UInt64] = []
    for index in 0..<count {
        let epoch = try journal.beginEpoch()
        try epoch.put(RestorationPath("Main", "Item-\(index % 7)"), Array("\(marker) \(index) \(UUID())".utf8))
        try epoch.put(RestorationPath("Main", "Counter"), Array("\(index)".utf8))
        epochs.append(try epoch.commit(metadata: ["index": "\(index)"]).epoch)
    }
    return epochs
}

extension GatewayTests {
    /// Shipping a store to the real gateway and bringing it back.
    @Suite struct ShipAndRestoreTests {
        @Test func aShippedStoreComesBackWithEveryEpochAndVerifiesClean() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "apps/notes")
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(
                at: storeURL, options: JournalOptions(durability: .everyCommit, segmentSizeLimit: 4096))
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            try commit(journal, count: 30)
            try await shipper.shipOnce()
            try commit(journal, count: 30)
            _ = try journal.compact()
            try await shipper.shipOnce()
            for _ in 0..<6 {
                try commit(journal, count: 3)
                try await shipper.shipOnce()
            }
            let history = try journal.history()
            let restorer = ReplicaRestorer(from: location, configuration: gateway.configuration())

            let latest = directory.appendingPathComponent("latest")
            let report = try await restorer.restore(into: latest)
            #expect(report.epoch.epoch == history.last!.epoch)
            #expect(report.verification.status == .clean)
            #expect(try StoreInspector(at: latest).log().map(\.epoch) == history.map(\.epoch))
            #expect(try JournalReader(at: latest).state().entries == journal.state().entries)

            let middle = history[history.count / 2]
            let atEpoch = directory.appendingPathComponent("at-epoch")
            let epochReport = try await restorer.restore(into: atEpoch, target: .epoch(middle.epoch))
            #expect(epochReport.epoch.epoch == middle.epoch)
            #expect(try JournalReader(at: atEpoch).state().entries == journal.state(through: middle.epoch).entries)
            #expect(StoreInspector.verify(atEpoch).status == .clean)

            let atTime = directory.appendingPathComponent("at-time")
            let timeReport = try await restorer.restore(into: atTime, target: .time(middle.timestamp))
            #expect(timeReport.epoch.epoch >= middle.epoch)
            #expect(timeReport.epoch.timestamp <= middle.timestamp.addingTimeInterval(0.001))

            // The restored store opens for writing and goes on from the epoch restored.
            let reopened = try Journal.open(at: atEpoch)
            let next = try commit(reopened, count: 1)
            #expect(next[0] > middle.epoch)
            try reopened.close()
            try journal.close()
        }

        @Test func aPassOverAnIdleStoreSendsNoRequestAndTheNextCommitIsShipped() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "idle")
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            try commit(journal, count: 3)
            try await shipper.shipOnce()
            try await Task.sleep(for: .seconds(2.5))
            try await shipper.shipOnce()  // reads the store once more, finds nothing new
            let sent = shipper.requestsSent
            for _ in 0..<5 { try await shipper.shipOnce() }
            #expect(shipper.requestsSent == sent)
            let last = try commit(journal, count: 1)[0]
            #expect(try await shipper.shipOnce().lastEpoch == last)
            try journal.close()
        }

        @Test func aSegmentEndRewrittenAfterAPowerCutIsShippedAgainNotSpliced() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "rewritten")
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            var journal = try Journal.open(at: storeURL, options: JournalOptions(durability: .everyCommit))
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            try commit(journal, count: 5)
            let live = try #require(try JournalReader(at: storeURL).fileSet().files.last)
            try commit(journal, count: 5, marker: "lost")
            try await shipper.shipOnce()
            try journal.close()
            // What a power cut can leave: the segment's end gone back to an earlier commit.
            let handle = try #require(FileHandle(forWritingAtPath: storeURL.appendingPathComponent(live.name).path))
            try handle.truncate(atOffset: UInt64(live.length))
            try handle.close()
            journal = try Journal.open(at: storeURL, options: JournalOptions(durability: .everyCommit))
            try commit(journal, count: 12, marker: "rewritten after the cut, and longer than before")
            try await Task.sleep(for: .seconds(2.1))
            try await shipper.shipOnce()
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: directory.appendingPathComponent("restored"))
            #expect(report.damage.isEmpty)
            #expect(try report.epoch.epoch == journal.history().last!.epoch)
            #expect(
                try JournalReader(at: directory.appendingPathComponent("restored")).state().entries
                    == journal.state().entries)
            try journal.close()
        }

        @Test func anEpochTheReplicaDoesNotHoldIsNoSuchEpoch() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "p")
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 3)
            try await ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
                .shipOnce()
            let error = await #expect(throws: ReplicationError.self) {
                try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                    .restore(into: directory.appendingPathComponent("r"), target: .epoch(99))
            }
            #expect(error?.code == .noSuchEpoch)
            try journal.close()
        }

        @Test func anEpochFoldedBeforeItWasShippedIsNoSuchEpochNamingWhatTheGenerationsReach() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "folded")
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            let first = try commit(journal, count: 3)
            try await shipper.shipOnce()
            let folded = try commit(journal, count: 3)
            _ = try journal.compact()
            let last = try commit(journal, count: 1)
            try await shipper.shipOnce()
            let error = await #expect(throws: ReplicationError.self) {
                try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                    .restore(into: directory.appendingPathComponent("r"), target: .epoch(folded[1]))
            }
            #expect(error?.code == .noSuchEpoch)
            let newest = folded.last!...last.last!
            #expect(error?.message.contains("reach epochs \(first[0])…\(last.last!) (the newest \(newest))") == true)
            #expect(error?.message.contains("folded it into a checkpoint") == true, "\(error?.message ?? "")")
            try journal.close()
        }

        @Test func aShipperOfAnotherStoreAtTheSamePrefixRefuses() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "shared")
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let first = try Journal.open(at: directory.appendingPathComponent("one"))
            let second = try Journal.open(at: directory.appendingPathComponent("two"))
            try commit(first, count: 2)
            try commit(second, count: 2)
            try await ReplicationShipper(
                store: directory.appendingPathComponent("one"), to: location, configuration: gateway.configuration()
            ).shipOnce()
            let error = await #expect(throws: ReplicationError.self) {
                try await ReplicationShipper(
                    store: directory.appendingPathComponent("two"), to: location, configuration: gateway.configuration()
                ).shipOnce()
            }
            #expect(error?.code == .otherStore)
            try first.close()
            try second.close()
        }

        @Test func aSecondShipperOfOneStoreOnOneHostIsRefusedWhileTheFirstLivesAndARestartContinuesTheReplica()
            async throws
        {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "twice")
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL, options: JournalOptions(segmentSizeLimit: 4096))
            defer { try? journal.close() }
            do {
                let one = ReplicationShipper(
                    store: storeURL, to: location, configuration: gateway.configuration(),
                    options: leaseOptions(lease: .seconds(1)))
                try commit(journal, count: 5)
                try await one.shipOnce()
                // A second run of the same shipper on the same host would share its holder id, take
                // its lease and fence it: it is refused while the first lives.
                let two = ReplicationShipper(
                    store: storeURL, to: location, configuration: gateway.configuration(),
                    options: leaseOptions(lease: .seconds(1), takesOver: true))
                try commit(journal, count: 5)
                let refused = await #expect(throws: ReplicationError.self) { try await two.shipOnce() }
                #expect(refused?.code == .shipperRunning)
                try await one.shipOnce()
            }
            // Once it is gone, a restart continues the replica (in a term of its own, begun from the
            // first one's last generation).
            let restarted = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(lease: .seconds(1)))
            try commit(journal, count: 5)
            try await restarted.shipOnce()
            let generations = try await storedGenerations(location, gateway: gateway)
            let newest = try #require(generations.last)
            #expect(newest.terms?.last?.basis == generations.dropLast().last { $0.term == 1 }?.generation)
            let restored = directory.appendingPathComponent("restored")
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: restored)
            #expect(try report.epoch.epoch == journal.history().last!.epoch)
            #expect(report.orphans.isEmpty)
            #expect(try JournalReader(at: restored).state().entries == journal.state().entries)
        }

        @Test func aPrefixHoldingSomethingElseIsRefused() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let bucket = try await gateway.freshBucket(client)
            try await client.put(bucket: bucket, key: "photos/cat.jpg", body: Array("not a replica".utf8))
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let journal = try Journal.open(at: directory.appendingPathComponent("store"))
            try commit(journal, count: 1)
            let error = await #expect(throws: ReplicationError.self) {
                try await ReplicationShipper(
                    store: directory.appendingPathComponent("store"), to: S3Location(bucket: bucket, prefix: "photos"),
                    configuration: gateway.configuration()
                ).shipOnce()
            }
            #expect(error?.code == .foreignPrefix)
            let restoreError = await #expect(throws: ReplicationError.self) {
                try await ReplicaRestorer(
                    from: S3Location(bucket: bucket, prefix: "photos"), configuration: gateway.configuration()
                ).restore(into: directory.appendingPathComponent("r"))
            }
            #expect(restoreError?.code == .foreignPrefix)
            try journal.close()
        }

        @Test func aTruncatedCheckpointFallsBackToTheGenerationBeforeTheCompaction() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let location = S3Location(bucket: try await gateway.freshBucket(client), prefix: "truncated")
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL, options: JournalOptions(durability: .everyCommit))
            let shipper = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: .separateObjects())
            try commit(journal, count: 6)
            try await shipper.shipOnce()
            let beforeCompaction = try journal.history().last!.epoch
            _ = try journal.compact()
            try commit(journal, count: 4)
            try await shipper.shipOnce()
            let checkpoint = try #require(
                try await client.list(bucket: location.bucket, prefix: location.prefix + "checkpoints/").first)
            let bytes = try #require(try await client.get(bucket: location.bucket, key: checkpoint.key))
            try await client.put(
                bucket: location.bucket, key: checkpoint.key, body: Array(bytes.prefix(bytes.count / 2)))

            let restored = directory.appendingPathComponent("restored")
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: restored)
            #expect(report.epoch.epoch == beforeCompaction)
            #expect(report.damage.first?.key == checkpoint.key)
            #expect(try report.damage.first?.epochsLost == (beforeCompaction + 1)...journal.history().last!.epoch)
            #expect(StoreInspector.verify(restored).status == .clean)
            try journal.close()
        }

        @Test func aCorruptedObjectIsNamedAndTheRestoreStopsAtTheLastConsistentEpochBeforeIt() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let location = S3Location(bucket: try await gateway.freshBucket(client), prefix: "damaged")
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL, options: JournalOptions(durability: .everyCommit))
            let shipper = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: .separateObjects())
            try commit(journal, count: 5)
            try await shipper.shipOnce()
            let before = try journal.history().last!.epoch
            try commit(journal, count: 5)
            try await shipper.shipOnce()
            let last = try journal.history().last!.epoch
            // The second piece of the live segment: flip a byte in the middle.
            let pieces = try await client.list(bucket: location.bucket, prefix: location.prefix + "tail/")
            #expect(pieces.count == 2)
            let target = pieces.map(\.key).sorted()[1]
            var bytes = try #require(try await client.get(bucket: location.bucket, key: target))
            bytes[bytes.count / 2] ^= 0x40
            try await client.put(bucket: location.bucket, key: target, body: bytes)

            let restored = directory.appendingPathComponent("restored")
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: restored)
            #expect(report.epoch.epoch == before)
            #expect(report.damage.count == 1)
            #expect(report.damage.first?.key == target)
            #expect(report.damage.first?.epochsLost == (before + 1)...last)
            #expect(StoreInspector.verify(restored).status == .clean)
            try journal.close()
        }
    }
}

extension GatewayTests {
    /// What the shipper deletes.
    @Suite struct RetentionTests {
        @Test func retentionDeletesCoveredAndExpiredGenerationsAndOnlyTheObjectsNoKeptGenerationNames() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let location = S3Location(bucket: try await gateway.freshBucket(client), prefix: "kept")
            let directory = try temporaryDirectory("retention")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL, options: JournalOptions(segmentSizeLimit: 4096))
            // Long retention: a generation from before a compaction is kept, covered ones go.
            // Covered generations go at once here (a follower's ten minutes are waived).
            // Every file's bytes as objects of their own: what generations name and what they carry
            // are apart (the test below has generations carry them).
            var keepingOptions = ReplicationOptions.separateObjects(
                ReplicationOptions(retention: .seconds(3600), retentionCheckInterval: .zero))
            keepingOptions.coveredGenerationsKept = .zero
            let beforeCompaction: [EpochInfo]
            do {
                // One shipper, then another (a restart): a shipper holds its store for its replica
                // for as long as it lives.
                let keeping = ReplicationShipper(
                    store: storeURL, to: location, configuration: gateway.configuration(), options: keepingOptions)
                for _ in 0..<5 {
                    try commit(journal, count: 4)
                    try await keeping.shipOnce()
                }
                beforeCompaction = try journal.history()
                _ = try journal.compact()
                try commit(journal, count: 2)
                try await keeping.shipOnce()
            }
            let generations = try await client.list(bucket: location.bucket, prefix: location.prefix + "generations/")
            #expect(generations.count == 2, "\(generations.map(\.key))")
            // The older generation still restores an epoch the store's own retention may drop later.
            let old = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: directory.appendingPathComponent("old"), target: .epoch(beforeCompaction[1].epoch))
            #expect(old.epoch.epoch == beforeCompaction[1].epoch)

            // No retention: only the newest generation and what it names are left.
            // (Applied by hand below, not by the pass, to count its requests.)
            var pruningOptions = ReplicationOptions.separateObjects(
                ReplicationOptions(retention: .zero, retentionCheckInterval: .seconds(3600)))
            pruningOptions.coveredGenerationsKept = .zero
            let pruning = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: pruningOptions)
            try commit(journal, count: 2)
            try await pruning.shipOnce()
            let before = pruning.requestCounts
            let listedBefore = try await client.list(bucket: location.bucket, prefix: location.prefix)
            try await pruning.applyRetention()
            let left = try await client.list(bucket: location.bucket, prefix: location.prefix).map {
                String($0.key.dropFirst(location.prefix.count))
            }
            #expect(left.filter { $0.hasPrefix("generations/") }.count == 1)
            // The deletes go in batches: one request for the generations, one for the objects.
            let spent = pruning.requestCounts.since(before)
            #expect(listedBefore.count - left.count >= 4, "generations and objects were deleted")
            #expect(spent.deletes == 0 && spent.posts == 2, "\(spent)")
            let restorer = ReplicaRestorer(from: location, configuration: gateway.configuration())
            let report = try await restorer.restore(into: directory.appendingPathComponent("new"))
            #expect(try report.epoch.epoch == journal.history().last!.epoch)
            // All but replica.json, lease.json and the generation.
            #expect(report.objectsDownloaded == left.count - 3)
            try journal.close()
        }

        @Test func aGenerationTooLargeToCarryItsBytesShipsThemAsObjectsOfTheirOwnAndStillRestores() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let location = S3Location(bucket: try await gateway.freshBucket(client), prefix: "spilled")
            let directory = try temporaryDirectory("spilled")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL, options: JournalOptions(segmentSizeLimit: 2048))
            // A generation may hold a byte here: every document is too large to carry bytes too.
            var options = ReplicationOptions()
            options.maximumGenerationPayload = 1
            let shipper = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: options)
            try commit(journal, count: 40)
            _ = try journal.compact()
            try commit(journal, count: 3)
            let first = try await shipper.shipOnce()
            let spilled = try await client.list(bucket: location.bucket, prefix: location.prefix).map {
                String($0.key.dropFirst(location.prefix.count))
            }
            #expect(spilled.contains { $0.hasPrefix("checkpoints/") }, "\(spilled)")
            #expect(spilled.contains { $0.hasPrefix("segments/") || $0.hasPrefix("tail/") }, "\(spilled)")
            try commit(journal, count: 1)
            try await shipper.shipOnce()
            let generations = try await storedGenerations(location, gateway: gateway)
            #expect(generations.count == 2)
            for generation in generations {
                let noneCarried = generation.files.flatMap(\.objects).allSatisfy { !$0.isInline }
                #expect(noneCarried, "generation \(generation.generation)")
            }
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: directory.appendingPathComponent("restored"))
            #expect(try report.epoch.epoch == journal.history().last!.epoch && report.damage.isEmpty)
            #expect(first.wroteGeneration)
            #expect(StoreInspector.verify(directory.appendingPathComponent("restored")).status == .clean)
            try journal.close()
        }

        @Test func aGenerationThatCarriesBytesAKeptOneNamesIsKeptUntilNoneDoesThenDeleted() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let location = S3Location(bucket: try await gateway.freshBucket(client), prefix: "carriers")
            let directory = try temporaryDirectory("carriers")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            var journalOptions = JournalOptions(segmentSizeLimit: 1 << 20)
            journalOptions.compaction = .manual
            let journal = try Journal.open(at: storeURL, options: journalOptions)
            // No retention at all: only what the newest generation needs may stay.
            var options = ReplicationOptions(retention: .zero, retentionCheckInterval: .seconds(3600))
            options.coveredGenerationsKept = .zero
            let shipper = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: options)
            func generationsLeft() async throws -> [String] {
                try await client.list(bucket: location.bucket, prefix: location.prefix + "generations/").map {
                    String($0.key.dropFirst(location.prefix.count))
                }
            }
            func restoresTheLatest(_ label: String) async throws {
                let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                    .restore(into: directory.appendingPathComponent(label))
                #expect(try report.epoch.epoch == journal.history().last!.epoch, "\(label)")
                #expect(report.damage.isEmpty, "\(label)")
            }
            try commit(journal, count: 4)
            try await shipper.shipOnce()
            try commit(journal, count: 4)
            try await shipper.shipOnce()
            // The newest generation names the live segment's first bytes, which the first carries.
            let newest = try #require(try await storedGenerations(location, gateway: gateway).last)
            #expect(newest.generation == 2)
            let namesTheFirst = newest.files.flatMap(\.objects).contains { $0.key == ReplicaLayout.generation(1) }
            #expect(namesTheFirst)
            try await shipper.applyRetention()
            #expect(try await generationsLeft() == [ReplicaLayout.generation(1), ReplicaLayout.generation(2)])
            try await restoresTheLatest("both")

            // Compacted twice, the store keeps none of those bytes: both carriers go.
            _ = try journal.compact()
            try commit(journal, count: 2)
            _ = try journal.compact()
            try commit(journal, count: 2)
            try await shipper.shipOnce()
            let last = try #require(try await storedGenerations(location, gateway: gateway).last)
            #expect(last.generation == 3)
            let carriesAll = last.files.flatMap(\.objects).allSatisfy { $0.key == ReplicaLayout.generation(3) }
            #expect(carriesAll)
            try await shipper.applyRetention()
            #expect(try await generationsLeft() == [ReplicaLayout.generation(3)])
            try await restoresTheLatest("last")
            try journal.close()
        }

        @Test func aShipperBesideALongChainReadsABoundedNumberOfGenerationsPerRetentionPassAndDeletesOnceAllAreRead()
            async throws
        {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let location = S3Location(bucket: try await gateway.freshBucket(client), prefix: "long")
            let directory = try temporaryDirectory("long-chain")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            defer { try? journal.close() }
            let perPass = ReplicationShipper.generationsReadPerRetention
            let chain = perPass + 12
            do {
                // A restart after it: a shipper holds its store for its replica for as long as it lives.
                let first = ReplicationShipper(
                    store: storeURL, to: location, configuration: gateway.configuration(),
                    options: ReplicationOptions(retentionCheckInterval: .seconds(3600)))
                for _ in 0..<chain {
                    try commit(journal, count: 1)
                    try await first.shipOnce()
                }
            }
            var options = ReplicationOptions(retentionCheckInterval: .seconds(3600))
            options.coveredGenerationsKept = .zero
            let second = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: options)
            try commit(journal, count: 1)
            try await second.shipOnce()
            func generations() async throws -> Int {
                try await client.list(bucket: location.bucket, prefix: location.prefix + "generations/").count
            }
            #expect(try await generations() == chain + 1)

            // The first pass reads as many as a pass may, and deletes nothing: the rest are unread.
            var before = second.requestCounts
            try await second.applyRetention()
            var spent = second.requestCounts.since(before)
            #expect(spent.gets == perPass && spent.posts == 0 && spent.deletes == 0, "\(spent)")
            #expect(try await generations() == chain + 1)

            // The next reads the rest, then deletes the covered generations.
            before = second.requestCounts
            try await second.applyRetention()
            spent = second.requestCounts.since(before)
            #expect(spent.gets == chain - 1 - perPass, "\(spent)")
            #expect(try await generations() < chain + 1)
            let restored = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: directory.appendingPathComponent("restored"))
            #expect(restored.epoch.epoch == journal.lastCommitted?.epoch)
        }
    }
}
