import Crypto
import Foundation

/// A 256-bit AES-GCM key for client-side encryption, with the id stored in every object it
/// encrypts so that a keyring can still read objects written under older keys.
public struct ReplicationKey: Sendable, CustomStringConvertible {
    /// The key's id: 1 to 64 characters of `A-Z a-z 0-9 . _ -`.
    public let id: String
    let key: SymmetricKey

    /// Creates a key from 32 bytes.
    ///
    /// - Throws: ``ReplicationError/Code/invalidArgument`` for another length or an unusable id.
    public init(id: String, bytes: [UInt8]) throws {
        guard bytes.count == 32 else {
            throw ReplicationError(
                .invalidArgument, "An encryption key is 32 bytes (AES-256); this one is \(bytes.count).")
        }
        guard Self.isValidID(id.utf8) else {
            throw ReplicationError(
                .invalidArgument, "\(printable(id)) is not a key id: use 1 to 64 of A-Z a-z 0-9 . _ -.")
        }
        self.id = id
        self.key = SymmetricKey(data: bytes)
    }

    /// Parses `ID:KEY`, where KEY is 64 hex digits or the base64 of 32 bytes: the text of a key
    /// file or of the `STATEJOURNAL_REPLICATION_KEY` variable. A text without `ID:` gets the id
    /// `default`.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let id: String
        let material: Substring
        if let colon = trimmed.firstIndex(of: ":") {
            id = String(trimmed[..<colon])
            material = trimmed[trimmed.index(after: colon)...]
        } else {
            id = "default"
            material = trimmed[...]
        }
        if material.count == 64, let bytes = Self.hexBytes(material) {
            try self.init(id: id, bytes: bytes)
        } else if let data = Data(base64Encoded: String(material)) {
            try self.init(id: id, bytes: [UInt8](data))
        } else {
            throw ReplicationError(
                .invalidArgument, "An encryption key is written ID:KEY, KEY being 64 hex digits or base64 of 32 bytes.")
        }
    }

    /// The key's id; never the key.
    public var description: String { "ReplicationKey(id: \(id))" }

    /// Whether `bytes` are a key id: 1 to 64 of `A-Z a-z 0-9 . _ -`.
    static func isValidID(_ bytes: some Collection<UInt8>) -> Bool {
        (1...64).contains(bytes.count)
            && bytes.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }
    }

    private static func hexBytes(_ text: Substring) -> [UInt8]? {
        var result: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            result.append(byte)
            index = next
        }
        return result
    }
}

/// The keys a shipper encrypts with and a restore decrypts with: new objects are encrypted with
/// ``current``; objects are decrypted with the key whose id they carry, so that rotating keys keeps
/// older objects readable as long as their keys stay in the ring.
public struct ReplicationKeyring: Sendable, CustomStringConvertible {
    /// The key new objects are encrypted with.
    public var current: ReplicationKey
    /// Every key, by id, the current one included.
    public var keys: [String: ReplicationKey]

    /// Creates a keyring; `older` keys are used only to read.
    public init(current: ReplicationKey, older: [ReplicationKey] = []) {
        self.current = current
        var keys: [String: ReplicationKey] = [:]
        for key in older { keys[key.id] = key }
        keys[current.id] = current
        self.keys = keys
    }

    /// A keyring read from a file holding one `ID:KEY` line per key, the first being current.
    ///
    /// - Throws: ``ReplicationError/Code/invalidArgument`` when the file cannot be read or parsed.
    public init(contentsOfFile path: String) throws {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ReplicationError(.invalidArgument, "Could not read the key file \(path).")
        }
        let keys = try text.split(whereSeparator: \.isNewline).map(String.init)
            .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty && !$0.hasPrefix("#") }
            .map { try ReplicationKey(parsing: $0) }
        guard let first = keys.first else {
            throw ReplicationError(.invalidArgument, "The key file \(path) holds no key.")
        }
        self.init(current: first, older: Array(keys.dropFirst()))
    }

    /// The ids; never the keys.
    public var description: String { "ReplicationKeyring(current: \(current.id), ids: \(keys.keys.sorted()))" }
}

