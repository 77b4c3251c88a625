import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A generation an attacker with write access to the bucket wrote: the shipper's own, with one
/// field made hostile.
enum HostileGeneration: String, CaseIterable, Sendable, CustomStringConvertible {
    case fileNameClimbingOut = "a file named ../../x.sh"
    case fileNameOfANeighbouringStore = "a file named ../victim-store/MANIFEST"
    case absoluteFileName = "an absolute file name"
    case checkpointNamedOutsideWithAMissingObject = "a checkpoint named ../../precious.txt whose object is missing"
    case negativeStart = "an object starting at -5"
    case widestRange = "an object from -2^63 to 2^63-1"
    case largestBaseEpoch = "a base epoch of 2^64-1"
    case sparseStart = "an object starting at 2^31 in a file of 2^31 bytes"
    case farSparseStart = "an object starting at 2^40"
    case hugeLength = "a file of 2^62 bytes"
    case objectKeyOutsideTheLayout = "an object key outside the replica's layout"
    case unknownKind = "a file of a kind stores do not have"
    case largestSequence = "a file sequence of 2^64-1"
    case anotherStoreID = "the store id of another store"
    case anotherGenerationNumber = "a generation number other than its name's"
    case largestLastEpoch = "a last epoch of 2^64-1"
    case overlappingObjects = "two objects covering the same bytes"
    case controlCharactersInAName = "terminal escape sequences in a file name"
    case noFileButALastEpoch = "no file at all, still naming its last epoch"

    var description: String { rawValue }

    func apply(to generation: inout ReplicaGeneration) {
        let last = generation.files.count - 1
        switch self {
        case .fileNameClimbingOut: generation.files[last].name = "../../x.sh"
        case .fileNameOfANeighbouringStore: generation.files[last].name = "../victim-store/MANIFEST"
        case .absoluteFileName: generation.files[last].name = "/tmp/statejournal-absolute-\(getpid())"
        case .checkpointNamedOutsideWithAMissingObject:
            generation.files.insert(
                ReplicaGeneration.File(
                    name: "../../precious.txt", kind: "checkpoint", sequence: 0, baseEpoch: 1, lastEpoch: 1,
                    timestampMilliseconds: 0, sealed: true, length: 10,
                    objects: [
                        ReplicaGeneration.Object(
                            key: "checkpoints/missing", start: 0, end: 10, sha256: String(repeating: "0", count: 64),
                            level: 0)
                    ]), at: 0)
        case .negativeStart: generation.files[last].objects[0].start = -5
        case .widestRange:
            generation.files[last].objects[0].start = .min
            generation.files[last].objects[0].end = .max
        case .largestBaseEpoch: generation.files[last].baseEpoch = .max
        case .sparseStart, .farSparseStart:
            let start: Int64 = self == .sparseStart ? 1 << 31 : 1 << 40
            let index = generation.files[last].objects.count - 1
            let size = generation.files[last].objects[index].end - generation.files[last].objects[index].start
            generation.files[last].objects[index].start = start
            generation.files[last].objects[index].end = start + size
            generation.files[last].length = start + size
        case .hugeLength: generation.files[last].length = 1 << 62
        case .objectKeyOutsideTheLayout: generation.files[last].objects[0].key = "../../other-prefix/x"
        case .unknownKind: generation.files[last].kind = "script"
        case .largestSequence: generation.files[last].sequence = .max
        case .anotherStoreID: generation.storeID = String(repeating: "ab", count: 16)
        case .anotherGenerationNumber: generation.generation += 7
        case .largestLastEpoch: generation.lastEpoch = .max
        case .overlappingObjects:
            let object = generation.files[last].objects[0]
            generation.files[last].objects.insert(object, at: 0)
        case .controlCharactersInAName: generation.files[last].name = "\u{1B}]0;owned\u{07}\u{1B}[2J"
        case .noFileButALastEpoch: generation.files = []
        }
    }
}

extension GatewayTests {
    /// Attacks on a restore by someone who can write the bucket, each named for the rule it tries
    /// to break. Each asserts that nothing outside the target changed, that the exit is clear and
    /// non-zero where the attack cannot be passed over, and that memory stays bounded. Time is not
    /// held to a bound (the tests run on loaded machines): a refusal is shown by its exit status and
    /// message, which name the rule that stopped the restore, and `measuredTool` kills a run that
    /// hangs.
    @Suite struct UntrustedBucketTests {
        /// Peak memory a restore of these small replicas may use, whatever the bucket holds: well
        /// under any of the oversized bodies below.
        static let peakLimitKiB = 96 << 10

        @Test(arguments: HostileGeneration.allCases, [false, true])
        func aHostileGenerationIsRefusedWithoutWritingOutsideTheTargetOrTrapping(
            _ attack: HostileGeneration, inline: Bool
        ) async throws {
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "hostile", passes: [8], inline: inline)
            defer { shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            var generation = try await shipped.generation(shipped.newestGeneration)
            attack.apply(to: &generation)
            try await shipped.forge(generation, as: shipped.newestGeneration)
            let before = sandbox.outsideTarget()

            let run = try shipped.restoreWithTool(into: sandbox.target)

            #expect(run.status == 65, "\(attack): exit \(run.status): \(run.error)")
            #expect(run.error.contains("not a valid generation"), "\(attack): \(run.error)")
            #expect(!run.error.contains("\u{1B}"), "\(attack): a raw escape reached the terminal")
            #expect(sandbox.outsideTarget() == before, "\(attack) changed something outside the target")
            #expect(!FileManager.default.fileExists(atPath: "/tmp/statejournal-absolute-\(getpid())"))
            let left = (try? FileManager.default.contentsOfDirectory(atPath: sandbox.target.path)) ?? []
            #expect(left.isEmpty, "\(attack): the failed restore left \(left)")
            #expect(run.peakKiB < Self.peakLimitKiB, "\(attack): peak \(run.peakKiB) KiB")
        }

