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
/// | `generations/<generation>.json` | a generation: every object a restore needs, with checksums; from version 3, also the bytes the pass shipped inline |
///
/// Numbers are 16 hex digits; the SHA-256 prefix (8 hex digits, of the object's content) keeps a
/// name from ever standing for two contents, even when a power cut made the store rewrite the end of
/// a segment it had already shipped. A generation is written after every object it names.
enum ReplicaLayout {
    static let identity = "replica.json"
    /// The layout version `replica.json` states, which this library writes: 3, a replica whose
    /// generations may be of version 4 (each names the one it builds on, and where each term began
    /// from: ``ReplicaHistory``). A shipper raises a replica of layout 1 or 2 to 3 before it writes
    /// its first generation there, so that a shipper that does not know the history's rules never
    /// writes beside one that does.
    static let identityVersion = 3
    /// The layout versions this library reads.
    static let readableIdentityVersions = 1...3
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
        /// For bytes carried inline by a generation (version 3; `key` is that generation's name):
        /// where they start among its inline bytes. `nil` for an object of its own.
        var offset: Int64? = nil

        /// Whether a generation carries the bytes, rather than an object of their own.
        var isInline: Bool { offset != nil }

        /// What tells this object's bytes apart from every other's in the replica: its key, and for
        /// inline bytes their offset too (a generation carries several).
        var identity: String { offset.map { "\(key)@\($0)" } ?? key }
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
    /// 1; 2 for a generation whose objects may be sealed in chunks (an encrypted replica's): see
    /// ``ObjectEnvelope``; 3 for one stored in a ``GenerationContainer`` that may carry bytes of
    /// files inline (``Object/offset``), and whose sealed segments may stay made of pieces; 4 for
    /// one that names its ``predecessor`` and, in each term start, the generation the term began
    /// from (``TermStart/basis``).
    var version = 1

    /// The version this library writes.
    static let currentVersion = 4
    /// The newest version this library reads.
    static let newestReadableVersion = 4
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
    /// The generation this one builds on (version 4): every object this one names that an earlier
    /// generation named was named by it, and the store this one describes continues its history.
    /// `nil` for the first generation of a replica, and before version 4.
    var predecessor: Link?

    /// The first generation of a term.
    struct TermStart: Codable, Equatable, Sendable {
        var term: UInt64
        var generation: UInt64
        /// The generation the term's first generation builds on (its ``ReplicaGeneration/predecessor``):
        /// the last one of the history before the term. Generations of older terms numbered after it
        /// are orphans, whatever their number. `0` for a term that began on an empty replica, and
        /// `nil` before version 4.
        var basis: UInt64? = nil
    }

    /// A generation named by another: its number, its term, and the SHA-256 of its payload (hex), so
    /// that another document stored under the same number later is not taken for it.
    struct Link: Codable, Equatable, Sendable {
        var generation: UInt64
        var term: UInt64
        var sha256: String
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

    /// The generation a generation object's payload holds, whether a bare document (versions 1
    /// and 2) or a ``GenerationContainer`` (version 3), without the bytes it carries inline.
    static func decode(_ bytes: [UInt8], key: String) throws -> ReplicaGeneration {
        try GenerationContainer.open(bytes, key: key).generation
    }

    /// What every version of a generation document states.
    private struct Stated: Decodable {
        var format: String
        var version: Int
    }

    /// The generation in the bare document `bytes`.
    static func decodeDocument(_ bytes: some Collection<UInt8>, key: String) throws -> ReplicaGeneration {
        let data = Data(bytes)
        do {
            return try JSONDecoder().decode(ReplicaGeneration.self, from: data)
        } catch {
            // A later version may have changed what a generation holds: say which version it is.
            if let stated = try? JSONDecoder().decode(Stated.self, from: data),
                stated.format == "statejournal-replica-generation", stated.version > newestReadableVersion
            {
                throw ReplicationError(
                    .damagedObject,
                    "The generation \(printable(key)) is of version \(stated.version), which this StateJournal does not read; a newer one may (it reads versions up to \(newestReadableVersion)).",
                    key: key)
            }
            throw ReplicationError(
                .damagedObject, "The generation \(printable(key)) is not a valid generation document.", key: key)
        }
    }
}

/// How a generation of version 3 is stored: its document and the bytes of files that the pass
/// which wrote it shipped inline, in one object, so that a pass costs one request.
///
/// | bytes | what they are |
/// |---|---|
/// | 4 | `SJGC` |
/// | 1 | the container's version: 1 |
/// | 4 | the document's length `n`, big-endian |
/// | `n` | the generation document (JSON, version 3 or later) |
/// | the rest | the inline bytes, which the generation's objects name by ``ReplicaGeneration/Object/offset`` |
///
/// The whole is one object's payload, sealed as any other (``ObjectEnvelope``), so the inline bytes
/// are authenticated with the document when the replica is encrypted. A payload that starts with `{`
/// is a bare document of version 1 or 2.
enum GenerationContainer {
    static let magic: [UInt8] = Array("SJGC".utf8)
    static let version: UInt8 = 1
    static let headerBytes = 9

    /// The payload of a generation object holding `generation` and `inline`.
    static func seal(_ generation: ReplicaGeneration, inline: [UInt8]) throws -> [UInt8] {
        let document = try ReplicaGeneration.encode(generation)
        guard generation.version >= 3 else { return document }
        var bytes = magic + [version]
        let length = UInt32(document.count)
        bytes += [
            UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
            UInt8(truncatingIfNeeded: length),
        ]
        bytes += document
        bytes += inline
        return bytes
    }

    /// The generation in a generation object's payload and the bytes it carries inline (none for a
    /// bare document).
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` when the payload is neither a bare document
    ///   of version 1 or 2 nor a container of version 1 holding a document of version 3 or later.
    static func open(_ bytes: [UInt8], key: String) throws -> (generation: ReplicaGeneration, inline: ArraySlice<UInt8>)
    {
        func damaged(_ reason: String) -> ReplicationError {
            ReplicationError(
                .damagedObject, "The generation \(printable(key)) is not a valid generation: \(reason).", key: key)
        }
        guard bytes.starts(with: magic) else {
            let generation = try ReplicaGeneration.decodeDocument(bytes, key: key)
            guard generation.version < 3 else {
                throw damaged("its version \(generation.version) document comes outside a container")
            }
            return (generation, [])
        }
        guard bytes.count >= headerBytes else { throw damaged("its container is cut short") }
        guard bytes[4] == version else {
            throw damaged(
                "its container is of version \(bytes[4]), which this StateJournal does not read; a newer one may")
        }
        let length = Int(bytes[5]) << 24 | Int(bytes[6]) << 16 | Int(bytes[7]) << 8 | Int(bytes[8])
        guard length <= bytes.count - headerBytes else {
            throw damaged("its document is said to be \(length) bytes long, beyond the container's end")
        }
        let generation = try ReplicaGeneration.decodeDocument(bytes[headerBytes..<(headerBytes + length)], key: key)
        guard generation.version >= 3 else { throw damaged("its version \(generation.version) comes in a container") }
        return (generation, bytes[(headerBytes + length)...])
    }
}
