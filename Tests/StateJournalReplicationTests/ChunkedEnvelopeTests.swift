import Foundation
import Testing

@testable import StateJournalReplication

/// Version 2 envelopes: an encrypted object sealed in chunks. Whoever can write the bucket can cut,
/// reorder, drop, repeat and swap chunks, and flip any byte; each is refused with a typed error,
/// and nothing of such an object is returned.
@Suite struct ChunkedEnvelopeTests {
    static let key = try! ReplicationKey(id: "chunks", bytes: Array(repeating: 7, count: 32))
    static let keyring = ReplicationKeyring(current: key)
    static let storeID = String(repeating: "3c", count: 16)
    static let chunk = SealedChunks.minimumChunkBytes
    static let name = "checkpoints/0000000000000010-0000000000000002-01234567.lz4"

    static func payload(_ count: Int, seed: UInt8 = 1) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    static func seal(_ payload: [UInt8], name: String = name, markingFinal: Bool = true) throws -> [UInt8] {
        try SealedChunks.seal(
            payload, name: name, key: key, storeID: storeID, chunkBytes: chunk, markingFinal: markingFinal)
    }

    static func open(_ bytes: [UInt8], name: String = name, storeID: String? = storeID) throws -> [UInt8] {
        try ObjectEnvelope.open(bytes, name: name, keyring: keyring, storeID: storeID)
    }

    /// The code `body` throws, or nil when it does not throw.
    static func code(_ body: () throws -> [UInt8]) -> ReplicationError.Code? {
        do {
            _ = try body()
            return nil
        } catch let error as ReplicationError {
            return error.code
        } catch {
            return .store
        }
    }

    static func headerLength(_ bytes: [UInt8]) -> Int { SealedChunks.fixedHeaderBytes + Int(bytes[6]) }

    /// The bytes of chunk `index` of a sealed object of full chunks.
    static func chunkBytes(_ bytes: [UInt8], _ index: Int) -> ArraySlice<UInt8> {
        let start = headerLength(bytes) + index * (chunk + 16)
        return bytes[start..<min(bytes.count, start + chunk + 16)]
    }

    @Test(arguments: [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + chunk / 2])
    func aPayloadComesBackWholeWithATagPerChunk(_ count: Int) throws {
        let payload = Self.payload(count)
        let sealed = try Self.seal(payload)
        let chunks = max(1, (count + Self.chunk - 1) / Self.chunk)
        #expect(sealed.count == Self.headerLength(sealed) + count + 16 * chunks)
        #expect(try Self.open(sealed) == payload)
        #expect(sealed[4] == 2 && sealed[5] == 1)
    }

    @Test func anObjectSealedAsOneInVersion1IsStillRead() throws {
        let payload = Self.payload(10_000)
        let sealed = try ObjectEnvelope.sealVersion1(payload, name: Self.name, key: Self.key)
        #expect(try Self.open(sealed) == payload)
    }

    @Test func truncatedObjectsAreRefused() throws {
        let sealed = try Self.seal(Self.payload(3 * Self.chunk))
        for cut in [1, 16, Self.chunk + 16, 2 * (Self.chunk + 16), sealed.count - Self.headerLength(sealed) - 1] {
            #expect(Self.code { try Self.open(Array(sealed.dropLast(cut))) } == .damagedObject, "cut \(cut)")
        }
        // Cut after two chunks, the header's length made to agree: the header is authenticated.
        var shortened = Array(sealed.dropLast(Self.chunk + 16))
        let lengthAt = Self.headerLength(sealed) - 16
        shortened.replaceSubrange(lengthAt..<(lengthAt + 8), with: [0, 0, 0, 0, 0, 0, 0x20, 0])
        #expect(shortened.count == Self.headerLength(sealed) + 2 * (Self.chunk + 16))
        #expect(Self.code { try Self.open(shortened) } == .wrongKey)
    }

    @Test func aMissingFinalFlagIsRefused() throws {
        let payload = Self.payload(2 * Self.chunk + 5)
        let unfinished = try Self.seal(payload, markingFinal: false)
        #expect(Self.code { try Self.open(unfinished) } == .wrongKey)
    }

    @Test func reorderedDroppedAndRepeatedChunksAreRefused() throws {
        let sealed = try Self.seal(Self.payload(3 * Self.chunk))
        let header = Array(sealed[..<Self.headerLength(sealed)])
        let chunks = (0..<3).map { Array(Self.chunkBytes(sealed, $0)) }
        let reordered = header + chunks[1] + chunks[0] + chunks[2]
        #expect(Self.code { try Self.open(reordered) } == .wrongKey)
        let repeated = header + chunks[0] + chunks[0] + chunks[2]
        #expect(Self.code { try Self.open(repeated) } == .wrongKey)
        let lastFirst = header + chunks[2] + chunks[1] + chunks[0]
        #expect(Self.code { try Self.open(lastFirst) } == .wrongKey)
        // A middle chunk dropped and the last repeated to keep the size.
        let dropped = header + chunks[0] + chunks[2] + chunks[2]
        #expect(Self.code { try Self.open(dropped) } == .wrongKey)
        #expect(Self.code { try Self.open(header + chunks[0] + chunks[2]) } == .damagedObject)
    }