        @Test func aDamagedNewestGenerationFallsBackToTheNewestIntactOneAndSaysSo() async throws {
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "fallback", passes: [5, 5, 5])
            defer { shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let newest = shipped.newestGeneration
            var forged = try await shipped.generation(newest)
            HostileGeneration.fileNameClimbingOut.apply(to: &forged)
            try await shipped.forge(forged, as: newest)
            try await shipped.putRaw(ReplicaLayout.generation(newest + 1), Array("not a generation".utf8))

            let restorer = ReplicaRestorer(from: shipped.location, configuration: gateway.configuration())
            let report = try await restorer.restore(into: sandbox.target)

            #expect(report.generation == newest - 1)
            #expect(report.epoch.epoch == shipped.lastEpochs[newest - 1])
            #expect(try JournalReader(at: sandbox.target).state().entries == shipped.states[newest - 1])
            #expect(report.damage.count == 2)
            #expect(report.damage.allSatisfy { "\($0)".contains("lost") })
            let run = try shipped.restoreWithTool(into: sandbox.root.appendingPathComponent("work/by-tool"))
            #expect(run.status == 1, "\(run.error)")
            #expect(run.error.contains("Restored the latest consistent epoch before it"), "\(run.error)")
        }

        /// Each forged generation above the newest intact one costs a request (and, against a slow
        /// endpoint, up to the minimum rate's window): a restore passes over a bounded number of them,
        /// then refuses the replica, instead of spending time in proportion to what a writer added.
        @Test func aFloodOfForgedGenerationsIsPassedOverOnlyUpToALimit() async throws {
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "flood", passes: [5, 5])
            defer { shipped.remove() }
            let newest = shipped.newestGeneration
            let limit = UInt64(ReplicaLimits.maximumGenerationsPassedOver)
            // As many as the limit allows: the restore still reaches the newest intact generation.
            for number in (newest + 1)...(newest + limit) {
                try await shipped.putRaw(ReplicaLayout.generation(number), Array("forged \(number)".utf8))
            }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let restorer = ReplicaRestorer(from: shipped.location, configuration: gateway.configuration())
            let report = try await restorer.restore(into: sandbox.target)
            #expect(report.generation == newest)
            #expect(report.damage.count == Int(limit))

