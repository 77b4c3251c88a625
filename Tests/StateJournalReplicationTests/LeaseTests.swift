import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif

/// Options with a short lease and interval, so that takeovers happen within a test.
/// Options with a short lease and interval, so that takeovers happen within a test; `host` stands in
/// for the machine the shipper runs on.
func leaseOptions(lease: Duration = .seconds(2), takesOver: Bool = false, host: String? = nil) -> ReplicationOptions {
    var options = ReplicationOptions(interval: .milliseconds(200))
    options.leaseDuration = lease
    options.takesOverImmediately = takesOver
    options.leaseHost = host
    return options
}

/// The replica's generations as they are in the bucket, oldest first.
func storedGenerations(_ location: S3Location, gateway: Gateway) async throws -> [ReplicaGeneration] {
    let client = gateway.client()
    var result: [ReplicaGeneration] = []
    for object in try await client.list(bucket: location.bucket, prefix: location.prefix + "generations/") {
        let bytes = try #require(try await client.get(bucket: location.bucket, key: object.key))
        let payload = try ObjectEnvelope.open(
            bytes, name: String(object.key.dropFirst(location.prefix.count)), keyring: nil, acceptsPlaintext: true,
            storeID: nil, replicaID: nil)
        result.append(try ReplicaGeneration.decode(payload, key: object.key))
    }
    return result
}

/// Waits until `condition` holds, checking every 100 ms, for at most `timeout`.
func eventually(
    timeout: Duration = .seconds(600), _ what: String, _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting until \(what)")
            return
        }
        try await Task.sleep(for: .milliseconds(100))
    }
}

@Suite struct GenerationTermTests {
    func generation(_ number: UInt64, term: UInt64?, starts: [(UInt64, UInt64)]?) -> ReplicaGeneration {
        var generation = ReplicaGeneration(
            storeID: String(repeating: "a", count: 32), generation: number, writtenMilliseconds: 0,
            storeGeneration: 1, nextFileSequence: 1, epochFloor: 0, lastEpoch: nil, lastEpochMilliseconds: nil,
            files: [])
        generation.term = term
        generation.holder = term.map { _ in String(repeating: "b", count: 32) }
        generation.terms = starts?.map { ReplicaGeneration.TermStart(term: $0.0, generation: $0.1) }
        return generation
    }

    @Test func aGenerationOfAnOlderTermAtOrAfterANewerTermsStartIsFencedOut() {
        let newest = generation(9, term: 3, starts: [(1, 1), (2, 4), (3, 7)])
        #expect(generation(7, term: 2, starts: [(1, 1), (2, 4)]).isFencedOut(by: newest))
        #expect(generation(8, term: 1, starts: [(1, 1)]).isFencedOut(by: newest))
        #expect(generation(5, term: 1, starts: [(1, 1)]).isFencedOut(by: newest))
        #expect(!generation(6, term: 2, starts: [(1, 1), (2, 4)]).isFencedOut(by: newest))
        #expect(!generation(3, term: 1, starts: [(1, 1)]).isFencedOut(by: newest))
        // Generations written before leases existed are term 0: fenced once any term began at or before them.
        #expect(generation(2, term: nil, starts: nil).isFencedOut(by: newest))
        #expect(!generation(2, term: nil, starts: nil).isFencedOut(by: generation(5, term: nil, starts: nil)))
    }

    @Test func aGenerationWithInconsistentTermsIsDamaged() throws {
        let cases: [(String, UInt64?, [(UInt64, UInt64)]?)] = [
            ("a term without term starts", 2, nil),
            ("term starts that do not rise", 2, [(2, 1), (1, 3)]),
            ("a last term start of another term", 2, [(1, 1)]),
            ("a term start after the generation", 2, [(1, 1), (2, 6)]),
            ("a term of zero", 0, [(0, 1)]),
            ("term starts without a term", nil, [(1, 1)]),
        ]
        for (what, term, starts) in cases {
            let bad = generation(5, term: term, starts: starts)
            let error = #expect(throws: ReplicationError.self, "\(what)") {
                try bad.validated(number: 5, storeID: bad.storeID, key: "g")
            }
            #expect(error?.code == .damagedObject, "\(what)")
        }
        let good = generation(5, term: 2, starts: [(1, 1), (2, 4)])
        #expect(throws: Never.self) { try good.validated(number: 5, storeID: good.storeID, key: "g") }
    }

    @Test func aLeaseDocumentFromTheBucketIsCheckedBeforeItIsBelieved() throws {
        let valid = LeaseDocument(
            term: 3, holder: String(repeating: "c", count: 32), renewal: 7, durationMilliseconds: 10_000,
            released: false, latestGeneration: 12, host: "a", writtenMilliseconds: 1)
        #expect(try LeaseDocument.decode(try LeaseDocument.encode(valid), key: "lease.json") == valid)
        var forged = [valid, valid, valid, valid]
        forged[0].holder = "../../etc"
        forged[1].term = 0
        forged[2].durationMilliseconds = 0
        forged[3].renewal = UInt64.max
        for document in forged {
            let error = #expect(throws: ReplicationError.self) {
                try LeaseDocument.decode(try LeaseDocument.encode(document), key: "lease.json")
            }
            #expect(error?.code == .damagedObject)
        }
        #expect(throws: ReplicationError.self) { try LeaseDocument.decode(Array("{}".utf8), key: "lease.json") }
    }
}

