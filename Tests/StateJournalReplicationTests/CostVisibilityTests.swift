import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// What shipping costs is visible: the requests by kind, logged every statistics interval, and
    /// what a replica holds, from `replica stats`.
    @Suite struct CostVisibilityTests {
        @Test func aRunningShipperCountsItsRequestsByKindAndLogsWhatTheyCostEveryInterval() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "costs")
            let directory = try temporaryDirectory("costs")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL, options: JournalOptions(durability: .everyCommit))
            defer { try? journal.close() }
            try commit(journal, count: 5)
            let logs = CapturedLogs()
            var options = ReplicationOptions(interval: .milliseconds(100), logger: logs.logger)
            options.statisticsInterval = .milliseconds(500)
            let shipper = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: options)
            let running = Task { try await shipper.run() }
            // A window in which the loaded machine ran no commit logs no lag, so the test waits for
            // one that did.
            try await eventually("two statistics lines, one of a window that shipped") {
                try commit(journal, count: 1)
                let lines = logs.entries(.info, containing: "in the last")
                return lines.count >= 2 && lines.contains { $0.message.contains("newest commit to the bucket p50") }
            }
            running.cancel()
            try await running.value
            let counts = shipper.requestCounts
            #expect(counts.total == shipper.requestsSent, "every request is counted once, by kind")
            #expect(counts.puts > 0 && counts.bytesSent > 0 && counts.bytesReceived > 0)
            let line = try #require(
                logs.entries(.info, containing: "in the last").last { $0.message.contains("newest commit") })
            #expect(line.message.contains(" PUT, ") && line.message.contains(" LIST, "), "\(line.message)")
            #expect(!line.message.hasPrefix("in the last 0 s") && !line.message.hasPrefix("in the last 0.0 s"))
            #expect(Int(line.metadata["requests"].map { "\($0)" } ?? "") ?? 0 > 0, "\(line.metadata)")
            // The lines add up to no more than the client counted.
            let logged = logs.entries(.info, containing: "in the last").compactMap {
                Int($0.metadata["requests"].map { "\($0)" } ?? "")
            }
            #expect(logged.reduce(0, +) <= counts.total)
        }

        @Test func replicaStatisticsCountEachKindOfObjectAsTheBucketListsIt() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "stats")
            let directory = try temporaryDirectory("stats")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(
                at: storeURL, options: JournalOptions(durability: .everyCommit, segmentSizeLimit: 4096))
            let shipper = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: .separateObjects())
            try commit(journal, count: 30)
            try await shipper.shipOnce()
            _ = try journal.compact()
            try commit(journal, count: 3)
            try await shipper.shipOnce()
            let last = try #require(journal.lastCommitted?.epoch)
            try journal.close()

            let restorer = ReplicaRestorer(from: location, configuration: gateway.configuration())
            let statistics = try await restorer.statistics()
            let listed = try await gateway.client().list(bucket: bucket, prefix: "stats/")
            #expect(statistics.total.objects == listed.count)
            #expect(statistics.total.bytes == listed.reduce(0) { $0 + $1.size })
            let kinds = [
                statistics.checkpoints, statistics.segments, statistics.pieces, statistics.generations,
                statistics.other,
            ]
            #expect(kinds.reduce(0) { $0 + $1.objects } == statistics.total.objects)
            #expect(statistics.checkpoints.objects >= 1 && statistics.generations.objects == 2)
            #expect(statistics.other.objects == 2, "replica.json and lease.json")
            #expect(statistics.generationNumbers == 1...2 && statistics.newestGeneration == 2)
            #expect(statistics.newestEpochs?.upperBound == last && statistics.newestTerm == 1)
            #expect(statistics.leaseTerm == 1)
            let newest = try #require(
                try await Replica(client: gateway.client(), location: location, keyring: nil)
                    .bound(to: statistics.storeID).generation(2, of: statistics.storeID))
            #expect(statistics.newestNeeds.objects == Set(newest.files.flatMap { $0.objects.map(\.key) }).count)
            #expect(statistics.newestNeeds.bytes <= statistics.total.bytes)

            // The command prints the same, as text and as JSON.
            let run = try await runTool(
                ["replica", "stats", "s3://\(bucket)/stats", "--json"], environment: gateway.childEnvironment)
            #expect(run.status == 0, "\(run.error)")
            let document = try #require(
                try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
            #expect((document["total"] as? [String: Any])?["objects"] as? Int == statistics.total.objects)
            #expect(document["newestLastEpoch"] as? Int == Int(last))
            let text = try await runTool(
                ["replica", "stats", "s3://\(bucket)/stats"], environment: gateway.childEnvironment)
            #expect(text.status == 0 && text.output.contains("needed by the newest:"), "\(text.output)\(text.error)")
        }

        @Test func anEncryptedReplicaWithoutItsKeyIsCountedButItsGenerationsAreNotRead() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "sealed")
            let directory = try temporaryDirectory("sealed-stats")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 4)
            try journal.close()
            let key = try ReplicationKey(id: "k1", bytes: [UInt8](repeating: 9, count: 32))
            try await ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: ReplicationOptions(keyring: ReplicationKeyring(current: key))
            ).shipOnce()
            let statistics = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .statistics()
            #expect(statistics.encrypted && statistics.generations.objects == 1)
            #expect(statistics.newestGeneration == nil && statistics.newestNeeds.objects == 0)
            // With its key, everything is read, the lease too; with another key, that is said.
            let keyed = try await ReplicaRestorer(
                from: location, configuration: gateway.configuration(), keyring: ReplicationKeyring(current: key)
            ).statistics()
            #expect(keyed.newestGeneration == 1 && keyed.leaseTerm == 1 && keyed.oldestWritten != nil)
            let other = try ReplicationKey(id: "k1", bytes: [UInt8](repeating: 3, count: 32))
            await #expect(throws: ReplicationError.self) {
                try await ReplicaRestorer(
                    from: location, configuration: gateway.configuration(), keyring: ReplicationKeyring(current: other)
                ).statistics()
            }
            let nothing = try await runTool(
                ["replica", "stats", "s3://\(bucket)/nothing-here"], environment: gateway.childEnvironment)
            #expect(nothing.status == 66, "no replica is no input: \(nothing.error)")
        }

        @Test func aPrefixHoldingOtherObjectsIsRefusedAfterOneListingWhateverItHolds() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let bucket = try await gateway.freshBucket(client)
            for index in 0..<40 { try await client.put(bucket: bucket, key: "photos/\(index).jpg", body: [1]) }
            let counting = gateway.client()
            let location = S3Location(bucket: bucket, prefix: "photos")
            await #expect {
                try await Replica(client: counting, location: location, keyring: nil).identity()
            } throws: { error in
                (error as? ReplicationError)?.code == .foreignPrefix
            }
            #expect(counting.listRequestsSent == 1, "one page of ten keys, not the whole prefix")
            await #expect(throws: ReplicationError.self) {
                try await ReplicaRestorer(from: location, configuration: gateway.configuration()).statistics()
            }
        }
    }
}
