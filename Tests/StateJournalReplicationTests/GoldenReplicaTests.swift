import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// Replicas written by released versions, kept byte for byte: every later version restores them.
    ///
    /// Each was shipped by `statejournal replicate` (replica layout 1) while `statejournal soak
    /// --objects 12 --seed 1 --durability everyCommit` wrote the store, compacting as it goes:
    /// generations, checkpoints, sealed segments and tail pieces. `objects/` holds every object
    /// under the prefix, `store/` the store it was shipped from.
    /// - `Golden/replica-v1-release-0.1.0`: release 0.1.0, a store of format version 2, tail pieces
    ///   named per segment; 10 generations.
    /// - `Golden/replica-v1`: the development version after 0.1.0 that first wrote format version 3
    ///   (commit cda4f9c); 12 generations.
    @Suite struct GoldenReplicaTests {
        /// A golden replica and the number of generations it holds.
        struct Golden: Sendable, CustomStringConvertible {
            var name: String
            var generations: UInt64
            var url: URL {
                URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/" + name)
            }
            var description: String { name }
        }

        static let goldens = [
            Golden(name: "replica-v1-release-0.1.0", generations: 10), Golden(name: "replica-v1", generations: 12),
        ]

        /// Uploads the golden replica's objects, as they are, to a fresh prefix.
        static func upload(_ golden: Golden, to gateway: Gateway) async throws -> S3Location {
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "golden-v1")
            let client = gateway.client()
            let objects = golden.url.appendingPathComponent("objects")
            let walker = try #require(FileManager.default.enumerator(atPath: objects.path))
            while let relative = walker.nextObject() as? String {
                let url = objects.appendingPathComponent(relative)
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory),
                    !isDirectory.boolValue
                else { continue }
                try await client.put(
                    bucket: location.bucket, key: location.prefix + relative, body: Array(try Data(contentsOf: url)))
            }
            return location
        }

        @Test(arguments: goldens)
        func aReplicaShippedByAnEarlierVersionIsRestoredVerifiedAndContinued(golden: Golden) async throws {
            let gateway = try Gateway.required()
            let location = try await Self.upload(golden, to: gateway)
            let directory = try temporaryDirectory("golden-replica")
            defer { try? FileManager.default.removeItem(at: directory) }
            let source = directory.appendingPathComponent("source")
            try FileManager.default.copyItem(at: golden.url.appendingPathComponent("store"), to: source)
            let restorer = ReplicaRestorer(from: location, configuration: gateway.configuration())

            let latest = directory.appendingPathComponent("latest")
            let report = try await restorer.restore(into: latest)
            #expect(report.damage.isEmpty)
            #expect(report.generation == golden.generations)
            #expect(try JournalReader(at: latest).state().entries == JournalReader(at: source).state().entries)
            #expect(try StoreInspector(at: latest).log().map(\.epoch) == StoreInspector(at: source).log().map(\.epoch))
            let checked = try await runTool(
                ["soak", latest.path, "--check", "--objects", "12", "--seed", "1"],
                environment: gateway.childEnvironment)
            #expect(checked.status == 0, "\(checked.output)\(checked.error)")

            // An epoch only older generations reach, before the compaction.
            let generations = try await restorer.generations()
            #expect(generations.count == golden.generations && generations.allSatisfy { $0.epochs != nil })
            let early = try #require(generations.first?.epochs?.upperBound)
            let past = directory.appendingPathComponent("past")
            let pastReport = try await restorer.restore(into: past, target: .epoch(early))
            #expect(pastReport.epoch.epoch == early)
            let pastChecked = try await runTool(
                ["soak", past.path, "--check", "--objects", "12", "--seed", "1"], environment: gateway.childEnvironment)
            #expect(pastChecked.status == 0, "\(pastChecked.output)\(pastChecked.error)")

            // The restored store takes new epochs, and a shipper of today continues the replica.
            let journal = try Journal.open(at: latest)
            let next = try commit(journal, count: 2)
            #expect(next.first == report.epoch.epoch + 1)
            try journal.close()
            #expect(StoreInspector.verify(latest).status == .clean)
            let shipped = try await ReplicationShipper(
                store: latest, to: location, configuration: gateway.configuration()
            ).shipOnce()
            #expect(shipped.generation == golden.generations + 1 && shipped.lastEpoch == next.last)
            let again = directory.appendingPathComponent("again")
            #expect(try await restorer.restore(into: again).epoch.epoch == next.last)
            #expect(try JournalReader(at: again).state().entries == JournalReader(at: latest).state().entries)
        }
    }
}