@Suite struct LeaseHolderTests {
    @Test func aMachineIDFileLargerThanFourKiBOrUnreadableIsIgnored() throws {
        let directory = try temporaryDirectory("machine-id")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store")
        let small = directory.appendingPathComponent("small").path
        let large = directory.appendingPathComponent("large").path
        let missing = directory.appendingPathComponent("missing").path
        try Data("0123abcd\n".utf8).write(to: URL(fileURLWithPath: small))
        try Data(("0123abcd" + String(repeating: "a", count: 4096)).utf8).write(to: URL(fileURLWithPath: large))
        #expect(LeaseKeeper.machineID(at: small) == "0123abcd")
        #expect(LeaseKeeper.machineID(at: large) == "")
        #expect(LeaseKeeper.machineID(at: missing) == "")
        #expect(LeaseKeeper.machineID(at: directory.path) == "")
        let withoutID = LeaseKeeper.holderID(store: store, machineIDPath: missing)
        #expect(LeaseKeeper.holderID(store: store, machineIDPath: large) == withoutID)
        #expect(LeaseKeeper.holderID(store: store, machineIDPath: small) != withoutID)
    }
}

extension GatewayTests {
    /// One shipper at a time writes a replica: the lease, its terms, and the fence.
    @Suite struct LeaseTests {
        @Test func aSecondShipperWaitsWhileTheFirstHoldsTheLeaseAndTakesOverWhenItIsReleased() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "two")
            let directory = try temporaryDirectory("lease")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL, options: JournalOptions(segmentSizeLimit: 4096))
            try commit(journal, count: 5)
            // Two hosts shipping one store (a shared volume): the second waits.
            let first = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(lease: .seconds(600), host: "host-a"))
            let second = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(lease: .seconds(600), host: "host-b"))
            let firstRun = Task { try await first.run() }
            try await eventually("the first shipper wrote a generation") {
                try await !storedGenerations(location, gateway: gateway).isEmpty
            }
            let secondRun = Task { try await second.run() }
            // For six seconds, with commits going on, every generation is the first's.
            for round in 0..<12 {
                try commit(journal, count: 3, marker: "round \(round)")
                try await Task.sleep(for: .milliseconds(500))
            }
            let whileHeld = try await storedGenerations(location, gateway: gateway)
            #expect(Set(whileHeld.compactMap(\.holder)).count == 1)
            #expect(whileHeld.allSatisfy { $0.term == 1 })
            firstRun.cancel()
            try await firstRun.value
            // Released: the second takes over at once (the lease would last ten minutes), in term 2,
            // and goes on shipping.
            try await eventually(timeout: .seconds(600), "the second shipper started term 2") {
                try await storedGenerations(location, gateway: gateway).contains { $0.term == 2 }
            }
            let last = try commit(journal, count: 4, marker: "after")
            try await eventually("the second shipper shipped the last commit") {
                try await storedGenerations(location, gateway: gateway).last?.lastEpoch == last.last
            }
            secondRun.cancel()
            try await secondRun.value
            let generations = try await storedGenerations(location, gateway: gateway)
            let newest = try #require(generations.last)
            let termStart = try #require(generations.first { $0.term == 2 })
            #expect(newest.terms?.map(\.term) == [1, 2])
            #expect(newest.terms?.last?.generation == termStart.generation)
            #expect(generations.allSatisfy { !$0.isFencedOut(by: newest) })
            let restored = directory.appendingPathComponent("restored")
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: restored)
            #expect(report.epoch.epoch == last.last)
            #expect(try JournalReader(at: restored).state().entries == journal.state().entries)
            try journal.close()
        }

        @Test func aShipperOnAnotherHostTakesOverFromAKilledOneOnceItsLeaseExpires() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "killed")
            let directory = try temporaryDirectory("lease-kill")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 6)
            let killed = try startTool(
                [
                    "replicate", storeURL.path, "--to", "s3://\(bucket)/killed", "--interval", "0.2", "--lease-seconds",
                    "2",
                ],
                environment: gateway.childEnvironment, logs: directory, name: "killed")
            try await eventually("the command shipped a generation") {
                try await !storedGenerations(location, gateway: gateway).isEmpty
            }
            kill(killed.processIdentifier, SIGKILL)
            _ = await waitForExit(killed)
            let killedHolder = try await storedGenerations(location, gateway: gateway).last?.holder
            let last = try commit(journal, count: 3)
            let successor = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(host: "another host"))
            let waitStarted = ContinuousClock.now
            let report = try await successor.shipOnce()
            // It waited for the lease (2 s) to stay unchanged: no sooner.
            #expect(ContinuousClock.now - waitStarted >= .milliseconds(2000))
            #expect(report.lastEpoch == last.last)
            let generations = try await storedGenerations(location, gateway: gateway)
            let newest = try #require(generations.last)
            #expect(newest.term == 2 && newest.holder != killedHolder)
            #expect(generations.filter { $0.term == 1 }.allSatisfy { $0.holder == killedHolder })
            try journal.close()
        }

        @Test func aShipperStartedAgainOnTheSameHostTakesOverFromItsKilledRunAtOnce() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "restarted")
            let directory = try temporaryDirectory("lease-restart")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 6)
            var terms: [UInt64] = []
            for run in 0..<3 {
                // A lease long enough that waiting for it would time the test out.
                let command = try startTool(
                    [
                        "replicate", storeURL.path, "--to", "s3://\(bucket)/restarted", "--interval", "0.2",
                        "--lease-seconds", "600",
                    ],
                    environment: gateway.childEnvironment, logs: directory, name: "run-\(run)")
                let last = try commit(journal, count: 2, marker: "run \(run)")
                try await eventually(timeout: .seconds(600), "run \(run) shipped its commits") {
                    try await storedGenerations(location, gateway: gateway).last?.lastEpoch == last.last
                }
                terms.append(try await storedGenerations(location, gateway: gateway).last?.term ?? 0)
                kill(command.processIdentifier, SIGKILL)
                _ = await waitForExit(command)
            }
            #expect(terms == [1, 2, 3])
            try journal.close()
        }

        @Test func aLeaseNoShipperCouldHaveWrittenIsReplacedOnceItHasStayedUnchanged() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let location = S3Location(bucket: try await gateway.freshBucket(client), prefix: "garbage")
            let directory = try temporaryDirectory("lease-garbage")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            let epochs = try commit(journal, count: 3)
            try await ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(host: "first")
            ).shipOnce()
            let oversized = String(repeating: "x", count: 100_000)
            for garbage in ["not a lease", #"{"format":"statejournal-replica-lease","version":1}"#, oversized] {
                try await client.put(
                    bucket: location.bucket, key: location.prefix + LeaseDocument.name, body: Array(garbage.utf8))
                let later = try commit(journal, count: 1)
                let report = try await ReplicationShipper(
                    store: storeURL, to: location, configuration: gateway.configuration(),
                    options: leaseOptions(lease: .seconds(1), host: "next \(garbage.count)")
                ).shipOnce()
                #expect(report.lastEpoch == later.last)
                let lease = try #require(
                    try await Replica(client: client, location: location, keyring: nil).leaseAsStored())
                #expect(lease.document != nil)
            }
            let generations = try await storedGenerations(location, gateway: gateway)
            #expect(generations.map(\.term) == [1, 2, 3, 4])
            #expect(generations.first?.lastEpoch == epochs.last)
            try journal.close()
        }

        @Test func aShipperWhoseLeaseWasTakenIsFencedAndNothingItWritesAfterIsRestored() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let location = S3Location(bucket: try await gateway.freshBucket(client), prefix: "fenced")
            let directory = try temporaryDirectory("lease-fenced")
            defer { try? FileManager.default.removeItem(at: directory) }
            // Two hosts' copies of one store: the old primary's and the new one's.
            let oldURL = directory.appendingPathComponent("old")
            let old = try Journal.open(at: oldURL)
            try commit(old, count: 5)
            try old.close()
            let newURL = directory.appendingPathComponent("new")
            try FileManager.default.copyItem(at: oldURL, to: newURL)
            let oldPrimary = ReplicationShipper(
                store: oldURL, to: location, configuration: gateway.configuration(), options: leaseOptions())
            let shippedByOld = try await oldPrimary.shipOnce()

            let newPrimary = ReplicationShipper(
                store: newURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(takesOver: true))
            let newStore = try Journal.open(at: newURL)
            let accepted = try commit(newStore, count: 2, marker: "new")
            let shippedByNew = try await newPrimary.shipOnce()
            #expect(shippedByNew.lastEpoch == accepted.last)

            // The old primary commits epochs of its own and tries to ship them: fenced.
            let oldStore = try Journal.open(at: oldURL)
            let diverged = try commit(oldStore, count: 3, marker: "old")
            let error = await #expect(throws: ReplicationError.self) { try await oldPrimary.shipOnce() }
            #expect(error?.code == .fenced)
            #expect(error?.message.contains("epochs \(shippedByOld.lastEpoch! + 1)…\(diverged.last!)") == true)
            // Whatever it did, no generation of term 1 sits at or after term 2's start.
            let generations = try await storedGenerations(location, gateway: gateway)
            let newest = try #require(generations.last)
            #expect(newest.term == 2)
            let start = try #require(newest.terms?.last?.generation)
            #expect(generations.filter { $0.generation >= start }.allSatisfy { $0.term == 2 })

            // A stale generation in a hole above the term start (where a paused old primary's late
            // write could land once retention deleted that number), naming the old primary's
            // diverged segment, is never restored from, even for an epoch only older generations reach.
            try commit(newStore, count: 2, marker: "more")
            try await newPrimary.shipOnce()
            let expectedAtAccepted = try newStore.state(through: accepted.last!).entries
            _ = try newStore.compact()
            let more = try commit(newStore, count: 2, marker: "compacted")
            try await newPrimary.shipOnce()
            let afterMore = try await storedGenerations(location, gateway: gateway)
            let newestNow = try #require(afterMore.last)
            #expect(newestNow.firstEpoch! > accepted.last!, "the newest generation must not reach the epoch asked for")
            let hole = try #require(afterMore.first { $0.generation > start && $0.generation < newestNow.generation })
            var stale = try #require(generations.first { $0.term == 1 })
            let segment = try #require(stale.files.first)
            let oldBytes = Array(try Data(contentsOf: oldURL.appendingPathComponent(segment.name)))
            let hash = ReplicaLayout.sha256Hex(oldBytes)
            let piece = ReplicaLayout.piece(
                sequence: segment.sequence, start: 0, end: Int64(oldBytes.count), sha256: hash)
            try await client.put(
                bucket: location.bucket, key: location.prefix + piece,
                body: try ObjectEnvelope.seal(
                    oldBytes, name: piece, keyring: nil, storeID: nil, replicaID: nil,
                    chunkBytes: ReplicaLimits.sealedChunkBytes))
            stale.generation = hole.generation
            stale.lastEpoch = diverged.last
            stale.files[0].lastEpoch = diverged.last!
            stale.files[0].length = Int64(oldBytes.count)
            stale.files[0].objects = [
                ReplicaGeneration.Object(key: piece, start: 0, end: Int64(oldBytes.count), sha256: hash, level: 0)
            ]
            try await plantGeneration(stale, at: location, client: client)
            let restorer = ReplicaRestorer(from: location, configuration: gateway.configuration())
            let latest = try await restorer.restore(into: directory.appendingPathComponent("latest"))
            #expect(latest.epoch.epoch == more.last)
            // The old primary's epoch numbers exist in the new term too: a restore to one of them
            // brings the new term's content back, never the fenced primary's.
            let atDiverged = directory.appendingPathComponent("at-diverged")
            let report = try await restorer.restore(into: atDiverged, target: .epoch(accepted.last!))
            #expect(report.generation != hole.generation)
            #expect(
                try JournalReader(at: atDiverged).state().entries == expectedAtAccepted)
            #expect(
                try JournalReader(at: atDiverged).state().entries
                    != JournalReader(at: oldURL).state(through: accepted.last!).entries)

            // The same stale generation at the newest number, above every generation of term 2: a
            // restore passes over it for the newest generation of the newer term below it.
            stale.generation = newestNow.generation + 1
            try await plantGeneration(stale, at: location, client: client)
            let overTop = try await restorer.restore(into: directory.appendingPathComponent("over-top"))
            #expect(overTop.generation == newestNow.generation, "not the stale generation \(stale.generation)")
            #expect(overTop.epoch.epoch == more.last)
            try oldStore.close()
            try newStore.close()
        }

        @Test func aFencedPrimaryThatCompactedPastTheSuccessorsEpochsIsRefusedWhenStartedAgain() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "compacted-fenced")
            let directory = try temporaryDirectory("lease-compacted-fenced")
            defer { try? FileManager.default.removeItem(at: directory) }
            let oldURL = directory.appendingPathComponent("old")
            let old = try Journal.open(at: oldURL)
            try commit(old, count: 4)
            try old.close()
            let newURL = directory.appendingPathComponent("new")
            try FileManager.default.copyItem(at: oldURL, to: newURL)
            try await ReplicationShipper(
                store: oldURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(lease: .seconds(1), host: "old")
            ).shipOnce()
            // The old primary goes on committing, more than its successor will, and compacts: the
            // epochs it keeps are all numbered past the successor's newest, and were committed
            // before the successor's were (before the other host's term began).
            let oldStore = try Journal.open(at: oldURL)
            try commit(oldStore, count: 20, marker: "old host")
            _ = try oldStore.compact()
            let oldLast = try commit(oldStore, count: 1, marker: "old host, last")
            try oldStore.close()
            try await Task.sleep(for: .seconds(2))
            // The successor takes over, ships epochs of its own and stops gracefully.
            let newStore = try Journal.open(at: newURL)
            let shipped = try commit(newStore, count: 3, marker: "successor")
            let successor = ReplicationShipper(
                store: newURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(lease: .seconds(1), takesOver: true, host: "new"))
            let successorRun = Task { try await successor.run() }
            try await eventually("the successor shipped") {
                try await storedGenerations(location, gateway: gateway).last?.lastEpoch == shipped.last
            }
            successorRun.cancel()
            try await successorRun.value
            #expect(oldLast.last! > shipped.last!)
            #expect(try JournalReader(at: oldURL).history().first!.epoch > shipped.last!)
            // The old primary is started again: its store reaches past the replica's newest epoch
            // and no longer holds it, but what it holds after it is older than it. It refuses.
            let error = await #expect(throws: ReplicationError.self) {
                try await ReplicationShipper(
                    store: oldURL, to: location, configuration: gateway.configuration(),
                    options: leaseOptions(lease: .seconds(1), host: "old")
                ).shipOnce()
            }
            #expect(error?.code == .fenced)
            #expect(error?.message.contains("compacted that epoch away") == true, "\(error?.message ?? "")")
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: directory.appendingPathComponent("restored"))
            #expect(report.epoch.epoch == shipped.last)
            try newStore.close()
        }

        @Test func aFencedPrimaryStartedAgainDoesNotReplaceTheHistoryItsSuccessorShipped() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "restarted-fenced")
            let directory = try temporaryDirectory("lease-refenced")
            defer { try? FileManager.default.removeItem(at: directory) }
            let oldURL = directory.appendingPathComponent("old")
            let old = try Journal.open(at: oldURL)
            try commit(old, count: 4)
            let newURL = directory.appendingPathComponent("new")
            try old.close()
            try FileManager.default.copyItem(at: oldURL, to: newURL)
            try await ReplicationShipper(
                store: oldURL, to: location, configuration: gateway.configuration(), options: leaseOptions()
            ).shipOnce()
            // The successor ships epochs of its own and stops gracefully, giving the lease up.
            let newStore = try Journal.open(at: newURL)
            let shipped = try commit(newStore, count: 3, marker: "successor")
            let successor = ReplicationShipper(
                store: newURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(takesOver: true))
            let successorRun = Task { try await successor.run() }
            try await eventually("the successor shipped") {
                try await storedGenerations(location, gateway: gateway).last?.lastEpoch == shipped.last
            }
            successorRun.cancel()
            try await successorRun.value
            // The old primary, with epochs of its own past the takeover (and one of them longer),
            // is started again, as a service manager would: it refuses.
            let oldStore = try Journal.open(at: oldURL)
            try commit(oldStore, count: 5, marker: "diverged")
            try oldStore.close()
            for store in [oldURL] {
                let error = await #expect(throws: ReplicationError.self) {
                    try await ReplicationShipper(
                        store: store, to: location, configuration: gateway.configuration(), options: leaseOptions()
                    ).shipOnce()
                }
                #expect(error?.code == .fenced)
                #expect(error?.message.contains("diverged") == true, "\(error?.message ?? "")")
            }
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: directory.appendingPathComponent("restored"))
            #expect(report.epoch.epoch == shipped.last)
            #expect(
                try JournalReader(at: directory.appendingPathComponent("restored")).state().entries
                    == newStore.state().entries)
            // The successor's own store continues it, as does a lagging copy once it caught up.
            let lagging = directory.appendingPathComponent("lagging")
            try FileManager.default.copyItem(at: directory.appendingPathComponent("restored"), to: lagging)
            try await ReplicationShipper(
                store: lagging, to: location, configuration: gateway.configuration(),
                options: leaseOptions(host: "third host")
            ).shipOnce()
            try newStore.close()
        }

        /// A store (`store` in the returned directory) that host "a" shipped in term 1, and the
        /// generation of term 1 in the bucket.
        static func shippedInTermOne(_ prefix: String) async throws -> (
            gateway: Gateway, client: S3Client, location: S3Location, directory: URL, journal: Journal,
            termOne: ReplicaGeneration
        ) {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let location = S3Location(bucket: try await gateway.freshBucket(client), prefix: prefix)
            let directory = try temporaryDirectory("lease-\(prefix)")
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 3)
            try await ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: leaseOptions(host: "a")
            ).shipOnce()
            let termOne = try #require(try await storedGenerations(location, gateway: gateway).last)
            return (gateway, client, location, directory, journal, termOne)
        }

        @Test func aFollowerPassesOverAGenerationOfAnOlderTermNumberedAfterTheCurrentTermBegan() async throws {
            let (gateway, client, location, directory, journal, termOne) = try await Self.shippedInTermOne(
                "follow-fenced")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let accepted = try commit(journal, count: 2)
            try await ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(takesOver: true, host: "b")
            ).shipOnce()
            let copy = directory.appendingPathComponent("copy")
            let follower = ReplicaFollower(from: location, into: copy, configuration: gateway.configuration())
            let started = try await follower.followOnce()
            #expect(started.lastEpoch == accepted.last)
            // A generation of term 1 at the next number, naming term 1's files.
            var stale = termOne
            stale.generation = try #require(started.generation) + 1
            try await plantGeneration(stale, at: location, client: client)
            let before = try JournalReader(at: copy).state()
            let polled = try await follower.followOnce()
            #expect(!polled.applied && polled.lastEpoch == accepted.last)
            #expect(try JournalReader(at: copy).state().entries == before.entries)
            await follower.close()
            try journal.close()
        }

        @Test func aShipperPassesOverAGenerationOfAnOlderTermAtTheNextNumberInsteadOfContinuingFromIt()
            async throws
        {
            let (gateway, client, location, directory, journal, termOne) = try await Self.shippedInTermOne(
                "forged-next")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            try commit(journal, count: 2)
            let successor = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(takesOver: true, host: "b"))
            let started = try await successor.shipOnce()
            let termTwoStart = try #require(started.generation)
            // A generation of term 1 at the next free number, naming term 1's files.
            var forged = termOne
            forged.generation = termTwoStart + 1
            try await plantGeneration(forged, at: location, client: client)
            let last = try commit(journal, count: 2, marker: "after the forgery")
            var report = try await successor.shipOnce()
            if !report.wroteGeneration { report = try await successor.shipOnce() }
            #expect(report.wroteGeneration && report.lastEpoch == last.last)
            let generations = try await storedGenerations(location, gateway: gateway)
            let newest = try #require(generations.last)
            // The newest generation builds on the successor's own: term 2 still starts where it
            // began, so the forged generation stays fenced out for every reader.
            #expect(newest.term == 2)
            #expect(newest.terms?.map(\.term) == [1, 2])
            #expect(newest.terms?.last?.generation == termTwoStart)
            #expect(forged.isFencedOut(by: newest))
            let restored = directory.appendingPathComponent("restored")
            let restore = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: restored)
            #expect(restore.epoch.epoch == last.last)
            #expect(try JournalReader(at: restored).state().entries == journal.state().entries)
            try journal.close()
        }

        @Test func aShipperFencedWhenItsGenerationNumberIsTakenNamesTheHostAndTermOfTheShipperThatTookOver()
            async throws
        {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "fenced-named")
            let directory = try temporaryDirectory("lease-fenced-named")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 3)
            // Its lease never runs out and it never renews: it learns of the takeover only from the
            // generation number it meant to write being taken (a 412 on the create-only write).
            var oldOptions = leaseOptions(lease: .seconds(10), host: "old")
            oldOptions.leaseClock = StarvedClock()
            let old = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: oldOptions)
            try await old.shipOnce()
            try commit(journal, count: 2)
            try await ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(takesOver: true, host: "new")
            ).shipOnce()
            try commit(journal, count: 1)
            let error = await #expect(throws: ReplicationError.self) { try await old.shipOnce() }
            #expect(error?.code == .fenced)
            let message = error?.message ?? ""
            #expect(message.contains("(\(ProcessInfo.processInfo.hostName)) took over"), "\(message)")
            #expect(message.contains("in term 2"), "\(message)")
            #expect(!message.contains("unknown host"), "\(message)")
            try journal.close()
        }

        @Test func aShipperThatReplacesADamagedOrDeletedLeaseSaysItTookOver() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let location = S3Location(bucket: try await gateway.freshBucket(client), prefix: "replaced")
            let directory = try temporaryDirectory("lease-replaced")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 3)
            // Shippers whose renewers never run, so that only the test changes the lease.
            func options(_ host: String, _ logs: CapturedLogs) -> ReplicationOptions {
                var options = leaseOptions(takesOver: true, host: host)
                options.leaseClock = StarvedClock()
                options.logger = logs.logger
                return options
            }
            let firstLogs = CapturedLogs()
            try await ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: options("a", firstLogs)
            ).shipOnce()
            // The first shipper of a replica takes a lease nobody held: no takeover.
            #expect(firstLogs.all.filter { $0.message.contains("took over") }.isEmpty)
            let leaseKey = location.prefix + LeaseDocument.name
            try await client.put(bucket: location.bucket, key: leaseKey, body: Array("not a lease".utf8))
            try commit(journal, count: 1)
            let damagedLogs = CapturedLogs()
            try await ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: options("b", damagedLogs)
            ).shipOnce()
            #expect(
                damagedLogs.entries(.notice, containing: "took over the lease of \(location) in term 2, replacing one")
                    .count == 1, "\(damagedLogs.all.map(\.message))")
            try await client.delete(bucket: location.bucket, key: leaseKey)
            try commit(journal, count: 1)
            let deletedLogs = CapturedLogs()
            try await ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: options("c", deletedLogs)
            ).shipOnce()
            #expect(
                deletedLogs.entries(.notice, containing: "took over the lease of \(location) in term 3: it was missing")
                    .count == 1, "\(deletedLogs.all.map(\.message))")
            #expect(try await storedGenerations(location, gateway: gateway).map(\.term) == [1, 2, 3])
            try journal.close()
        }

        @Test func theReplicateCommandExitsWithTheFencedStatusWhenAnotherShipperTakesOver() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "cli")
            let directory = try temporaryDirectory("lease-cli")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 4)
            let command = try startTool(
                [
                    "replicate", storeURL.path, "--to", "s3://\(bucket)/cli", "--interval", "0.2", "--lease-seconds",
                    "2",
                ],
                environment: gateway.childEnvironment, logs: directory, name: "replicate")
            try await eventually("the command shipped a generation") {
                try await !storedGenerations(location, gateway: gateway).isEmpty
            }
            // Another host's shipper (a second one on this host is refused: see HistoryAttackTests).
            let usurper = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(takesOver: true, host: "usurper"))
            try await usurper.shipOnce()
            try commit(journal, count: 2)
            let status = await waitForExit(command, timeout: .seconds(600))
            if status == nil { command.terminate() }
            #expect(status == 76)
            let log = try String(contentsOf: directory.appendingPathComponent("replicate.err"), encoding: .utf8)
            #expect(log.contains("took over"), "\(log)")
            try journal.close()
        }
    }
}

