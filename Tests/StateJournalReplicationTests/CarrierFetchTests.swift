import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

/// A replica whose newest generation, 5, names the bytes of its live segment in pieces that
/// generations 2, 3 and 4 carry inline, in turn: 2, 3, 4, 2, 3, 4, … (with one pass shipped). Each carrier also carries
/// `padding` bytes no generation names, so that fetching one costs what a full generation costs.
/// With `passes` of more than one, the carriers and the newest generation come after the shipped
/// ones, and the newest is built on the last shipped.
///
/// What someone who can write the bucket can plant: every piece holds the segment's own bytes, so
/// the restore's result is the one generation 1 gives; only the order of the pieces is hostile.
struct InterleavedCarriers {
    let shipped: ShippedReplica
    /// The generation the attack is built on, as its shipper wrote it.
    let original: ReplicaGeneration
    /// The live segment's bytes.
    let segment: [UInt8]
    /// The number of pieces generation 5 names.
    let pieces: Int

    /// The carriers, in the order the pieces name them.
    let carriers: [UInt64]
    /// The generation that names the pieces.
    var newest: UInt64 { (carriers.last ?? 0) + 1 }

    static func plant(
        _ gateway: Gateway, prefix: String, passes: [Int] = [60], pieces wanted: Int = 600, padding: Int = 1 << 20
    ) async throws -> InterleavedCarriers {
        let shipped = try await ShippedReplica.ship(
            gateway, bucket: try await gateway.freshBucket(), prefix: prefix, passes: passes, inline: true)
        let original = try await shipped.generation(shipped.newestGeneration)
        let carriers = (1...3).map { shipped.newestGeneration + UInt64($0) }
        let liveIndex = try #require(original.files.lastIndex { !$0.isCheckpoint && !$0.sealed })
        let live = original.files[liveIndex]
        let handle = try FileHandle(forReadingFrom: shipped.store.appendingPathComponent(live.name))
        defer { try? handle.close() }
        let segment = [UInt8](try #require(try handle.read(upToCount: Int(live.length))))
        try #require(segment.count == Int(live.length))
        let count = min(wanted, segment.count / 4)
        let size = segment.count / count
        var inline: [[UInt8]] = Array(repeating: [], count: carriers.count)
        var objects: [ReplicaGeneration.Object] = []
        for index in 0..<count {
            let start = index * size
            let end = index == count - 1 ? segment.count : start + size
            let bytes = Array(segment[start..<end])
            let carrier = index % carriers.count
            objects.append(
                ReplicaGeneration.Object(
                    key: ReplicaLayout.generation(carriers[carrier]), start: Int64(start), end: Int64(end),
                    sha256: ReplicaLayout.sha256Hex(bytes), level: 0, offset: Int64(inline[carrier].count)))
            inline[carrier] += bytes
        }
        for (carrier, number) in carriers.enumerated() {
            var document = original
            document.generation = number
            let padded = inline[carrier] + [UInt8](repeating: 0x5A, count: padding)
            try await shipped.put(
                ReplicaLayout.generation(number), payload: try GenerationContainer.seal(document, inline: padded),
                storeID: original.storeID)
        }
        var attack = original
        attack.generation = shipped.newestGeneration + 4
        attack.files[liveIndex].objects = objects
        try await shipped.put(
            ReplicaLayout.generation(attack.generation), payload: try GenerationContainer.seal(attack, inline: []),
            storeID: original.storeID)
        return InterleavedCarriers(
            shipped: shipped, original: original, segment: segment, pieces: count, carriers: carriers)
    }

    /// The path a `GET` of carrier `number` asks for.
    func path(ofCarrier number: UInt64) -> String {
        "/\(shipped.location.bucket)/\(shipped.location.prefix)\(ReplicaLayout.generation(number))"
    }
}

extension GatewayTests {
    /// Generations that name bytes other generations carry inline, in an order chosen to make a
    /// reader fetch the carriers again and again.
    @Suite struct CarrierFetchTests {
        @Test func piecesSpreadOverThreeCarriersInTurnCostOneDownloadOfEachCarrierAndRestoreTheSameStore()
            async throws
        {
            let gateway = try Gateway.required()
            let attack = try await InterleavedCarriers.plant(gateway, prefix: "interleaved")
            defer { attack.shipped.remove() }
            let target = attack.shipped.directory.appendingPathComponent("restored")

            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let restorer = ReplicaRestorer(
                    from: attack.shipped.location, configuration: proxy.configuration(for: gateway))
                let clock = ContinuousClock.now
                let report = try await restorer.restore(into: target)
                let elapsed = ContinuousClock.now - clock
                let counts = try await proxy.counts()
                let fetches = attack.carriers.map {
                    counts.count(method: "GET", path: attack.path(ofCarrier: $0))
                }

                print(
                    "FIGURE interleaved carriers: \(attack.pieces) pieces over 3 carriers: \(counts.byMethod["GET"] ?? 0) GET requests (carriers 2, 3, 4 fetched \(fetches) times), \(elapsed)"
                )
                // Generation 4 is also read as a generation, the one below the newest (for its terms).
                for (number, count) in zip(attack.carriers, fetches) {
                    let asGeneration = number == attack.newest - 1 ? 1 : 0
                    #expect(
                        count <= 1 + asGeneration,
                        "carrier \(number) was fetched \(count) times for \(attack.pieces) pieces")
                }
                #expect(report.generation == attack.newest)
                #expect(report.epoch.epoch == attack.shipped.lastEpochs[1])
                #expect(report.damage.isEmpty, "\(report.damage)")
                #expect(report.verification.status == .clean)
                #expect(report.objectsDownloaded >= attack.pieces)
                let live = try #require(attack.original.files.last { !$0.isCheckpoint && !$0.sealed })
                let restored = try Data(contentsOf: target.appendingPathComponent(live.name))
                #expect([UInt8](restored) == attack.segment, "the live segment, byte for byte")
                let journal = try Journal.open(at: target)
                defer { try? journal.close() }
                #expect(try journal.state().entries == attack.shipped.states[1])
            }
        }

