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

/// The bytes of every object of a replica: a header, the payload (plain or AES-GCM encrypted),
/// and a SHA-256 of everything before it.
///
/// ```
/// magic "SJRO" | version u8 (1) | flags u8 (bit 0: encrypted) | key id length u8 | key id |
/// payload: plain bytes, or nonce (12) + ciphertext + tag (16), authenticated with the header and
///          the object's key name | SHA-256 of every byte before it (32)
/// ```
enum ObjectEnvelope {
    static let magic: [UInt8] = Array("SJRO".utf8)

    static func seal(_ payload: [UInt8], name: String, keyring: ReplicationKeyring?) throws -> [UInt8] {
        var bytes = magic
        bytes.append(1)
        if let key = keyring?.current {
            bytes.append(1)
            bytes.append(UInt8(key.id.utf8.count))
            bytes += Array(key.id.utf8)
            let box = try AES.GCM.seal(payload, using: key.key, authenticating: bytes + Array(name.utf8))
            bytes += Array(box.combined!)
        } else {
            bytes += [0, 0]
            bytes += payload
        }
        bytes += Array(SHA256.hash(data: bytes))
        return bytes
    }

    /// The payload of an object, checked and decrypted.
    ///
    /// With a keyring, the key decides: an object that is not encrypted is refused unless
    /// `acceptsPlaintext` (only `replica.json`, which every shipper must read, is written in the
    /// clear), so that whoever can write the bucket cannot slip in objects the key did not seal.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject``, ``ReplicationError/Code/unauthenticated``,
    ///   ``ReplicationError/Code/missingKey`` or ``ReplicationError/Code/wrongKey``.
    static func open(_ bytes: [UInt8], name: String, keyring: ReplicationKeyring?, acceptsPlaintext: Bool = false)
        throws -> [UInt8]
    {
        let shown = printable(name)
        func damaged(_ reason: String) -> ReplicationError {
            ReplicationError(.damagedObject, "The object \(shown) is damaged: \(reason).", key: name)
        }
        guard bytes.count >= 4 + 3 + 32, Array(bytes[0..<4]) == magic else {
            throw damaged("it does not start as a StateJournal replica object")
        }
        let body = bytes[..<(bytes.count - 32)]
        guard Array(SHA256.hash(data: body)) == Array(bytes[(bytes.count - 32)...]) else {
            throw damaged("its SHA-256 does not match its bytes (truncated or altered)")
        }
        guard bytes[4] == 1 else { throw damaged("it has an unknown envelope version \(bytes[4])") }
        let encrypted = bytes[5] & 1 != 0
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
        guard ReplicationKey.isValidID(idBytes) else { throw damaged("its key id is not one a key can have") }
        let id = String(decoding: idBytes, as: UTF8.self)
        guard let keyring else {
            throw ReplicationError(
                .missingKey, "The object \(shown) is encrypted with key \(id); give that key to read it.", key: name)
        }
        guard let key = keyring.keys[id] else {
            throw ReplicationError(
                .missingKey,
                "The object \(shown) is encrypted with key \(id), which the keyring does not have (it has \(keyring.keys.keys.sorted().joined(separator: ", "))).",
                key: name)
        }
        do {
            let box = try AES.GCM.SealedBox(combined: payload)
            return Array(try AES.GCM.open(box, using: key.key, authenticating: header + Array(name.utf8)))
        } catch {
            throw ReplicationError(
                .wrongKey,
                "The object \(shown) could not be decrypted with key \(id): the key is not the one it was written with, or the object was altered.",
                key: name)
        }
    }
}