/// The bytes of every object of a replica: a header, then the payload, plain or encrypted.
///
/// Version 1, which every unencrypted object has (and encrypted objects of replicas written before
/// version 2):
///
/// ```
/// magic "SJRO" | version u8 (1) | flags u8 (bit 0: encrypted) | key id length u8 | key id |
/// payload: plain bytes, or nonce (12) + ciphertext + tag (16), authenticated with the header and
///          the object's key name | SHA-256 of every byte before it (32)
/// ```
///
/// Version 2, which every encrypted object a shipper writes now has: the payload sealed in chunks,
/// so that a reader authenticates and uses one chunk at a time instead of holding the object whole.
///
/// ```
/// magic "SJRO" | version u8 (2) | flags u8 (1: encrypted) | key id length u8 | key id |
/// store id (16) | chunk size u32 | payload length u64 | nonce prefix (8, random per object) |
/// chunk 0 | chunk 1 | … | chunk n-1        (integers big-endian)
/// ```
///
/// The payload is cut into `n = max(1, ⌈length / chunk size⌉)` chunks of `chunk size` bytes, the last
/// one shorter (an empty payload is one empty chunk). Chunk `i` is AES-256-GCM ciphertext + tag (16)
/// under the nonce `nonce prefix | i (u32)`, authenticating the header, the object's key name
/// (length u32 + UTF-8), `i` (u32) and a final flag (u8, 1 for chunk `n-1` only): a chunk cannot be
/// moved to another place, object or store, and an object cannot lose, repeat or reorder chunks, or
/// end before its final one, without failing authentication. The object is exactly `header +
/// length + 16·n` bytes. There is no trailing SHA-256: every byte is authenticated.
enum ObjectEnvelope {
    static let magic: [UInt8] = Array("SJRO".utf8)

    /// The envelope version encrypted objects are written in.
    static let sealedVersion: UInt8 = 2

    /// Seals `payload` as the object `name` of the replica of `storeID`: in version 2 chunks of
    /// `chunkBytes` with a keyring, in version 1 plain without.
    static func seal(
        _ payload: [UInt8], name: String, keyring: ReplicationKeyring?, storeID: String? = nil,
        replicaID: String? = nil, chunkBytes: Int = ReplicaLimits.sealedChunkBytes
    ) throws -> [UInt8] {
        if let key = keyring?.current {
            return try SealedChunks.seal(
                payload, name: name, key: key, storeID: storeID, replicaID: replicaID, chunkBytes: chunkBytes)
        }
        var bytes = magic
        bytes += [1, 0, 0]
        bytes += payload
        bytes += Array(SHA256.hash(data: bytes))
        return bytes
    }

    /// Seals `payload` in a version 1 envelope with AES-GCM as one: what shippers wrote before
    /// version 2, kept to test that replicas written so are still read.
    static func sealVersion1(_ payload: [UInt8], name: String, key: ReplicationKey) throws -> [UInt8] {
        var bytes = magic
        bytes += [1, 1, UInt8(key.id.utf8.count)]
        bytes += Array(key.id.utf8)
        let box = try AES.GCM.seal(payload, using: key.key, authenticating: bytes + Array(name.utf8))
        bytes += Array(box.combined!)
        bytes += Array(SHA256.hash(data: bytes))
        return bytes
    }

    /// The most bytes an envelope of a `payload`-byte payload can have, in any version a reader
    /// accepts: what a whole read of it may take.
    static func maximumBytes(payload: Int) -> Int {
        let chunks = payload / SealedChunks.minimumChunkBytes + 1
        return payload + ReplicaLimits.envelopeOverhead + chunks * SealedChunks.tagBytes
    }