        @Test func theToolRestoresPiecesSpreadOverCarriersInTurnInBoundedMemoryAndExitsClean() async throws {
            let gateway = try Gateway.required()
            let attack = try await InterleavedCarriers.plant(gateway, prefix: "interleaved-tool", padding: 4 << 20)
            defer { attack.shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }

            let run = try attack.shipped.restoreWithTool(into: sandbox.target)

            print(
                "FIGURE statejournal restore over interleaved carriers of 4 MiB: \(attack.pieces) pieces, \(String(format: "%.1f", run.seconds)) s, peak \(run.peakKiB / 1024) MiB"
            )
            #expect(run.status == 0, "\(run.error)")
            #expect(run.peakKiB < UntrustedBucketTests.peakLimitKiB, "peak \(run.peakKiB) KiB")
        }

        @Test func aFollowerPassOverPiecesSpreadOverThreeCarriersInTurnFetchesEachCarrierOnce() async throws {
            let gateway = try Gateway.required()
            let attack = try await InterleavedCarriers.plant(gateway, prefix: "interleaved-follower")
            defer { attack.shipped.remove() }
            // The follower holds generation 1 but for its live segment, which it then fetches whole.
            let replica = try await attack.shipped.boundReplica()
            let directory = try FollowerDirectory(opening: attack.shipped.directory.appendingPathComponent("follower"))
            let generation = try #require(
                try await replica.generation(attack.newest, of: attack.original.storeID))

            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let client = S3Client(configuration: proxy.configuration(for: gateway))
                let throughProxy = Replica(client: client, location: replica.location, keyring: nil).bound(
                    to: attack.original.storeID)
                let apply = FollowerApply(
                    replica: throughProxy, directory: directory, generation: generation, isCancelled: { false })
                var counts = AppliedCounts()
                _ = try await apply.run(over: FollowedFiles(local: nil), counts: &counts)
                let requests = try await proxy.counts()
                let fetches = attack.carriers.map {
                    requests.count(method: "GET", path: attack.path(ofCarrier: $0))
                }

                print(
                    "FIGURE follower pass over interleaved carriers: \(attack.pieces) pieces: \(requests.byMethod["GET"] ?? 0) GET requests (carriers 2, 3, 4 fetched \(fetches) times)"
                )
                for (number, count) in zip(attack.carriers, fetches) {
                    #expect(count <= 1, "carrier \(number) was fetched \(count) times for \(attack.pieces) pieces")
                }
                #expect(counts.objects >= attack.pieces)
                let live = try #require(attack.original.files.last { !$0.isCheckpoint && !$0.sealed })
                let applied = try Data(contentsOf: directory.url.appendingPathComponent(live.name))
                #expect([UInt8](applied) == attack.segment, "the live segment, byte for byte")
            }
        }

        @Test func aFollowerExtendingItsLiveSegmentOverPiecesSpreadOverThreeCarriersInTurnFetchesEachCarrierOnce()
            async throws
        {
            let gateway = try Gateway.required()
            // The follower holds generation 1 (epoch 60); the attack, generation 6, names the live
            // segment of generation 2 (epoch 120) in pieces carried by 3, 4 and 5 in turn.
            let attack = try await InterleavedCarriers.plant(gateway, prefix: "interleaved-extend", passes: [60, 60])
            defer { attack.shipped.remove() }
            let replica = try await attack.shipped.boundReplica()
            let directory = try FollowerDirectory(opening: attack.shipped.directory.appendingPathComponent("follower"))
            let first = try #require(try await replica.generation(1, of: attack.original.storeID))
            var counts = AppliedCounts()
            let held = try await FollowerApply(
                replica: replica, directory: directory, generation: first, isCancelled: { false }
            ).run(over: FollowedFiles(local: nil), counts: &counts)
            let generation = try #require(try await replica.generation(attack.newest, of: attack.original.storeID))
            let live = try #require(attack.original.files.last { !$0.isCheckpoint && !$0.sealed })
            let localLength = try #require(held.files[live.name]?.length)
            try #require(localLength < live.length, "the follower's live segment is extended")

            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let client = S3Client(configuration: proxy.configuration(for: gateway))
                let throughProxy = Replica(client: client, location: replica.location, keyring: nil).bound(
                    to: attack.original.storeID)
                let apply = FollowerApply(
                    replica: throughProxy, directory: directory, generation: generation, isCancelled: { false })
                var counts = AppliedCounts()
                _ = try await apply.run(over: held, counts: &counts)
                let requests = try await proxy.counts()
                let fetches = attack.carriers.map {
                    requests.count(method: "GET", path: attack.path(ofCarrier: $0))
                }

                print(
                    "FIGURE follower extending its live segment over interleaved carriers: \(counts.objects) pieces fetched: \(requests.byMethod["GET"] ?? 0) GET requests (carriers \(attack.carriers) fetched \(fetches) times)"
                )
                for (number, count) in zip(attack.carriers, fetches) {
                    #expect(count <= 1, "carrier \(number) was fetched \(count) times")
                }
                #expect(counts.objects > 1)
                let applied = try Data(contentsOf: directory.url.appendingPathComponent(live.name))
                #expect([UInt8](applied) == attack.segment, "the live segment, byte for byte")
            }
        }
    }
}
