import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

/// The container a generation of version 3 is stored in, and the rules a generation that carries
/// bytes inline is validated by: what a reader takes from a bucket before it believes any of it.
@Suite struct GenerationContainerTests {
    static let storeID = String(repeating: "a", count: 32)

    /// Generation `number` of a store of one sealed segment of `pieces` pieces, carried inline by
    /// generation `carrier` at `offsets`, or each an object of its own when `offsets` is `nil`.
    static func generation(
        _ number: UInt64, version: Int = 3, sealed: Bool = true, kind: String = "segment", pieces: Int = 2,
        carrier: UInt64? = nil, offsets: [Int64]? = nil
    ) -> ReplicaGeneration {
        let sequence: UInt64 = 1
        var objects: [ReplicaGeneration.Object] = []
        for index in 0..<pieces {
            let start = Int64(index * 100)
            let hash = String(repeating: String(index), count: 64)
            if let offsets {
                objects.append(
                    ReplicaGeneration.Object(
                        key: ReplicaLayout.generation(carrier ?? number), start: start, end: start + 100, sha256: hash,
                        level: 0, offset: offsets[index]))
            } else {
                objects.append(
                    ReplicaGeneration.Object(
                        key: ReplicaLayout.piece(sequence: sequence, start: start, end: start + 100, sha256: hash),
                        start: start, end: start + 100, sha256: hash, level: 0))
            }
        }
        let isCheckpoint = kind == "checkpoint"
        let file = ReplicaGeneration.File(
            name: StoreFileSet.fileName(of: isCheckpoint ? .checkpoint : .segment, sequence: sequence), kind: kind,
            sequence: sequence, baseEpoch: isCheckpoint ? 4 : 0, lastEpoch: 4, timestampMilliseconds: 0,
            sealed: sealed, length: Int64(pieces * 100), objects: objects)
        var generation = ReplicaGeneration(
            storeID: storeID, generation: number, writtenMilliseconds: 0, storeGeneration: 1, nextFileSequence: 2,
            epochFloor: 0, lastEpoch: 4, lastEpochMilliseconds: nil, files: [file])
        generation.version = version
        return generation
    }

    static func validates(_ generation: ReplicaGeneration) -> Bool {
        (try? generation.validated(number: generation.generation, storeID: storeID, key: "g")) != nil
    }

    @Test func aContainerGivesBackItsDocumentAndTheBytesItCarries() throws {
        let generation = Self.generation(5, offsets: [0, 100])
        let inline = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let payload = try GenerationContainer.seal(generation, inline: inline)
        #expect(Array(payload.prefix(5)) == Array("SJGC".utf8) + [1])
        let opened = try GenerationContainer.open(payload, key: "g")
        #expect(opened.generation == generation)
        #expect(Array(opened.inline) == inline)
        #expect(try ReplicaGeneration.decode(payload, key: "g") == generation)
    }

    @Test func generationsOfVersions1And2StayBareDocumentsAndStillRead() throws {
        for version in [1, 2] {
            var generation = Self.generation(5, version: version, pieces: 1)
            generation.files[0].objects[0].key = ReplicaLayout.segment(
                baseEpoch: 0, sequence: 1, sha256: generation.files[0].objects[0].sha256)
            let payload = try GenerationContainer.seal(generation, inline: [])
            #expect(payload.first == UInt8(ascii: "{"))
            #expect(payload == (try ReplicaGeneration.encode(generation)))
            let opened = try GenerationContainer.open(payload, key: "g")
            #expect(opened.generation == generation && opened.inline.isEmpty)
            #expect(Self.validates(generation), "version \(version)")
        }
    }

    @Test func aVersion3DocumentOutsideAContainerAndAnOlderOneInsideAreDamage() throws {
        let bare = try ReplicaGeneration.encode(Self.generation(5, offsets: [0, 100]))
        #expect(throws: ReplicationError.self) { try GenerationContainer.open(bare, key: "g") }
        let older = try ReplicaGeneration.encode(Self.generation(5, version: 2, pieces: 1))
        let wrapped = Array("SJGC".utf8) + [1, 0, 0, UInt8(older.count >> 8), UInt8(older.count & 0xFF)] + older
        let error = #expect(throws: ReplicationError.self) { try GenerationContainer.open(wrapped, key: "g") }
        #expect(error?.code == .damagedObject)
    }