    /// The payload of an object, checked and decrypted.
    ///
    /// With a keyring, the key decides: an object that is not encrypted is refused unless
    /// `acceptsPlaintext` (only `replica.json`, which every shipper must read, is written in the
    /// clear), so that whoever can write the bucket cannot slip in objects the key did not seal.
    /// With `storeID`, a version 2 object must have been sealed for that store, and with
    /// `replicaID` for that replica (the one `replica.json` names).
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject``, ``ReplicationError/Code/unauthenticated``,
    ///   ``ReplicationError/Code/missingKey`` or ``ReplicationError/Code/wrongKey``.
    static func open(
        _ bytes: [UInt8], name: String, keyring: ReplicationKeyring?, acceptsPlaintext: Bool = false,
        storeID: String? = nil, replicaID: String? = nil
    ) throws -> [UInt8] {
        let shown = printable(name)
        func damaged(_ reason: String) -> ReplicationError {
            ReplicationError(.damagedObject, "The object \(shown) is damaged: \(reason).", key: name)
        }
        guard bytes.count >= 4 + 3, Array(bytes[0..<4]) == magic else {
            throw damaged("it does not start as a StateJournal replica object")
        }
        guard bytes[4] == 1 || bytes[4] == 2 else {
            throw damaged(
                "its header gives envelope version \(bytes[4]), which no shipper writes (versions 1 and 2 exist)")
        }
        if bytes[4] == 2 {
            let sealed = try SealedChunks(
                header: bytes, name: name, keyring: keyring, storeID: storeID, replicaID: replicaID)
            guard Int64(bytes.count) == sealed.totalBytes else {
                throw damaged(
                    "it is \(bytes.count) bytes where its header makes it \(sealed.totalBytes) (truncated or altered)")
            }
            var payload: [UInt8] = []
            payload.reserveCapacity(Int(sealed.length))
            for index in 0..<sealed.count {
                let range = sealed.chunkRange(index)
                payload += try sealed.open(chunk: index, bytes[Int(range.lowerBound)..<Int(range.upperBound)])
            }
            return payload
        }
        guard bytes.count >= 4 + 3 + 32 else { throw damaged("it does not start as a StateJournal replica object") }
        guard bytes[5] <= 1 else {
            throw damaged("its header gives flags \(bytes[5]), which no shipper writes (0: plain, 1: encrypted)")
        }
        let body = bytes[..<(bytes.count - 32)]
        guard Array(SHA256.hash(data: body)) == Array(bytes[(bytes.count - 32)...]) else {
            throw damaged("its SHA-256 does not match its bytes (truncated or altered)")
        }
        let encrypted = bytes[5] == 1
        let idLength = Int(bytes[6])
        guard body.count >= 7 + idLength else { throw damaged("its header is cut short") }
        let header = Array(body[0..<(7 + idLength)])
        let idBytes = body[7..<(7 + idLength)]
        let payload = Array(body[(7 + idLength)...])
        guard encrypted else {
            guard keyring == nil || acceptsPlaintext else {
                throw ReplicationError(
                    .unauthenticated,
                    "The object \(shown) is not encrypted, but this replica is read with a key: every object must be sealed by it. Someone who can write the bucket may have replaced it.",
                    key: name)
            }
            return payload
        }
        let key = try SealedChunks.key(idBytes, name: name, keyring: keyring)
        do {
            let box = try AES.GCM.SealedBox(combined: payload)
            return Array(try AES.GCM.open(box, using: key.key, authenticating: header + Array(name.utf8)))
        } catch {
            throw ReplicationError(
                .wrongKey,
                "The object \(shown) could not be decrypted with key \(key.id): the key is not the one it was written with, or the object was altered.",
                key: name)
        }
    }
}

/// A version 2 envelope, its header read and checked: what is needed to open its chunks one at a
/// time, from the whole object or from ranged reads of it.
struct SealedChunks {
    static let tagBytes = 16
    /// The chunk sizes a reader accepts: 4 KiB to ``ReplicaLimits/streamingPieceBytes``.
    static let minimumChunkBytes = 4 << 10
    static let maximumChunkBytes = ReplicaLimits.streamingPieceBytes
    /// The fixed part of a header: magic, version, flags, id length; store id, chunk size,
    /// length, nonce prefix.
    static let fixedHeaderBytes = 7 + 16 + 4 + 8 + 8

    let name: String
    let key: ReplicationKey
    /// Every byte before chunk 0.
    let header: [UInt8]
    /// The replica the object was sealed for, as authenticated with every chunk: the bytes of the
    /// replica id `replica.json` names, or none for a replica whose `replica.json` names none.
    private let replicaBinding: [UInt8]
    let chunkBytes: Int64
    /// The payload's length.
    let length: Int64
    /// How many chunks there are: `max(1, ⌈length / chunkBytes⌉)`.
    let count: Int64
    private let noncePrefix: [UInt8]

    /// The object's size: header, payload and a tag per chunk.
    var totalBytes: Int64 { Int64(header.count) + length + count * Int64(Self.tagBytes) }

    /// The bytes of the object that chunk `index` (`0..<count`) takes.
    func chunkRange(_ index: Int64) -> Range<Int64> {
        let start = Int64(header.count) + index * (chunkBytes + Int64(Self.tagBytes))
        let plain = min(chunkBytes, length - index * chunkBytes)
        return start..<(start + plain + Int64(Self.tagBytes))
    }