extension GatewayTests {
    /// A follower that becomes the primary.
    @Suite struct PromotionTests {
        @Test func aFollowerPromotedAfterItsPrimaryIsKilledContinuesTheEpochSequenceInTheNextTerm() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "promoted")
            let directory = try temporaryDirectory("promotion")
            defer { try? FileManager.default.removeItem(at: directory) }
            let primaryURL = directory.appendingPathComponent("primary")
            let primaryStore = try Journal.open(at: primaryURL, options: JournalOptions(durability: .everyCommit))
            try commit(primaryStore, count: 5)
            let primary = try startTool(
                [
                    "replicate", primaryURL.path, "--to", "s3://\(bucket)/promoted", "--interval", "0.2",
                    "--lease-seconds", "2",
                ],
                environment: gateway.childEnvironment, logs: directory, name: "primary")
            let standbyURL = directory.appendingPathComponent("standby")
            let follower = ReplicaFollower(from: location, into: standbyURL, configuration: gateway.configuration())
            let shipped = try commit(primaryStore, count: 4, marker: "shipped")
            try await eventually("the follower holds the primary's last commit") {
                (try? await follower.followOnce().lastEpoch) == shipped.last
            }
            // The primary dies; its host keeps one commit it never shipped.
            kill(primary.processIdentifier, SIGKILL)
            _ = await waitForExit(primary)
            let unshipped = try commit(primaryStore, count: 1, marker: "never shipped")
            try primaryStore.close()