            // One more: refused, naming the limit, before any older generation is read.
            try await shipped.putRaw(ReplicaLayout.generation(newest + limit + 1), Array("forged".utf8))
            let again = try Sandbox()
            defer { again.remove() }
            let before = again.outsideTarget()
            let error = await #expect(throws: ReplicationError.self) {
                try await restorer.restore(into: again.target)
            }
            #expect(error?.code == .damagedObject, "\(String(describing: error))")
            #expect(error?.message.contains("\(limit) generations") == true, "\(String(describing: error))")
            #expect(again.outsideTarget() == before)
            #expect(!FileManager.default.fileExists(atPath: again.target.appendingPathComponent("MANIFEST").path))
        }

        /// A `replica.json` of a later layout version was written by a later release, whose objects
        /// this one may misread: a restore and a shipper refuse it, naming the version.
        @Test func aReplicaOfALaterLayoutVersionIsRefusedNamingTheVersion() async throws {
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "later", passes: [3])
            defer { shipped.remove() }
            let storeID = try await shipped.generation(shipped.newestGeneration).storeID
            for version in ["4", "99", "0", "-1"] {
                let identity = #"{"format":"statejournal-replica","version":\#(version),"storeID":"\#(storeID)"}"#
                try await shipped.put(ReplicaLayout.identity, payload: Array(identity.utf8))
                let sandbox = try Sandbox()
                defer { sandbox.remove() }
                let error = await #expect(throws: ReplicationError.self, "version \(version)") {
                    try await ReplicaRestorer(from: shipped.location, configuration: gateway.configuration())
                        .restore(into: sandbox.target)
                }
                #expect(error?.message.contains("layout version \(version)") == true, "\(String(describing: error))")
                #expect(!FileManager.default.fileExists(atPath: sandbox.target.appendingPathComponent("MANIFEST").path))
            }
        }

        /// A copy of the store (restored elsewhere and continued keeps its store id) shipped to
        /// another prefix under the same key is another replica, with an id of its own that its
        /// objects authenticate: its generations and objects moved into this replica are refused.
        @Test func objectsOfAnotherReplicaOfTheSameStoreUnderTheSameKeyAreRefused() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let material = Array(repeating: UInt8(9), count: 32)
            let keyring = ReplicationKeyring(current: try ReplicationKey(id: "k1", bytes: material))
            let first = try await ShippedReplica.ship(
                gateway, bucket: bucket, prefix: "first", keyring: keyring, passes: [4, 4])
            defer { first.remove() }
            // The same store, continued, shipped to a second prefix until its newest generation has
            // the number the first replica would write next.
            var second = ShippedReplica(
                gateway: gateway, location: S3Location(bucket: bucket, prefix: "second"), keyring: keyring,
                directory: first.directory, store: first.store)
            let shipper = ReplicationShipper(
                store: first.store, to: second.location, configuration: gateway.configuration(),
                options: ReplicationOptions(keyring: keyring))
            for _ in 0...first.newestGeneration {
                let journal = try Journal.open(at: first.store)
                _ = try commit(journal, count: 3, marker: "fork")
                try journal.close()
                let report = try await shipper.shipOnce()
                second.states[try #require(report.generation)] = try JournalReader(at: first.store).state().entries
            }
            let moved = first.newestGeneration + 1
            #expect(second.newestGeneration == moved)
            let firstIdentity = try #require(try await first.replica.identity())
            let secondIdentity = try #require(try await second.replica.identity())
            #expect(firstIdentity.storeID == secondIdentity.storeID)
            #expect(firstIdentity.replicaID != secondIdentity.replicaID)
            for object in try await second.replica.list() where object.key != ReplicaLayout.identity {
                guard !object.key.hasPrefix(ReplicaLayout.generationsFolder) else { continue }
                try await first.copy(object.key, from: second)
            }
            try await first.copy(ReplicaLayout.generation(moved), from: second)

            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let report = try await ReplicaRestorer(
                from: first.location, configuration: gateway.configuration(), keyring: keyring
            ).restore(into: sandbox.target)
            #expect(report.generation == first.newestGeneration)
            #expect(try JournalReader(at: sandbox.target).state().entries == first.states[first.newestGeneration])
            #expect(report.damage.first.map { "\($0)".contains("could not be decrypted") } == true, "\(report.damage)")
        }

        @Test func underAKeyAPlaintextGenerationAndPlaintextObjectsAreRefused() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let material = Array(repeating: UInt8(7), count: 32)
            let key = try ReplicationKey(id: "k1", bytes: material)
            let keyring = ReplicationKeyring(current: key)
            let victim = try await ShippedReplica.ship(
                gateway, bucket: bucket, prefix: "victim", keyring: keyring, passes: [4, 4])
            defer { victim.remove() }
            let attacker = try await ShippedReplica.ship(gateway, bucket: bucket, prefix: "attacker", passes: [9])
            defer { attacker.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            // The attacker's own store, unencrypted, takes the victim's newest generation number,
            // its objects copied beside it, its store id made the victim's.
            let victimID = try await victim.generation(victim.newestGeneration).storeID
            var planted = try await attacker.generation(attacker.newestGeneration)
            planted.storeID = victimID
            planted.generation = victim.newestGeneration
            for object in planted.files.flatMap(\.objects) { try await victim.copy(object.key, from: attacker) }
            try await victim.forge(planted, as: victim.newestGeneration)
            let file = try keyFile(for: key, bytes: material, in: sandbox.root)
            let before = sandbox.outsideTarget()

            let report = try await ReplicaRestorer(
                from: victim.location, configuration: gateway.configuration(), keyring: keyring
            ).restore(into: sandbox.target)
            #expect(report.generation == victim.newestGeneration - 1)
            #expect(try JournalReader(at: sandbox.target).state().entries == victim.states[report.generation])
            #expect(report.damage.first?.reason.contains("not encrypted") == true, "\(report.damage)")

            // With every generation planted, nothing is restored, and the tool says why.
            var older = planted
            older.generation = victim.newestGeneration - 1
            try await victim.forge(older, as: victim.newestGeneration - 1)
            let run = try victim.restoreWithTool(
                into: sandbox.root.appendingPathComponent("work/by-tool"), keyFile: file)
            #expect(run.status == 65, "\(run.error)")
            #expect(run.error.contains("not encrypted"), "\(run.error)")
            #expect(sandbox.outsideTarget() == before)
        }

        @Test func aGenerationOfAnotherStoreUnderTheSameKeyIsNotRestoredInPlaceOfThisOne() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let keyring = ReplicationKeyring(
                current: try ReplicationKey(id: "shared", bytes: Array(repeating: 9, count: 32)))
            let victim = try await ShippedReplica.ship(
                gateway, bucket: bucket, prefix: "victim", keyring: keyring, passes: [3, 3])
            defer { victim.remove() }
            let other = try await ShippedReplica.ship(
                gateway, bucket: bucket, prefix: "other", keyring: keyring, passes: [7, 2])
            defer { other.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            // Sealed objects copied byte for byte: the attacker cannot read them, only move them.
            // The other store's generation 2 replaces this one's under the same name (its seal
            // holds; the store id inside it does not match), and its generation 1 becomes a newer
            // generation 3 here (its seal names another object, so it does not open).
            for number in [1, 2] as [UInt64] {
                for object in try await other.generation(number).files.flatMap(\.objects) {
                    try await victim.copy(object.key, from: other)
                }
            }
            try await victim.copy(ReplicaLayout.generation(2), from: other)
            try await victim.copy(ReplicaLayout.generation(1), from: other, as: ReplicaLayout.generation(3))

            let report = try await ReplicaRestorer(
                from: victim.location, configuration: gateway.configuration(), keyring: keyring
            ).restore(into: sandbox.target)

            #expect(report.generation == 1)
            #expect(try JournalReader(at: sandbox.target).state().entries == victim.states[1])
            #expect(report.damage.count == 2, "\(report.damage)")
            #expect(report.damage.contains { $0.reason.contains("header names the store") }, "\(report.damage)")
        }

        @Test func anObjectLargerThanItsGenerationSaysIsNeverReadPastTheDeclaredSize() async throws {
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "bomb", passes: [6])
            defer { shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let generation = try await shipped.generation(shipped.newestGeneration)
            let object = try #require(generation.files.last?.objects.first)
            // 160 MiB where the generation declares a few hundred bytes, referenced once.
            try await shipped.putRaw(object.key, Array(repeating: 0x41, count: 160 << 20))

            let run = try shipped.restoreWithTool(into: sandbox.target)

            #expect(run.status == 65, "\(run.error)")
            #expect(run.error.contains("larger than"), "\(run.error)")
            #expect(run.peakKiB < Self.peakLimitKiB, "peak \(run.peakKiB) KiB")
        }

        @Test func aGenerationThatCarriesBytesIsNeverDownloadedPastWhatAGenerationMayBe() async throws {
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "carrier", passes: [6, 4], inline: true)
            defer { shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            // The newest generation names bytes the first carries; the first grows by 160 MiB.
            let newest = try await shipped.generation(shipped.newestGeneration)
            let first = ReplicaLayout.generation(1)
            let namesTheFirst = newest.files.flatMap(\.objects).contains { $0.key == first }
            #expect(namesTheFirst)
            let payload = try #require(
                try await shipped.boundReplica().get(first, maximumPayload: ReplicaLimits.maximumGenerationBytes))
            try await shipped.put(
                first, payload: payload + [UInt8](repeating: 0x41, count: 160 << 20), storeID: newest.storeID)

            let run = try shipped.restoreWithTool(into: sandbox.target)

            #expect(run.status != 0, "\(run.error)")
            #expect(run.error.contains("larger than"), "\(run.error)")
            #expect(run.peakKiB < Self.peakLimitKiB, "peak \(run.peakKiB) KiB")
        }

        @Test func aLargeObjectAnUnencryptedGenerationDeclaresIsWrittenAsItComesNotHeld() async throws {
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "declared-large", passes: [6])
            defer { shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            // The live segment's only piece, grown by 150 MB of zeros, declared and hashed as such:
            // everything checks, so only holding it whole would cost memory (about 350 MiB did).
            var generation = try await shipped.generation(shipped.newestGeneration)
            let last = generation.files.count - 1
            let real = try #require(
                try await shipped.boundReplica().get(generation.files[last].objects[0].key, maximumPayload: 1 << 20))
            let grown = real + [UInt8](repeating: 0, count: 150 << 20)
            let hash = ReplicaLayout.sha256Hex(grown)
            let key = ReplicaLayout.piece(
                sequence: generation.files[last].sequence, start: 0, end: Int64(grown.count), sha256: hash)
            try await shipped.putRaw(key, try ObjectEnvelope.seal(grown, name: key, keyring: nil))
            generation.files[last].objects = [
                ReplicaGeneration.Object(key: key, start: 0, end: Int64(grown.count), sha256: hash, level: 0)
            ]
            generation.files[last].length = Int64(grown.count)
            try await shipped.forge(generation, as: shipped.newestGeneration)
            let before = sandbox.outsideTarget()

            let run = try shipped.restoreWithTool(into: sandbox.target)

            #expect([0, 1, 65].contains(run.status), "\(run.error)")
            // 137 MiB measured with four pieces of 8 MiB fetched at once, each held twice for a
            // moment as it arrives (89 MiB one piece at a time, 351 MiB when the object was held whole).
            #expect(run.peakKiB < 192 << 10, "peak \(run.peakKiB) KiB for a 150 MB object")
            #expect(sandbox.outsideTarget() == before)
        }

        /// An encrypted replica whose live segment's only piece is grown by `extra` bytes of zeros,
        /// sealed by the key (`transform` applied to the sealed bytes) and named by a generation
        /// sealed by the key: the restore of an encrypted object of that size, as the shipper would
        /// write it.
        static func encryptedReplicaWithALargeObject(
            _ gateway: Gateway, prefix: String, extra: Int, version1: Bool = false,
            transform: (inout [UInt8]) -> Void = { _ in }
        ) async throws -> (ShippedReplica, URL) {
            let material = Array(repeating: UInt8(9), count: 32)
            let key = try ReplicationKey(id: "large", bytes: material)
            let keyring = ReplicationKeyring(current: key)
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: prefix, keyring: keyring, passes: [6])
            var generation = try await shipped.generation(shipped.newestGeneration)
            let last = generation.files.count - 1
            let real = try #require(
                try await shipped.boundReplica().get(generation.files[last].objects[0].key, maximumPayload: 1 << 20))
            var grown = real
            grown += [UInt8](repeating: 0, count: extra)
            let hash = ReplicaLayout.sha256Hex(grown)
            let name = ReplicaLayout.piece(
                sequence: generation.files[last].sequence, start: 0, end: Int64(grown.count), sha256: hash)
            var sealed =
                version1
                ? try ObjectEnvelope.sealVersion1(grown, name: name, key: key)
                : try ObjectEnvelope.seal(
                    grown, name: name, keyring: keyring, storeID: generation.storeID,
                    replicaID: try await shipped.boundReplica().replicaID)
            transform(&sealed)
            try await shipped.putRaw(name, sealed)
            generation.files[last].objects = [
                ReplicaGeneration.Object(key: name, start: 0, end: Int64(grown.count), sha256: hash, level: 0)
            ]
            generation.files[last].length = Int64(grown.count)
            try await shipped.forge(generation, as: shipped.newestGeneration, keyring: keyring)
            return (shipped, try keyFile(for: key, bytes: material, in: shipped.directory))
        }

        @Test func anEncryptedObjectOf300MBIsOpenedChunkByChunkInBoundedMemory() async throws {
            let gateway = try Gateway.required()
            let (shipped, key) = try await Self.encryptedReplicaWithALargeObject(
                gateway, prefix: "encrypted-large", extra: 300_000_000)
            defer { shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let before = sandbox.outsideTarget()

            let run = try shipped.restoreWithTool(into: sandbox.target, keyFile: key)

            // The segment's zeros past its last commit are a torn tail to the store: any clean exit.
            #expect([0, 1, 65].contains(run.status), "\(run.error)")
            #expect(!run.error.contains("decrypted") && !run.error.contains("damaged"), "\(run.error)")
            // 155 MiB measured with four groups of chunks (8 MiB each) fetched at once, each held
            // twice for a moment as it arrives (87 MiB one group at a time); 1.44 GiB when the same
            // object is sealed as one (envelope version 1).
            #expect(run.peakKiB < 192 << 10, "peak \(run.peakKiB) KiB for a 300 MB encrypted object")
            #expect(sandbox.outsideTarget() == before)
            // The gateway's memory store is small: give the 300 MB back.
            for object in try await shipped.client.list(bucket: shipped.location.bucket, prefix: "") {
                try await shipped.client.delete(bucket: shipped.location.bucket, key: object.key)
            }
        }

        @Test func chunksOfALargeEncryptedObjectSwappedInTheBucketAreRefusedAsTheyCome() async throws {
            let gateway = try Gateway.required()
            // 20 MiB: three ranged reads of seven chunks; chunks 9 and 10 (the second read) swapped.
            let (shipped, key) = try await Self.encryptedReplicaWithALargeObject(
                gateway, prefix: "encrypted-swapped", extra: 20 << 20
            ) { sealed in
                let header = SealedChunks.fixedHeaderBytes + Int(sealed[6])
                let size = ReplicaLimits.sealedChunkBytes + 16
                let nine = Array(sealed[(header + 9 * size)..<(header + 10 * size)])
                let ten = Array(sealed[(header + 10 * size)..<(header + 11 * size)])
                sealed.replaceSubrange((header + 9 * size)..<(header + 11 * size), with: ten + nine)
            }
            defer { shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let before = sandbox.outsideTarget()

            let run = try shipped.restoreWithTool(into: sandbox.target, keyFile: key)

            #expect(run.status == 65, "\(run.error)")
            #expect(run.error.contains("chunk 9 of 21"), "\(run.error)")
            #expect(sandbox.outsideTarget() == before)
        }

        @Test func objectsLargerThanAPieceAreWrittenAsTheyComeAndRestoreExactly() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "large-objects")
            let directory = try temporaryDirectory("large-objects")
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = directory.appendingPathComponent("store")
            let journal = try Journal.open(
                at: store, options: JournalOptions(segmentSizeLimit: 64 << 20, compaction: .manual))
            var random = SystemRandomNumberGenerator()
            for round in 0..<3 {
                let epoch = try journal.beginEpoch()
                for item in 0..<5 {
                    let bytes = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
                    try epoch.put(RestorationPath("Main", "Blob-\(round)-\(item)"), bytes)
                }
                try epoch.commit()
            }
            try journal.checkpoint()
            try commit(journal, count: 2)
            let shipped = try await ReplicationShipper(
                store: store, to: location, configuration: gateway.configuration()
            ).shipOnce()
            let objects = try await gateway.client().list(bucket: location.bucket, prefix: location.prefix)
            #expect(objects.contains { $0.size > Int64(ReplicaLimits.streamingPieceBytes) }, "\(objects)")

            let restored = directory.appendingPathComponent("restored")
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: restored)
            #expect(report.damage.isEmpty)
            #expect(report.epoch.epoch == shipped.lastEpoch)
            #expect(try JournalReader(at: restored).state().entries == journal.state().entries)
            try journal.close()
        }

        @Test func aForgedCheckpointIsRefusedWithItsFileAndReasonNamed() async throws {
            // Bytes the bucket's writer chose, with a matching SHA-256 in a forged generation: the
            // restore refuses them, and says which file failed and why, as it does for a segment.
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "forged-checkpoint")
            let directory = try temporaryDirectory("forged-checkpoint")
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: store, options: JournalOptions(compaction: .manual))
            try commit(journal, count: 4)
            try journal.checkpoint()
            try commit(journal, count: 2)
            try journal.close()
            let report = try await ReplicationShipper(
                store: store, to: location, configuration: gateway.configuration()
            ).shipOnce()
            let shipped = ShippedReplica(
                gateway: gateway, location: location, keyring: nil, directory: directory, store: store)
            let number = try #require(report.generation)
            var generation = try await shipped.generation(number)
            let index = try #require(generation.files.lastIndex { $0.isCheckpoint })
            let file = generation.files[index]
            var bytes = try #require(
                try await shipped.boundReplica().get(file.objects[0].key, maximumPayload: 1 << 20))
            bytes[bytes.count / 2] ^= 0x5A
            let hash = ReplicaLayout.sha256Hex(bytes)
            let key = ReplicaLayout.checkpoint(epoch: file.lastEpoch, sequence: file.sequence, sha256: hash)
            try await shipped.putRaw(key, try ObjectEnvelope.seal(bytes, name: key, keyring: nil))
            generation.files[index].objects = [
                ReplicaGeneration.Object(key: key, start: 0, end: Int64(bytes.count), sha256: hash, level: 0)
            ]
            try await shipped.forge(generation, as: number)
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let before = sandbox.outsideTarget()

            let run = try shipped.restoreWithTool(into: sandbox.target)

            #expect(run.status == 65, "\(run.error)")
            #expect(run.error.contains(file.name), "\(run.error)")
            #expect(!run.error.contains("verify clean: damaged."), "\(run.error)")
            #expect(sandbox.outsideTarget() == before)
        }

        @Test func aGenerationDocumentBeyondItsLimitIsPassedOverWithoutBeingRead() async throws {
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "big-generation", passes: [4, 4])
            defer { shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let huge = Array(repeating: UInt8(ascii: " "), count: ReplicaLimits.maximumGenerationBytes + (8 << 20))
            try await shipped.put(ReplicaLayout.generation(shipped.newestGeneration + 1), payload: huge)

            let run = try shipped.restoreWithTool(into: sandbox.target)

            #expect(run.status == 1, "\(run.error)")
            #expect(run.error.contains("larger than"), "\(run.error)")
            #expect(run.peakKiB < Self.peakLimitKiB, "peak \(run.peakKiB) KiB")
            #expect(try JournalReader(at: sandbox.target).state().entries == shipped.states[shipped.newestGeneration])
        }

        @Test func aTargetThatHoldsAnythingOrIsNotADirectoryIsRefusedUntouched() async throws {
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "targets", passes: [3])
            defer { shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            // A symlink planted in the target, a store already there, a file where the target goes.
            try FileManager.default.createDirectory(at: sandbox.target, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: sandbox.target.appendingPathComponent("MANIFEST").path,
                withDestinationPath: sandbox.root.appendingPathComponent("victim-store/MANIFEST").path)
            let asFile = sandbox.root.appendingPathComponent("work/plain-file")
            try Data("a file".utf8).write(to: asFile)
            // A symlink to an empty directory, and a target whose parent does not exist.
            let empty = sandbox.root.appendingPathComponent("work/empty")
            try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
            let link = sandbox.root.appendingPathComponent("work/link")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: empty.path)
            let orphan = sandbox.root.appendingPathComponent("work/missing-parent/target")
            let before = sandbox.outsideTarget()

            for target in [sandbox.target, asFile, sandbox.root.appendingPathComponent("victim-store"), link, orphan] {
                let run = try shipped.restoreWithTool(into: target)
                #expect(run.status == 73, "\(target.path): \(run.error)")
                #expect(
                    run.error.contains("not empty") || run.error.contains("not a directory")
                        || run.error.contains("does not exist"), "\(run.error)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).isEmpty)
            #expect(sandbox.outsideTarget() == before)
            #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.target.path) == ["MANIFEST"])
        }

        @Test func controlCharactersFromTheBucketNeverReachTheTerminal() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "escapes")
            let client = gateway.client()
            // A prefix holding something else, under a key made of escape sequences.
            try await client.put(
                bucket: bucket, key: "escapes/\u{1B}]0;owned\u{07}\u{1B}[2J\u{202E}txt.exe", body: Array("x".utf8))
            let sandbox = try Sandbox()
            defer { sandbox.remove() }

            let run = try measuredTool(
                ["restore", "s3://\(bucket)/\(location.prefix)", "--into", sandbox.target.path],
                environment: gateway.childEnvironment)

            #expect(run.status == 65, "\(run.error)")
            #expect(run.error.contains("not a StateJournal replica"), "\(run.error)")
            #expect(
                !run.error.contains("\u{1B}") && !run.error.contains("\u{07}") && !run.error.contains("\u{202E}"),
                "\(run.error.debugDescription)")
        }

        @Test func aShipperPassesOverAForgedNewestGenerationAndShipsAboveIt() async throws {
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "forged-for-shipper", passes: [4])
            defer { shipped.remove() }
            var forged = try await shipped.generation(shipped.newestGeneration)
            HostileGeneration.fileNameClimbingOut.apply(to: &forged)
            forged.generation += 1
            try await shipped.forge(forged, as: forged.generation)
            try await shipped.putRaw(ReplicaLayout.generation(forged.generation + 1), Array("junk".utf8))

            // A shipper started afresh, as after a restart, reads the bucket as another shipper left it.
            let journal = try Journal.open(at: shipped.store)
            try commit(journal, count: 3)
            let shipper = ReplicationShipper(
                store: shipped.store, to: shipped.location, configuration: gateway.configuration())
            let report = try await shipper.shipOnce()
            #expect(report.generation == forged.generation + 2)
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let restored = try await ReplicaRestorer(from: shipped.location, configuration: gateway.configuration())
                .restore(into: sandbox.target)
            #expect(restored.damage.isEmpty)
            #expect(try JournalReader(at: sandbox.target).state().entries == journal.state().entries)
            try journal.close()
        }

        @Test func aShipperReadsAFloodOfForgedGenerationsOnlyUpToTheLimitAndShipsAboveThem() async throws {
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "flood-for-shipper", passes: [4])
            defer { shipped.remove() }
            let flood = ReplicaLimits.maximumGenerationsPassedOver + 8
            for offset in 1...flood {
                try await shipped.putRaw(
                    ReplicaLayout.generation(shipped.newestGeneration + UInt64(offset)), Array("junk \(offset)".utf8))
            }

            let journal = try Journal.open(at: shipped.store)
            try commit(journal, count: 3)
            let logs = CapturedLogs()
            let shipper = ReplicationShipper(
                store: shipped.store, to: shipped.location, configuration: gateway.configuration(),
                options: ReplicationOptions(logger: logs.logger))
            let report = try await shipper.shipOnce()
            #expect(report.generation == shipped.newestGeneration + UInt64(flood) + 1)
            // Each generation passed over is fetched once and logged; beyond the limit, none more.
            let passedOver = logs.entries(.warning, containing: "is passed over").count
            #expect(passedOver == ReplicaLimits.maximumGenerationsPassedOver + 1, "\(passedOver) passed over")
            #expect(!logs.entries(.error, containing: "cannot be used").isEmpty)
            // Retention reads at most the limit of generations it does not know yet, and deletes
            // nothing while some are unread.
            try await shipper.applyRetention()
            #expect(logs.entries(.warning, containing: "is passed over").count <= 2 * passedOver + 1)

            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let restored = try await ReplicaRestorer(from: shipped.location, configuration: gateway.configuration())
                .restore(into: sandbox.target)
            #expect(restored.damage.isEmpty)
            #expect(try JournalReader(at: sandbox.target).state().entries == journal.state().entries)
            try journal.close()
        }

        @Test func aRedirectIsNotFollowedSoCredentialsStayWithTheEndpoint() async throws {
            let endpoint = try HostileEndpoint(mode: "redirect")
            defer { endpoint.stop() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }

            let run = try endpoint.restoreWithTool(into: sandbox.target)

            #expect(run.status != 0)
            #expect(run.error.contains("redirect"), "\(run.error)")
            #expect(endpoint.log().isEmpty, "the other origin received: \(endpoint.log())")
        }

        @Test func aListingThatNeverEndsIsStoppedInsteadOfFollowedForEver() async throws {
            // A replica's identity, so that the restore lists its generations.
            let identity = ReplicaIdentity(
                storeID: String(repeating: "a", count: 32), encrypted: false, replicaID: ReplicaIdentity.newID())
            let endpoint = try HostileEndpoint(
                mode: "list-loop",
                identity: try ObjectEnvelope.seal(
                    Array(try JSONEncoder().encode(identity)), name: "replica.json", keyring: nil, storeID: nil,
                    replicaID: nil, chunkBytes: ReplicaLimits.sealedChunkBytes))
            defer { endpoint.stop() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }

            let run = try endpoint.restoreWithTool(into: sandbox.target)

            // Stopped by the rule on listings (the status and message say so), not by a time limit.
            #expect(run.status == 74, "\(run.error)")
            #expect(run.error.contains("keeps continuing the listing"), "\(run.error)")
        }

        @Test func aServerThatDripsItsBodiesIsCutOffAtTheMinimumRateWithAClearError() async throws {
            // Two bytes a second on every body, never a stall long enough for the idle timeout: a
            // restore used to wait for as long as the server liked.
            let endpoint = try HostileEndpoint(mode: "drip")
            defer { endpoint.stop() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let before = sandbox.outsideTarget()

            let run = try endpoint.restoreWithTool(into: sandbox.target)

            #expect(run.status == 74, "\(run.error)")
            #expect(run.error.contains("too slowly"), "\(run.error)")
            #expect(run.error.contains("replica.json"), "the message names the object: \(run.error)")
            // The default window is 30 seconds; the refusal comes at its end (the message names
            // the window; the run lasted at least that long), not after a retry: the endpoint was
            // asked for the object once.
            let window = ReplicaLimits.transferRateWindow.components.seconds
            #expect(run.error.contains("over \(window) seconds"), "\(run.error)")
            #expect(run.seconds >= Double(window), "took \(run.seconds) s")
            let requests = endpoint.log().split(separator: "\n")
            #expect(requests.count == 1 && requests.first?.hasSuffix("/replica.json") == true, "\(requests)")
            #expect(!FileManager.default.fileExists(atPath: sandbox.target.path), "the target it made is removed")
            #expect(sandbox.outsideTarget() == before)
        }

        @Test func aSteadyBodyAboveTheMinimumRateIsReadWhileADripUnderItIsCutOffAtTheWindow() async throws {
            // A 5-second window (STATEJOURNAL_S3_MINIMUM_RATE=1024/5): a body sent at 2 KiB a second
            // for 12 seconds spans the window twice over and is read whole (it is then no replica's
            // identity); one dripped at 2 bytes a second is cut off when the first window ends.
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            for mode in ["slow", "drip"] {
                let endpoint = try HostileEndpoint(mode: mode)
                defer { endpoint.stop() }
                var environment = try endpoint.childEnvironment()
                environment["STATEJOURNAL_S3_MINIMUM_RATE"] = "1024/5"
                let run = try measuredTool(
                    [
                        "restore", "s3://bucket/prefix", "--into",
                        sandbox.root.appendingPathComponent("work/\(mode)").path,
                    ],
                    environment: environment)
                if mode == "slow" {
                    #expect(!run.error.contains("too slowly"), "\(run.error)")
                    #expect(run.status == 65, "\(run.error)")
                    #expect(run.seconds > 10, "took \(run.seconds) s")
                } else {
                    #expect(run.status == 74 && run.error.contains("too slowly"), "\(run.error)")
                    // Cut off by the 5-second window set in the environment (the message names it),
                    // at its first end: the object was asked for once, not retried.
                    #expect(run.error.contains("over 5 seconds"), "\(run.error)")
                    #expect(endpoint.log().split(separator: "\n").count == 1, "\(endpoint.log())")
                }
            }
        }

        @Test(.timeLimit(.minutes(10))) func aTransferCancelledBeforeItStartsStopsAtOnceInsteadOfRunning() async throws
        {
            // A SIGTERM that lands between a request's last cancellation check and the start of its
            // transfer cancels the task once, and for good: the transfer must not start anyway, or a
            // slow server would keep it going while further SIGTERMs find the task cancelled already.
            let endpoint = try HostileEndpoint(mode: "drip")
            defer { endpoint.stop() }
            let transfers = BoundedTransfers(minimumRate: MinimumTransferRate(bytesPerSecond: 0))
            let session = URLSession(configuration: .ephemeral, delegate: transfers, delegateQueue: nil)
            defer { session.invalidateAndCancel() }
            let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(endpoint.port)/bucket/key")))
            // A transfer that ran would last as long as the drip (over half an hour, with no minimum
            // rate): the time limit catches that. One that returned at once never reached the
            // endpoint, which records every request before it answers.
            let outcome = try await Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await transfers.send(request, on: session, limit: 1 << 20)
            }.value
            #expect(endpoint.log().isEmpty, "the cancelled transfer was sent: \(endpoint.log())")
            guard case .failed(let error as URLError) = outcome else {
                Issue.record("the cancelled transfer ended with \(outcome)")
                return
            }
            #expect(error.code == .cancelled)
        }

        @Test(.timeLimit(.minutes(10)))
        func aRestoreCancelledWhileItVerifiesStopsAtOnceAndRemovesWhatItWrote() async throws {
            // The verification of a large store takes seconds to minutes, and used to run to its
            // end whatever SIGTERMs came: here it lasts until the test releases it, which it does
            // only after the cancelled restore returned (or, should the restore wait for it, after
            // eight minutes, which the verifier then reports).
            let gateway = try Gateway.required()
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: "cancel-verify", passes: [6])
            defer { shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let before = sandbox.outsideTarget()
            let verifying = Locked(false)
            let restoreReturned = Locked(false)
            // Whether the restore had returned when the verifier was let go, once it was.
            let releasedAfterTheRestoreReturned = Locked<Bool?>(nil)
            let release = DispatchSemaphore(value: 0)
            var restorer = ReplicaRestorer(from: shipped.location, configuration: gateway.configuration())
            restorer.verifier = { directory in
                verifying.withLock { $0 = true }
                release.wait()
                let returned = restoreReturned.withLock { $0 }
                releasedAfterTheRestoreReturned.withLock { $0 = returned }
                return StoreInspector.verify(directory)
            }
            let target = sandbox.target
            let restore = Task { [restorer] in try await restorer.restore(into: target) }
            while !verifying.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
            // The hang guard: a restore that waited for its verifier would return only after this.
            let guardRelease = Task {
                try await Task.sleep(for: .seconds(480))
                release.signal()
            }
            restore.cancel()
            let result = await restore.result
            restoreReturned.withLock { $0 = true }
            guardRelease.cancel()
            if (try? await guardRelease.value) == nil { release.signal() }
            while releasedAfterTheRestoreReturned.withLock({ $0 }) == nil {
                try await Task.sleep(for: .milliseconds(10))
            }

            #expect(
                releasedAfterTheRestoreReturned.withLock { $0 } == true,
                "the cancelled restore waited for its verification")
            #expect(throws: ReplicationError.self) { try result.get() }
            if case .failure(let error as ReplicationError) = result { #expect(error.code == .cancelled) }
            #expect(!FileManager.default.fileExists(atPath: target.path), "the target it made is removed")
            #expect(sandbox.outsideTarget() == before)
        }

        @Test func aRestoreStalledByASlowServerStopsOnSIGTERMInsteadOfWaitingForTheTransfer() async throws {
            let endpoint = try HostileEndpoint(mode: "drip")
            defer { endpoint.stop() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }
            let process = try startTool(
                ["restore", "s3://bucket/prefix", "--into", sandbox.target.path],
                environment: try endpoint.childEnvironment(), logs: sandbox.root, name: "restore")
            // The restore is waiting for the slow body once the endpoint has its request.
            let asked = ContinuousClock.now + .seconds(600)
            while endpoint.log().isEmpty && process.isRunning && ContinuousClock.now < asked {
                try await Task.sleep(for: .milliseconds(20))
            }
            try #require(!endpoint.log().isEmpty, "the restore never asked the endpoint for an object")
            #expect(process.isRunning, "the restore should still be waiting for the slow body")
            kill(process.processIdentifier, SIGTERM)
            let status = await waitForExit(process, timeout: .seconds(600))
            // The body would take over half an hour, and the minimum rate would cut it off at the
            // end of its 30-second window with status 74 and "too slowly": 143 (SIGTERM's 128 + 15)
            // says the signal ended the restore, not the transfer's end. How soon after the signal
            // it stops (within a second, on an idle machine) is not measured here.
            let error =
                (try? String(contentsOf: sandbox.root.appendingPathComponent("restore.err"), encoding: .utf8)) ?? ""
            #expect(
                status == 143, "a cancelled restore exits as SIGTERM's 128 + 15: \(String(describing: status)) \(error)"
            )
            #expect(!error.contains("too slowly"), "\(error)")
            #expect(!FileManager.default.fileExists(atPath: sandbox.target.path), "the target it made is removed")
        }
    }
}

