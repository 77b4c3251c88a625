import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

/// `count` bytes that do not compress.
func incompressibleBytes(_ count: Int) -> [UInt8] {
    var random = SystemRandomNumberGenerator()
    var bytes = [UInt8](repeating: 0, count: count)
    for index in stride(from: 0, to: count, by: 8) {
        withUnsafeBytes(of: random.next()) { word in
            for offset in 0..<min(8, count - index) { bytes[index + offset] = word[offset] }
        }
    }
    return bytes
}

extension GatewayTests {
    /// The pieces of a large object are fetched several at a time, and checked as strictly as one at
    /// a time.
    @Suite struct ConcurrentPieceTests {
        static let key = try! ReplicationKey(id: "pieces", bytes: Array(repeating: 3, count: 32))

        /// A store whose second shipment adds 30 MiB in one epoch (one object of about four pieces),
        /// shipped with `keyring`; the epochs before and after it.
        static func shipped(_ label: String, keyring: ReplicationKeyring?) async throws -> (
            gateway: Gateway, location: S3Location, directory: URL, store: URL, before: UInt64, last: UInt64
        ) {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: label)
            let directory = try temporaryDirectory(label)
            let store = directory.appendingPathComponent("store")
            let journal = try Journal.open(
                at: store, options: JournalOptions(segmentSizeLimit: 64 << 20, compaction: .manual))
            defer { try? journal.close() }
            let shipper = ReplicationShipper(
                store: store, to: location, configuration: gateway.configuration(),
                options: ReplicationOptions(keyring: keyring))
            try commit(journal, count: 5)
            try await shipper.shipOnce()
            let before = try journal.history().last!.epoch
            let epoch = try journal.beginEpoch()
            for item in 0..<10 {
                try epoch.put(RestorationPath("Main", "Blob-\(item)"), incompressibleBytes(3 << 20))
            }
            let last = try epoch.commit().epoch
            try await shipper.shipOnce()
            return (gateway, location, directory, store, before, last)
        }

        @Test(arguments: [false, true])
        func aStoreOfObjectsSeveralTimesThePieceSizeComesBackByteForByteWithPiecesFetchedAtOnce(encrypted: Bool)
            async throws
        {
            let keyring = encrypted ? ReplicationKeyring(current: Self.key) : nil
            let fixture = try await Self.shipped("pieces-\(encrypted)", keyring: keyring)
            defer { try? FileManager.default.removeItem(at: fixture.directory) }
            let objects = try await fixture.gateway.client().list(
                bucket: fixture.location.bucket, prefix: fixture.location.prefix)
            let large = try #require(objects.max { $0.size < $1.size })
            #expect(large.size > 3 * Int64(ReplicaLimits.streamingPieceBytes), "\(objects)")

            let restored = fixture.directory.appendingPathComponent("restored")
            let (report, counts) = try await withFaultProxy(upstream: fixture.gateway.endpoint) { proxy in
                let report = try await ReplicaRestorer(
                    from: fixture.location, configuration: proxy.configuration(for: fixture.gateway), keyring: keyring
                ).restore(into: restored)
                return (report, try await proxy.counts())
            }

            #expect(report.damage.isEmpty)
            #expect(report.epoch.epoch == fixture.last)
            // Every restored file is the store's, byte for byte.
            let original = try directoryContents(fixture.store)
            let files = try directoryContents(restored)
            #expect(!files.isEmpty)
            for (name, bytes) in files {
                #expect(original[name] == bytes, "\(name) differs")
            }
            // The large object came in ranged pieces: the header, then about four pieces (or groups
            // of sealed chunks). How many of them were in flight at once, and so how many connections
            // they took, depends on how fast each came back: `PieceWindowTests` shows the window
            // without a network.
            let gets = counts.count(method: "GET", path: "*/" + large.key)
            #expect(gets >= 5, "\(gets) requests of \(large.key)")
        }

        @Test func aDamagedPieceInTheMiddleOfALargeObjectIsReportedAndTheRestoreStopsBeforeTheObject()
            async throws
        {
            let fixture = try await Self.shipped("damaged-piece", keyring: nil)
            defer { try? FileManager.default.removeItem(at: fixture.directory) }
            let client = fixture.gateway.client()
            let objects = try await client.list(bucket: fixture.location.bucket, prefix: fixture.location.prefix)
            let large = try #require(objects.max { $0.size < $1.size })
            #expect(large.size > 3 * Int64(ReplicaLimits.streamingPieceBytes), "\(objects)")
            // A byte in the third of its four pieces, well before the last.
            var bytes = try #require(try await client.get(bucket: fixture.location.bucket, key: large.key))
            let offset = 2 * ReplicaLimits.streamingPieceBytes + 4096
            bytes[offset] ^= 0x40
            try await client.put(bucket: fixture.location.bucket, key: large.key, body: bytes)

            let restored = fixture.directory.appendingPathComponent("restored")
            let report = try await ReplicaRestorer(
                from: fixture.location, configuration: fixture.gateway.configuration()
            )
            .restore(into: restored)

            #expect(report.epoch.epoch == fixture.before)
            #expect(report.damage.count == 1)
            #expect(report.damage.first?.key == large.key)
            #expect(report.damage.first?.epochsLost == (fixture.before + 1)...fixture.last)
            #expect(StoreInspector.verify(restored).status == .clean)
            // Nothing of the damaged object is kept: the segment ends where it starts.
            let total = try directoryContents(restored).values.reduce(0) { $0 + $1.count }
            #expect(total < ReplicaLimits.streamingPieceBytes, "\(total) bytes restored")
        }
    }
}