    /// Reads the header at the start of `bytes` (which may go on past it, or be the first bytes only).
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` when it is not a version 2 header a
    ///   reader accepts or belongs to another store than `storeID`,
    ///   ``ReplicationError/Code/missingKey`` when no key of `keyring` has its key id.
    init(
        header bytes: some RandomAccessCollection<UInt8>, name: String, keyring: ReplicationKeyring?, storeID: String?,
        replicaID: String? = nil
    ) throws {
        let bytes = Array(bytes.prefix(Self.fixedHeaderBytes + 255))
        func damaged(_ reason: String) -> ReplicationError {
            ReplicationError(.damagedObject, "The object \(printable(name)) is damaged: \(reason).", key: name)
        }
        guard bytes.count >= 7, Array(bytes[0..<4]) == ObjectEnvelope.magic, bytes[4] == 2 else {
            throw damaged("it does not start as a version 2 StateJournal replica object")
        }
        guard bytes[5] == 1 else {
            throw damaged(
                "its header gives flags \(bytes[5]), which no shipper writes in version 2 (only 1: encrypted)")
        }
        let idLength = Int(bytes[6])
        let headerLength = Self.fixedHeaderBytes + idLength
        guard bytes.count >= headerLength else { throw damaged("its header is cut short") }
        key = try Self.key(bytes[7..<(7 + idLength)], name: name, keyring: keyring)
        var offset = 7 + idLength
        func integer(_ width: Int) -> UInt64 {
            defer { offset += width }
            return bytes[offset..<(offset + width)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        let sealedFor = Array(bytes[offset..<(offset + 16)])
        offset += 16
        let chunk = integer(4)
        let length = integer(8)
        noncePrefix = Array(bytes[offset..<(offset + 8)])
        guard (UInt64(Self.minimumChunkBytes)...UInt64(Self.maximumChunkBytes)).contains(chunk) else {
            throw damaged("its chunk size \(chunk) is not one a shipper writes")
        }
        guard length <= UInt64(ReplicaLimits.maximumObjectBytes) else {
            throw damaged(
                "its payload of \(length) bytes is larger than the \(ReplicaLimits.maximumObjectBytes) an object may have"
            )
        }
        if let storeID, let expected = Self.storeIDBytes(storeID), sealedFor != expected {
            throw damaged(
                "its header names the store \(sealedFor.map { String(format: "%02x", $0) }.joined()), not \(storeID), whose replica this is"
            )
        }
        self.name = name
        replicaBinding = Self.binding(replicaID)
        header = Array(bytes[0..<headerLength])
        chunkBytes = Int64(chunk)
        self.length = Int64(length)
        count = max(1, (self.length + chunkBytes - 1) / chunkBytes)
    }

    /// The plaintext of chunk `index`, authenticated, from its bytes.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` when the bytes are not the chunk's size,
    ///   ``ReplicationError/Code/wrongKey`` when they do not authenticate as chunk `index` of this
    ///   object (another key, or chunks altered, moved, repeated, dropped or cut).
    func open(chunk index: Int64, _ bytes: some RandomAccessCollection<UInt8>) throws -> [UInt8] {
        guard (0..<count).contains(index), Int64(bytes.count) == Int64(chunkRange(index).count) else {
            throw ReplicationError(
                .damagedObject, "The object \(printable(name)) is damaged: chunk \(index) of \(count) is cut short.",
                key: name)
        }
        let bytes = Array(bytes)
        do {
            let box = try AES.GCM.SealedBox(
                nonce: try Self.nonce(noncePrefix, index),
                ciphertext: bytes[..<(bytes.count - Self.tagBytes)], tag: bytes[(bytes.count - Self.tagBytes)...])
            return Array(
                try AES.GCM.open(
                    box, using: key.key,
                    authenticating: Self.additionalData(
                        header, name: name, replica: replicaBinding, index: index, final: index == count - 1)))
        } catch {
            throw ReplicationError(
                .wrongKey,
                "The object \(printable(name)) could not be decrypted with key \(key.id) (chunk \(index) of \(count)): the key is not the one it was written with, or the object was altered, cut, or put together from other chunks.",
                key: name)
        }
    }

