import Crypto
import Foundation
import StateJournal

/// The names of a replica's objects under its prefix. Every name sorts by epoch (or generation)
/// when listed, and none is ever used for two different contents.
///
/// | name | what it is |
/// |---|---|
/// | `replica.json` | the replica's identity: the store id; written once, create-only |
/// | `checkpoints/<epoch>-<sequence>-<sha256 prefix>.lz4` | a checkpoint file, whole |
/// | `segments/<base epoch>-<sequence>-<sha256 prefix>.sjl` | a sealed segment file, whole |
/// | `tail/<sequence>/<start>-<end>-<sha256 prefix>` | bytes `start..<end` of the live segment |
/// | `generations/<generation>.json` | a generation: every object a restore needs, with checksums |
///
/// Numbers are 16 hex digits; the SHA-256 prefix (8 hex digits, of the object's content) keeps a
/// name from ever standing for two contents, even when a power cut made the store rewrite the end of
/// a segment it had already shipped. A generation is written after every object it names.
enum ReplicaLayout {
    static let identity = "replica.json"
    /// The layout version `replica.json` states, the only one this library reads and writes.
    static let identityVersion = 1
    static let generationsFolder = "generations/"

    static func hex16(_ value: UInt64) -> String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex
    }

    static func checkpoint(epoch: UInt64, sequence: UInt64, sha256: String) -> String {
        "checkpoints/\(hex16(epoch))-\(hex16(sequence))-\(sha256.prefix(8)).lz4"
    }

    static func segment(baseEpoch: UInt64, sequence: UInt64, sha256: String) -> String {
        "segments/\(hex16(baseEpoch))-\(hex16(sequence))-\(sha256.prefix(8)).sjl"
    }

    static func piece(sequence: UInt64, start: Int64, end: Int64, sha256: String) -> String {
        "tail/\(hex16(sequence))/\(hex16(UInt64(start)))-\(hex16(UInt64(end)))-\(sha256.prefix(8))"
    }

    static func generation(_ number: UInt64) -> String { generationsFolder + hex16(number) + ".json" }

    static func generationNumber(_ name: String) -> UInt64? {
        guard name.hasPrefix(generationsFolder), name.hasSuffix(".json") else { return nil }
        let digits = name.dropFirst(generationsFolder.count).dropLast(5)
        guard digits.utf8.count == 16, let number = UInt64(digits, radix: 16), number <= ReplicaLimits.maximumCounter
        else { return nil }
        return number
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String { SignatureV4.hex(SHA256.hash(data: bytes)) }
}

/// What `replica.json` holds: which store the prefix replicates, and whether its shipper encrypts.
///
/// It is written in the clear (every shipper of the store reads it before it knows anything else),
/// so it is a hint, never a proof: a reader with a key requires every other object to be sealed by
/// it whatever `encrypted` says, and checks that every generation names this store.
struct ReplicaIdentity: Codable, Equatable {
    var format = "statejournal-replica"
    var version = ReplicaLayout.identityVersion
    var storeID: String
    /// Whether the shipper that claimed the prefix encrypts (absent in replicas of 0.1.0).
    var encrypted: Bool?
    /// The replica's own id, 32 lowercase hex digits drawn when a shipper claimed the prefix, which
    /// every encrypted object authenticates (absent in replicas claimed before it was added, whose
    /// objects authenticate none): a copy of the store shipped to another prefix under the same key
    /// has another id, so its objects cannot be moved into this replica.
    var replicaID: String?

    /// A new replica id.
    static func newID() -> String {
        var random = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &random)) }.joined()
    }

    /// Whether `text` is a store id: 32 lowercase hex digits.
    static func isStoreID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}

/// One generation of a replica: the files of the store as of one pass of the shipper, each as the
/// objects that hold its bytes.
struct ReplicaGeneration: Codable, Equatable, Sendable {
    struct Object: Codable, Equatable, Sendable {
        /// The object's name under the prefix.
        var key: String
        /// The file's bytes `start..<end` are the object's payload.
        var start: Int64
        var end: Int64
        /// SHA-256 of the payload (before encryption), hex.
        var sha256: String
        /// For live-segment pieces: how many merges made it (pieces are merged four at a time).
        var level: Int
    }

