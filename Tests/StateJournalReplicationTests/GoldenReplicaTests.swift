import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// Replicas written by released versions, kept byte for byte: every later version restores them.
    ///
    /// Each replica of layout 1 was shipped by `statejournal replicate` while `statejournal soak
    /// --objects 12 --seed 1 --durability everyCommit` wrote the store, compacting as it goes:
    /// generations, checkpoints, sealed segments and tail pieces. `objects/` holds every object
    /// under the prefix, `store/` the store it was shipped from.
    /// - `Golden/replica-v1-release-0.1.0`: release 0.1.0, a store of format version 2, tail pieces
    ///   named per segment; 10 generations.
    /// - `Golden/replica-v1`: the development version after 0.1.0 that first wrote format version 3
    ///   (commit cda4f9c); 12 generations.
    /// - `Golden/replica-v1-terms`: the first version with leases, shipped in two terms (a
    ///   `replicate` killed after 2.5 s, then another run that took over in term 2 and stopped on
    ///   SIGTERM, giving the lease up): 28 generations, terms starting at generations 1 and 13, and
    ///   `lease.json`.
    ///
    /// - `Golden/replica-v3`: layout 2, generations of version 3 that carry the bytes of the files
    ///   inline (no object but the generations, `replica.json` and `lease.json`), shipped by the
    ///   first version that wrote them with `replicate --interval 0.1` while `soak --seconds 0.6
    ///   --keep-history` wrote the store: 3 generations, segments sealed while made of pieces, and
    ///   bytes carried by earlier generations.
    ///
    /// - `Golden/replica-v4`: layout 3, generations of version 4 that name their predecessor and
    ///   where each term began from, in two terms: `replicate --interval 0.1` of a store `soak
    ///   --keep-history` wrote, stopped on SIGTERM (generations 1 to 9), then a follower of it
    ///   promoted (`promote`, the lease given up), whose term 2 began at generation 10 from
    ///   generation 9 with its marker epoch, and `soak` wrote on (14 generations in all).
    ///
    /// `Golden/replica-v2` is an encrypted replica of format version 2 (envelope and generation
    /// version 2: objects sealed in chunks), shipped the same way by this version's shipper with the
    /// key in `key` and chunks of 4 KiB, the smallest a reader accepts, so that its objects of a few
    /// kilobytes are several chunks each.
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
            Golden(name: "replica-v1-terms", generations: 28), Golden(name: "replica-v3", generations: 3),
            Golden(name: "replica-v4", generations: 14),
        ]
        static let goldenV2 = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Golden/replica-v2")

        /// Checks that the restored store `latest` holds the state and history of `source`, the store
        /// the replica was shipped from, and that the soak workload that wrote it checks it.
        static func expectSameStore(_ latest: URL, as source: URL, gateway: Gateway) async throws {
            #expect(try JournalReader(at: latest).state().entries == JournalReader(at: source).state().entries)
            #expect(try StoreInspector(at: latest).log().map(\.epoch) == StoreInspector(at: source).log().map(\.epoch))
            let checked = try await runTool(
                ["soak", latest.path, "--check", "--objects", "12", "--seed", "1"],
                environment: gateway.childEnvironment)
            #expect(checked.status == 0, "\(checked.output)\(checked.error)")
        }

        /// Uploads a golden replica's objects, as they are, to a fresh prefix.
        static func upload(to gateway: Gateway, from golden: URL, prefix: String = "golden-v1") async throws
            -> S3Location
        {
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: prefix)
            let client = gateway.client()
            let objects = golden.appendingPathComponent("objects")
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
            let location = try await Self.upload(to: gateway, from: golden.url)
            let directory = try temporaryDirectory("golden-replica")
            defer { try? FileManager.default.removeItem(at: directory) }
            let source = directory.appendingPathComponent("source")
            try FileManager.default.copyItem(at: golden.url.appendingPathComponent("store"), to: source)
            let restorer = ReplicaRestorer(from: location, configuration: gateway.configuration())

            let latest = directory.appendingPathComponent("latest")
            let report = try await restorer.restore(into: latest)
            #expect(report.damage.isEmpty)
            #expect(report.generation == golden.generations)
            try await Self.expectSameStore(latest, as: source, gateway: gateway)

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

        @Test func anEncryptedReplicaOfFormatVersion2IsRestoredVerifiedAndContinued() async throws {
            let gateway = try Gateway.required()
            let location = try await Self.upload(to: gateway, from: Self.goldenV2, prefix: "golden-v2")
            let directory = try temporaryDirectory("golden-replica-v2")
            defer { try? FileManager.default.removeItem(at: directory) }
            let source = directory.appendingPathComponent("source")
            try FileManager.default.copyItem(at: Self.goldenV2.appendingPathComponent("store"), to: source)
            let keyring = try ReplicationKeyring(contentsOfFile: Self.goldenV2.appendingPathComponent("key").path)

            // Every object but the identity is a version 2 envelope, most of several chunks.
            let objects = Self.goldenV2.appendingPathComponent("objects")
            let walker = try #require(FileManager.default.enumerator(atPath: objects.path))
            var chunked = 0
            while let relative = walker.nextObject() as? String {
                guard relative != "replica.json",
                    let bytes = FileManager.default.contents(atPath: objects.appendingPathComponent(relative).path)
                else { continue }
                #expect(Array(bytes.prefix(6)) == Array("SJRO".utf8) + [2, 1], "\(relative)")
                if bytes.count > 4096 + 512 { chunked += 1 }
            }
            #expect(chunked >= 10)

            let restorer = ReplicaRestorer(from: location, configuration: gateway.configuration(), keyring: keyring)
            let latest = directory.appendingPathComponent("latest")
            let report = try await restorer.restore(into: latest)
            #expect(report.damage.isEmpty)
            try await Self.expectSameStore(latest, as: source, gateway: gateway)

            // Every generation is intact, and an early epoch restores.
            let generations = try await restorer.generations()
            #expect(generations.count > 3 && generations.allSatisfy { $0.epochs != nil })
            let early = try #require(generations.first?.epochs?.upperBound)
            let past = directory.appendingPathComponent("past")
            #expect(try await restorer.restore(into: past, target: .epoch(early)).epoch.epoch == early)
            let pastChecked = try await runTool(
                ["soak", past.path, "--check", "--objects", "12", "--seed", "1"], environment: gateway.childEnvironment)
            #expect(pastChecked.status == 0, "\(pastChecked.output)\(pastChecked.error)")

            // Without the key, the restore says which key it needs.
            await #expect(throws: ReplicationError.self) {
                try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                    .restore(into: directory.appendingPathComponent("no-key"))
            }

            // The restored store takes new epochs, and a shipper of today continues the replica.
            let journal = try Journal.open(at: latest)
            let next = try commit(journal, count: 2)
            try journal.close()
            let shipped = try await ReplicationShipper(
                store: latest, to: location, configuration: gateway.configuration(),
                options: ReplicationOptions(keyring: keyring)
            ).shipOnce()
            #expect(shipped.generation == report.generation + 1 && shipped.lastEpoch == next.last)
            let again = directory.appendingPathComponent("again")
            #expect(try await restorer.restore(into: again).epoch.epoch == next.last)
            #expect(try JournalReader(at: again).state().entries == JournalReader(at: latest).state().entries)
        }
    }
}