    /// Seals `payload` in version 2 chunks; `markingFinal` false (for tests only) leaves the final
    /// flag off every chunk, as an object cut after a chunk would have it.
    static func seal(
        _ payload: [UInt8], name: String, key: ReplicationKey, storeID: String?, replicaID: String? = nil,
        chunkBytes: Int, markingFinal: Bool = true
    ) throws -> [UInt8] {
        precondition((minimumChunkBytes...maximumChunkBytes).contains(chunkBytes))
        var header = ObjectEnvelope.magic
        header += [2, 1, UInt8(key.id.utf8.count)]
        header += Array(key.id.utf8)
        header += storeID.flatMap(storeIDBytes) ?? Array(repeating: 0, count: 16)
        header += bigEndian(UInt64(chunkBytes), width: 4)
        header += bigEndian(UInt64(payload.count), width: 8)
        var random = SystemRandomNumberGenerator()
        let prefix = (0..<8).map { _ in UInt8.random(in: 0...255, using: &random) }
        header += prefix
        let count = max(1, (payload.count + chunkBytes - 1) / chunkBytes)
        var bytes = header
        bytes.reserveCapacity(header.count + payload.count + count * tagBytes)
        for index in 0..<count {
            let chunk = payload[(index * chunkBytes)..<min(payload.count, (index + 1) * chunkBytes)]
            let box = try AES.GCM.seal(
                chunk, using: key.key, nonce: try nonce(prefix, Int64(index)),
                authenticating: additionalData(
                    header, name: name, replica: binding(replicaID), index: Int64(index),
                    final: markingFinal && index == count - 1))
            bytes += box.ciphertext
            bytes += box.tag
        }
        return bytes
    }

    /// The key of `keyring` whose id is `idBytes`.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` for bytes no key id has,
    ///   ``ReplicationError/Code/missingKey`` when there is no keyring or no such key in it.
    static func key(_ idBytes: some Collection<UInt8>, name: String, keyring: ReplicationKeyring?) throws
        -> ReplicationKey
    {
        let shown = printable(name)
        guard ReplicationKey.isValidID(idBytes) else {
            throw ReplicationError(
                .damagedObject, "The object \(shown) is damaged: its key id is not one a key can have.", key: name)
        }
        let id = String(decoding: idBytes, as: UTF8.self)
        guard let keyring else {
            throw ReplicationError(
                .missingKey,
                """
                The object \(shown) says it is encrypted with key \(id); give that key to read it. (Until a key \
                opens it, the key id is only the object's claim.)
                """, key: name)
        }
        guard let key = keyring.keys[id] else {
            throw ReplicationError(
                .missingKey,
                """
                The object \(shown) says it is encrypted with key \(id), which the keyring does not have (it has \
                \(keyring.keys.keys.sorted().joined(separator: ", "))). Give that key if the replica was ever \
                written with it; if no key \(id) was ever used, the object was not written by the replica's shipper.
                """,
                key: name)
        }
        return key
    }

    private static func nonce(_ prefix: [UInt8], _ index: Int64) throws -> AES.GCM.Nonce {
        try AES.GCM.Nonce(data: prefix + bigEndian(UInt64(index), width: 4))
    }

    /// What a chunk authenticates besides its bytes: the header, the object's name, the replica
    /// it was sealed for (when `replica.json` names one), its index and whether it is the last.
    private static func additionalData(
        _ header: [UInt8], name: String, replica: [UInt8], index: Int64, final: Bool
    ) -> [UInt8] {
        let nameBytes = Array(name.utf8)
        return header + bigEndian(UInt64(nameBytes.count), width: 4) + nameBytes + replica
            + bigEndian(UInt64(index), width: 4) + [final ? 1 : 0]
    }

    /// The bytes a replica id adds to what chunks authenticate: its 16 bytes, or none.
    private static func binding(_ replicaID: String?) -> [UInt8] {
        replicaID.flatMap(storeIDBytes) ?? []
    }

    private static func bigEndian(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// The 16 bytes of a store id (32 hex digits).
    static func storeIDBytes(_ storeID: String) -> [UInt8]? {
        guard ReplicaIdentity.isStoreID(storeID) else { return nil }
        let digits = Array(storeID.utf8)
        return stride(from: 0, to: 32, by: 2).map { index in
            func value(_ digit: UInt8) -> UInt8 { digit <= 0x39 ? digit - 0x30 : digit - 0x61 + 10 }
            return value(digits[index]) << 4 | value(digits[index + 1])
        }
    }
}