/// `HostileEndpoint.py` running in the background.
final class HostileEndpoint {
    let process = Process()
    let port: Int
    let logFile: URL

    /// Starts the endpoint; in `list-loop` mode, `identity` is what it answers for `replica.json`.
    init(mode: String, identity: [UInt8]? = nil) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("HostileEndpoint.py")
        logFile = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script.path, mode, logFile.path]
        if let identity {
            let file = logFile.appendingPathExtension("identity")
            try Data(identity).write(to: file)
            process.arguments?.append(file.path)
        }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let line = String(decoding: output.fileHandleForReading.readAvailable(), as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw Gateway.Missing(description: "HostileEndpoint.py did not start: \(line)")
        }
        self.port = port
    }

    func log() -> String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The environment of a `statejournal` child that talks to this endpoint, with the gateway's
    /// credentials (which the endpoint must never pass on).
    func childEnvironment() throws -> [String: String] {
        var environment = try Gateway.required().childEnvironment
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(port)"
        return environment
    }

    /// `statejournal restore` of a replica at this endpoint into `target`, measured.
    func restoreWithTool(into target: URL) throws -> ToolRun {
        try measuredTool(
            ["restore", "s3://bucket/prefix", "--into", target.path], environment: try childEnvironment())
    }

    func stop() {
        process.terminate()
        try? FileManager.default.removeItem(at: logFile)
    }
}