    @Test func chunksAndObjectsCannotBeMovedBetweenObjectsOrStores() throws {
        let first = try Self.seal(Self.payload(2 * Self.chunk, seed: 1))
        let otherName = "checkpoints/0000000000000020-0000000000000004-89abcdef.lz4"
        let second = try Self.seal(Self.payload(2 * Self.chunk, seed: 2), name: otherName)
        // A chunk of another object, in place.
        let header = Array(first[..<Self.headerLength(first)])
        let mixed = header + Self.chunkBytes(first, 0) + Self.chunkBytes(second, 1)
        #expect(Self.code { try Self.open(mixed) } == .wrongKey)
        // Another object's header over this object's chunks, and a whole object under another name.
        let otherHeader = Array(second[..<Self.headerLength(second)])
        #expect(Self.code { try Self.open(otherHeader + first[header.count...]) } == .wrongKey)
        #expect(Self.code { try Self.open(first, name: otherName) } == .wrongKey)
        // An object of another store under the same key.
        #expect(Self.code { try Self.open(first, storeID: String(repeating: "4d", count: 16)) } == .damagedObject)
    }

    @Test func everyFlippedByteIsRefused() throws {
        let sealed = try Self.seal(Self.payload(2 * Self.chunk + 100))
        for position in sealed.indices {
            var flipped = sealed
            flipped[position] ^= 0x40
            #expect(Self.code { try Self.open(flipped) } != nil, "byte \(position) flipped was accepted")
        }
    }

    @Test func hostileHeadersAreRefusedBeforeAnythingIsAllocated() throws {
        let sealed = try Self.seal(Self.payload(100))
        let chunkAt = Self.headerLength(sealed) - 20
        for chunkSize: [UInt8] in [[0, 0, 0, 0], [0, 0, 0x0F, 0xFF], [0xFF, 0xFF, 0xFF, 0xFF], [0, 0x80, 0, 1]] {
            var hostile = sealed
            hostile.replaceSubrange(chunkAt..<(chunkAt + 4), with: chunkSize)
            #expect(Self.code { try Self.open(hostile) } == .damagedObject, "\(chunkSize)")
        }
        for length: [UInt8] in [[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 0, 0x80, 0, 0, 1]] {
            var hostile = sealed
            hostile.replaceSubrange((chunkAt + 4)..<(chunkAt + 12), with: length)
            #expect(Self.code { try Self.open(hostile) } == .damagedObject, "\(length)")
        }
        var unencrypted = sealed
        unencrypted[5] = 0
        #expect(Self.code { try Self.open(unencrypted) } == .damagedObject)
        #expect(Self.code { try ObjectEnvelope.open(sealed, name: Self.name, keyring: nil) } == .missingKey)
        #expect(Self.code { try Self.open(Array(sealed.prefix(20))) } == .damagedObject)
    }

    /// The message `body` throws, or nil when it does not throw.
    static func message(_ body: () throws -> [UInt8]) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as ReplicationError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func aHeaderWithAVersionOrFlagsNoShipperWritesIsDamageThatNamesThem() throws {
        let plain = try ObjectEnvelope.seal(Self.payload(100), name: Self.name, keyring: nil)
        let version1 = try ObjectEnvelope.sealVersion1(Self.payload(100), name: Self.name, key: Self.key)
        let version2 = try Self.seal(Self.payload(100))
        for (original, byte, value, words) in [
            (plain, 4, UInt8(3), "envelope version 3"), (version2, 4, 255, "envelope version 255"),
            (plain, 5, 3, "flags 3"), (version1, 5, 255, "flags 255"), (version2, 5, 3, "flags 3"),
            (version2, 5, 0, "flags 0"),
        ] {
            var hostile = original
            hostile[byte] = value
            #expect(Self.code { try Self.open(hostile) } == .damagedObject, "\(words)")
            let message = Self.message { try Self.open(hostile) } ?? ""
            #expect(message.contains(words) && message.contains("no shipper writes"), "\(message)")
            #expect(!message.contains("SHA-256") && !message.contains("not encrypted"), "\(message)")
        }
    }

    @Test func aKeyIdTheKeyringLacksIsReportedAsTheObjectsClaim() throws {
        let other = try ReplicationKey(id: "k9", bytes: Array(repeating: 9, count: 32))
        let sealed = try SealedChunks.seal(
            Self.payload(100), name: Self.name, key: other, storeID: Self.storeID, chunkBytes: Self.chunk)
        let message = Self.message { try Self.open(sealed) } ?? ""
        #expect(Self.code { try Self.open(sealed) } == .missingKey)
        #expect(message.contains("says it is encrypted with key k9"), "\(message)")
        #expect(message.contains("not written by the replica's shipper"), "\(message)")
    }
}