            let (shipper, report) = try await follower.promote(shipping: leaseOptions(host: "standby"))
            #expect(report.term == 2 && report.previousTerm == 1 && !report.forced)
            #expect(report.lastEpoch == shipped.last)
            #expect(report.markerEpoch == shipped.last! + 1, "the term's first epoch marks its start")
            let promoted = try Journal.open(at: standbyURL)
            let continued = try commit(promoted, count: 3, marker: "promoted")
            #expect(continued.first == shipped.last! + 2)
            try await shipper.shipOnce()
            let generations = try await storedGenerations(location, gateway: gateway)
            #expect(generations.last?.term == 2 && generations.last?.lastEpoch == continued.last)
            let restored = directory.appendingPathComponent("restored")
            let restore = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: restored)
            #expect(restore.epoch.epoch == continued.last)
            let epochs = try StoreInspector(at: restored).log().map(\.epoch)
            #expect(epochs == Array(epochs.first!...continued.last!), "one gapless sequence across the terms")
            #expect(try JournalReader(at: restored).state().entries == promoted.state().entries)
            // The restored history shows where term 1's epochs end and term 2's begin.
            let marker = try #require(try StoreInspector(at: restored).log().first { $0.epoch == report.markerEpoch })
            #expect(marker.eventMarkerKind == .replicaTermBegan && marker.entryCount == 0)
            #expect(marker.metadata[EventMarkerKey.term] == "2" && marker.metadata[EventMarkerKey.previousTerm] == "1")
            #expect(marker.metadata[EventMarkerKey.continuesFrom] == String(shipped.last!))
            #expect(marker.metadata[EventMarkerKey.takenOver] == "0")

            // The old primary comes back on its host: it refuses, naming what it would replace.
            let comeback = try await runTool(
                [
                    "replicate", primaryURL.path, "--to", "s3://\(bucket)/promoted", "--interval", "0.2",
                    "--lease-seconds", "2",
                ],
                environment: gateway.childEnvironment)
            #expect(comeback.status == 76, "\(comeback.error)")
            #expect(unshipped.last == shipped.last! + 1)
            try promoted.close()
        }

        @Test func aStandbyRunningFollowWithFailoverTakesOverWhenThePrimaryIsKilled() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "standby")
            let directory = try temporaryDirectory("failover")
            defer { try? FileManager.default.removeItem(at: directory) }
            let primaryURL = directory.appendingPathComponent("primary")
            let primaryStore = try Journal.open(at: primaryURL)
            let shipped = try commit(primaryStore, count: 6)
            try primaryStore.close()
            let replica = "s3://\(bucket)/standby"
            let primary = try startTool(
                [
                    "replicate", primaryURL.path, "--to", replica, "--interval", "0.2", "--lease-seconds", "2",
                    "--idle-lease-seconds", "2",
                ],
                environment: gateway.childEnvironment, logs: directory, name: "primary")
            try await eventually("the primary shipped") {
                try await storedGenerations(location, gateway: gateway).last?.lastEpoch == shipped.last
            }
            let standbyURL = directory.appendingPathComponent("standby")
            let standby = try startTool(
                ["follow", replica, "--into", standbyURL.path, "--failover", "--lease-seconds", "2"],
                environment: gateway.childEnvironment, logs: directory, name: "standby")
            try await Task.sleep(for: .seconds(3))
            // While the primary lives, the standby only follows.
            #expect(try await storedGenerations(location, gateway: gateway).allSatisfy { $0.term == 1 })
            kill(primary.processIdentifier, SIGKILL)
            _ = await waitForExit(primary)
            try await eventually(timeout: .seconds(600), "the standby started term 2") {
                try await storedGenerations(location, gateway: gateway).last?.term == 2
            }
            kill(standby.processIdentifier, SIGTERM)
            #expect(await waitForExit(standby) == 0)
            let log = try String(contentsOf: directory.appendingPathComponent("standby.err"), encoding: .utf8)
            #expect(log.contains("is the primary of"), "\(log)")
            let newest = try #require(try await storedGenerations(location, gateway: gateway).last)
            #expect(newest.lastEpoch == shipped.last! + 1, "the term began with its marker epoch")
            #expect(newest.terms?.map(\.term) == [1, 2])
        }

        @Test func aStandbyStoppedWhileThePrimaryHoldsTheLeaseExitsZeroWithoutAnError() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let directory = try temporaryDirectory("standby-stop")
            defer { try? FileManager.default.removeItem(at: directory) }
            let primaryURL = directory.appendingPathComponent("primary")
            let primaryStore = try Journal.open(at: primaryURL)
            try commit(primaryStore, count: 3)
            try primaryStore.close()
            let replica = "s3://\(bucket)/standing-by"
            let primary = try startTool(
                ["replicate", primaryURL.path, "--to", replica, "--interval", "0.2", "--lease-seconds", "5"],
                environment: gateway.childEnvironment, logs: directory, name: "primary")
            defer { kill(primary.processIdentifier, SIGKILL) }
            let location = S3Location(bucket: bucket, prefix: "standing-by")
            try await eventually("the primary holds the lease and shipped") {
                try await !storedGenerations(location, gateway: gateway).isEmpty
            }
            let standby = try startTool(
                ["follow", replica, "--into", directory.appendingPathComponent("standby").path, "--failover"],
                environment: gateway.childEnvironment, logs: directory, name: "standby")
            let log = directory.appendingPathComponent("standby.err")
            try await eventually(timeout: .seconds(600), "the standby waits for the primary's lease") {
                ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("holds the lease")
            }
            kill(standby.processIdentifier, SIGTERM)
            #expect(await waitForExit(standby) == 0)
            let said = try String(contentsOf: log, encoding: .utf8)
            #expect(said.contains("stopped while standing by") && !said.contains("Cancelled"), "\(said)")
        }

        @Test func aStoreRestoredFromTheReplicaAndCompactedSinceTakesOverWhenThePrimaryDied() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "restored-primary")
            let directory = try temporaryDirectory("restored-primary")
            defer { try? FileManager.default.removeItem(at: directory) }
            let primaryURL = directory.appendingPathComponent("primary")
            let primaryStore = try Journal.open(at: primaryURL)
            try commit(primaryStore, count: 6)
            try primaryStore.close()
            let primary = try startTool(
                [
                    "replicate", primaryURL.path, "--to", "s3://\(bucket)/restored-primary", "--interval", "0.2",
                    "--lease-seconds", "2",
                ],
                environment: gateway.childEnvironment, logs: directory, name: "primary")
            try await eventually("the primary shipped") {
                try await !storedGenerations(location, gateway: gateway).isEmpty
            }
            kill(primary.processIdentifier, SIGKILL)
            _ = await waitForExit(primary)
            // Another host restores the replica, and its app writes and compacts before it ships.
            let restoredURL = directory.appendingPathComponent("restored")
            let restored = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: restoredURL)
            let app = try Journal.open(at: restoredURL)
            try commit(app, count: 4, marker: "after the restore")
            _ = try app.compact()
            let last = try commit(app, count: 2, marker: "after the compaction")
            #expect(try app.history().first!.epoch > restored.epoch.epoch)
            let report = try await ReplicationShipper(
                store: restoredURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(host: "restoring host")
            ).shipOnce()
            #expect(report.lastEpoch == last.last)
            #expect(try await storedGenerations(location, gateway: gateway).last?.term == 2)
            try app.close()
        }
    }
}