    @Test func everyCutOfAContainerIsDamageOrLosesOnlyInlineBytesNeverATrap() throws {
        let generation = Self.generation(5, offsets: [0, 100])
        let payload = try GenerationContainer.seal(generation, inline: [UInt8](repeating: 9, count: 200))
        let documentEnd = payload.count - 200
        for length in 0..<payload.count {
            let cut = Array(payload.prefix(length))
            if length < documentEnd {
                let error = #expect(throws: ReplicationError.self, "cut at \(length)") {
                    try GenerationContainer.open(cut, key: "g")
                }
                #expect(error?.code == .damagedObject, "cut at \(length)")
            } else {
                // The document is whole: what is missing is inline bytes, which a reader checks
                // against the offsets and hashes the generation recorded.
                #expect(try GenerationContainer.open(cut, key: "g").inline.count == length - documentEnd)
            }
        }
    }

    @Test func everyFlippedHeaderByteAndAnyDocumentLengthIsRefusedOrBoundedNeverATrap() throws {
        let payload = try GenerationContainer.seal(Self.generation(5, offsets: [0, 100]), inline: [1, 2, 3])
        for index in 0..<GenerationContainer.headerBytes {
            for bit in 0..<8 {
                var flipped = payload
                flipped[index] ^= 1 << bit
                if let opened = try? GenerationContainer.open(flipped, key: "g") {
                    // Only a longer or shorter document can still parse: never the same split.
                    #expect(opened.inline.count <= flipped.count - GenerationContainer.headerBytes)
                }
            }
        }
        for length: UInt32 in [.max, 1 << 31, UInt32(payload.count)] {
            var forged = payload
            forged.replaceSubrange(
                5..<9,
                with: [
                    UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16),
                    UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length),
                ])
            #expect(throws: ReplicationError.self, "length \(length)") {
                try GenerationContainer.open(forged, key: "g")
            }
        }
    }

    @Test func aGenerationOfALaterVersionIsRefusedNamingTheVersionEvenWhenItsFieldsChanged() throws {
        let later = #"{"format":"statejournal-replica-generation","version":7,"somethingNew":[1,2]}"#
        let error = #expect(throws: ReplicationError.self) {
            try GenerationContainer.open(Array(later.utf8), key: "generations/0000000000000005.json")
        }
        #expect(error?.message.contains("version 7") == true, "\(String(describing: error))")
        #expect(error?.message.contains("a newer one may") == true)
        var future = Self.generation(5, version: 5, pieces: 1)
        future.files[0].objects[0].key = ReplicaLayout.segment(
            baseEpoch: 0, sequence: 1, sha256: future.files[0].objects[0].sha256)
        let refused = #expect(throws: ReplicationError.self) {
            try future.validated(number: 5, storeID: Self.storeID, key: "g")
        }
        #expect(refused?.message.contains("version 5") == true)
    }

    @Test func inlineBytesAreAcceptedOnlyFromThisOrAnEarlierGenerationWithinWhatOneCarries() {
        #expect(Self.validates(Self.generation(5, offsets: [0, 100])))
        #expect(Self.validates(Self.generation(5, carrier: 2, offsets: [0, 100])))
        // A later generation, a version before 3, a negative or a too distant offset: damage.
        #expect(!Self.validates(Self.generation(5, carrier: 6, offsets: [0, 100])))
        #expect(!Self.validates(Self.generation(5, version: 2, offsets: [0, 100])))
        #expect(!Self.validates(Self.generation(5, offsets: [-1, 100])))
        #expect(!Self.validates(Self.generation(5, offsets: [0, Int64(ReplicaLimits.maximumGenerationBytes) - 50])))
        #expect(!Self.validates(Self.generation(5, offsets: [0, .max])))
        // An inline object that names no generation.
        var stray = Self.generation(5, offsets: [0, 100])
        stray.files[0].objects[1].key = "tail/../../x"
        #expect(!Self.validates(stray))
    }

    @Test func theGoldenReplicaOfVersion3CarriesEveryFilesBytesInItsGenerations() throws {
        let objects = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Golden/replica-v3/objects")
        let identity = try #require(
            FileManager.default.contents(atPath: objects.appendingPathComponent("replica.json").path))
        let payload = try ObjectEnvelope.open(Array(identity), name: ReplicaLayout.identity, keyring: nil)
        let stated = try JSONDecoder().decode(ReplicaIdentity.self, from: Data(payload))
        #expect(stated.version == 2)
        var carriedByEarlier = 0
        var sealedInPieces = 0
        for number in UInt64(1)...3 {
            let name = ReplicaLayout.generation(number)
            let bytes = try #require(FileManager.default.contents(atPath: objects.appendingPathComponent(name).path))
            let opened = try GenerationContainer.open(
                try ObjectEnvelope.open(Array(bytes), name: name, keyring: nil), key: name)
            let generation = try opened.generation.validated(number: number, storeID: stated.storeID, key: name)
            #expect(generation.version == 3)
            for file in generation.files {
                let allInline = file.objects.allSatisfy { $0.isInline }
                #expect(allInline, "\(file.name)")
                if file.sealed && file.objects.count > 1 { sealedInPieces += 1 }
                carriedByEarlier += file.objects.filter { $0.key != name }.count
                for object in file.objects where object.key == name {
                    let start = opened.inline.startIndex + Int(object.offset!)
                    let carried = Array(opened.inline[start..<(start + Int(object.end - object.start))])
                    #expect(ReplicaLayout.sha256Hex(carried) == object.sha256)
                }
            }
        }
        #expect(carriedByEarlier > 0 && sealedInPieces > 0)
    }

    /// Counts the fetches of ``InlineCarriers``.
    actor Fetches {
        var count = 0
        var failing = false
        func fetch() throws -> ArraySlice<UInt8> {
            count += 1
            if failing { throw ReplicationError(.damagedObject, "unreadable") }
            return [1, 2, 3][...]
        }
        func fail(_ failing: Bool) { self.failing = failing }
    }

    @Test func aCarrierIsFetchedOnceForEveryObjectItCarriesAndAgainAfterItFailed() async throws {
        let carriers = InlineCarriers()
        let fetches = Fetches()
        for _ in 0..<5 {
            #expect(Array(try await carriers.inline(of: "g1") { try await fetches.fetch() }) == [1, 2, 3])
        }
        #expect(await fetches.count == 1)
        // Only the last few are kept.
        for key in ["g2", "g3", "g1"] { _ = try await carriers.inline(of: key) { try await fetches.fetch() } }
        #expect(await fetches.count == 4)
        // A carrier that could not be read is not kept.
        await fetches.fail(true)
        await #expect(throws: ReplicationError.self) {
            try await carriers.inline(of: "g4") { try await fetches.fetch() }
        }
        await fetches.fail(false)
        #expect(Array(try await carriers.inline(of: "g4") { try await fetches.fetch() }) == [1, 2, 3])
        #expect(await fetches.count == 6)
    }

    @Test func aGenerationThatClaimsAnEpochButNamesNoFileIsDamageNotSilentlyPassedOver() {
        var empty = Self.generation(5, offsets: [0, 100])
        empty.files = []
        let error = #expect(throws: ReplicationError.self) {
            try empty.validated(number: 5, storeID: Self.storeID, key: "g")
        }
        #expect(error?.message.contains("names no file") == true)
        empty.lastEpoch = nil
        #expect(Self.validates(empty))
    }

    @Test func fromVersion3ASealedSegmentMayStayPiecesButACheckpointStaysOneObject() {
        #expect(Self.validates(Self.generation(5, sealed: true, pieces: 3)))
        #expect(!Self.validates(Self.generation(5, version: 2, sealed: true, pieces: 3)))
        #expect(!Self.validates(Self.generation(5, kind: "checkpoint", pieces: 2, offsets: [0, 100])))
        #expect(Self.validates(Self.generation(5, kind: "checkpoint", pieces: 1, offsets: [0])))
    }
}