    struct File: Codable, Equatable, Sendable {
        var name: String
        var kind: String
        var sequence: UInt64
        var baseEpoch: UInt64
        var lastEpoch: UInt64
        var timestampMilliseconds: UInt64
        var sealed: Bool
        var length: Int64
        var objects: [Object]

        var isCheckpoint: Bool { kind == "checkpoint" }
        /// The first epoch the file holds.
        var firstEpoch: UInt64 { isCheckpoint ? lastEpoch : baseEpoch + 1 }
    }

    var format = "statejournal-replica-generation"
    /// 1, or 2 for a generation whose objects may be sealed in chunks (an encrypted replica's):
    /// see ``ObjectEnvelope``.
    var version = 1
    var storeID: String
    var generation: UInt64
    /// When the shipper wrote it, in milliseconds since 1970 UTC.
    var writtenMilliseconds: UInt64
    var storeGeneration: UInt64
    var nextFileSequence: UInt64
    var epochFloor: UInt64
    var lastEpoch: UInt64?
    var lastEpochMilliseconds: UInt64?
    var files: [File]
    /// The term of the shipper that wrote it (absent before leases: term 0). See ``LeaseDocument``.
    var term: UInt64?
    /// The id of the shipper that wrote it, drawn when that shipper started.
    var holder: String?
    /// Where each recent term began: the term and the number of its first generation, oldest
    /// first, the generation's own term last. A generation of an older term numbered at or after a
    /// newer term's start was written by a shipper that had lost its lease, and is never used.
    var terms: [TermStart]?

    /// The first generation of a term.
    struct TermStart: Codable, Equatable, Sendable {
        var term: UInt64
        var generation: UInt64
    }

    /// The most term starts a generation carries; older ones are dropped.
    static let rememberedTerms = 256

    /// Whether `newer`, a later generation, shows that `self` was written by a shipper that had
    /// already lost its lease: a newer term began at or before `self`'s number.
    func isFencedOut(by newer: ReplicaGeneration) -> Bool {
        let mine = term ?? 0
        return (newer.terms ?? []).contains { $0.term > mine && $0.generation <= generation }
    }

    /// The oldest epoch a restore from this generation can reach.
    var firstEpoch: UInt64? {
        if let checkpoint = files.first(where: \.isCheckpoint) { return checkpoint.lastEpoch }
        return files.first.map { $0.baseEpoch == 0 ? 1 : $0.baseEpoch + 1 }
    }

    /// Whether every epoch a restore from `self` reaches, `other` reaches too: the same files, each
    /// at least as long, with more possibly added.
    func isCovered(by other: ReplicaGeneration) -> Bool {
        let later = Dictionary(other.files.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        return files.allSatisfy { file in later[file.name].map { $0.length >= file.length } ?? false }
    }

    /// The description the store's library assembles a store from.
    func fileSet(lengths: [String: Int64] = [:]) -> StoreFileSet {
        StoreFileSet(
            storeID: storeID, generation: storeGeneration, nextFileSequence: nextFileSequence, epochFloor: epochFloor,
            files: files.map { file in
                StoreFileSet.File(
                    name: file.name, kind: file.isCheckpoint ? .checkpoint : .segment, sequence: file.sequence,
                    baseEpoch: file.baseEpoch, lastEpoch: file.lastEpoch,
                    timestampMilliseconds: file.timestampMilliseconds, isSealed: file.sealed,
                    length: lengths[file.name] ?? file.length)
            }, lastEpoch: nil)
    }

    static func encode(_ generation: ReplicaGeneration) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(generation))
    }

    static func decode(_ bytes: [UInt8], key: String) throws -> ReplicaGeneration {
        do {
            return try JSONDecoder().decode(ReplicaGeneration.self, from: Data(bytes))
        } catch {
            throw ReplicationError(
                .damagedObject, "The generation \(key) is not a valid generation document.", key: key)
        }
    }
}
