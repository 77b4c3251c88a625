import Foundation
import StateJournal

/// A replica's objects in a bucket: reading and writing them through the envelope, and the
/// identity check that keeps two stores out of one prefix.
struct Replica: Sendable {
    let client: S3Client
    let location: S3Location
    let keyring: ReplicationKeyring?
    /// The store the replica belongs to, once known: encrypted objects are sealed for it, and an
    /// encrypted object read must have been sealed for it.
    var storeID: String?
    /// The replica's own id, when its `replica.json` names one: encrypted objects are sealed for it,
    /// and an encrypted object read must have been sealed for it, so that objects of another replica
    /// of the same store under the same key cannot be moved in.
    var replicaID: String?
    /// The size of the chunks encrypted objects are sealed in.
    var sealedChunkBytes = ReplicaLimits.sealedChunkBytes
    /// The generations whose inline bytes were fetched last, shared by every copy of this replica.
    let carriers = InlineCarriers()

    /// This replica, known to belong to `storeID`.
    func bound(to storeID: String) -> Replica {
        var bound = self
        bound.storeID = storeID
        return bound
    }

    /// This replica, known by its identity: its store and its own id.
    func bound(to identity: ReplicaIdentity) -> Replica {
        var bound = self.bound(to: identity.storeID)
        bound.replicaID = identity.replicaID
        return bound
    }

    func fullKey(_ name: String) -> String { location.prefix + name }

    /// Writes an object's payload, sealed; with `createOnly`, an existing object is left as it is.
    @discardableResult
    func put(
        _ name: String, payload: [UInt8], createOnly: Bool, encrypted: Bool = true,
        while mayAttempt: (@Sendable () async -> Bool)? = nil
    ) async throws -> S3PutOutcome {
        let bytes = try ObjectEnvelope.seal(
            payload, name: name, keyring: encrypted ? keyring : nil, storeID: storeID, replicaID: replicaID,
            chunkBytes: sealedChunkBytes)
        if bytes.count > S3Client.multipartPartSize && !createOnly {
            try await client.putMultipart(bucket: location.bucket, key: fullKey(name), body: bytes)
            return .created
        }
        return try await client.put(
            bucket: location.bucket, key: fullKey(name), body: bytes, createOnly: createOnly, while: mayAttempt)
    }

    /// An object's payload, checked and decrypted; `nil` when it is not there.
    ///
    /// No more than `maximumPayload` bytes of payload (and an envelope) are asked for: the request
    /// names that range, so a larger object is never sent past it, however many readers fetch it at
    /// once. With a keyring, only objects it sealed are accepted, unless `acceptsPlaintext`.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` when the object is larger or damaged, the
    ///   envelope's key errors, or the client's.
    func get(_ name: String, maximumPayload: Int, acceptsPlaintext: Bool = false) async throws -> [UInt8]? {
        try await getWithAge(name, maximumPayload: maximumPayload, acceptsPlaintext: acceptsPlaintext)?.payload
    }

    /// An object's payload as ``get(_:maximumPayload:acceptsPlaintext:)`` reads it, with its age by
    /// the server's clock (``S3Client/getWithAge(bucket:key:maximumBytes:)``).
    func getWithAge(_ name: String, maximumPayload: Int, acceptsPlaintext: Bool = false) async throws -> (
        payload: [UInt8], age: Int64?
    )? {
        let most = ObjectEnvelope.maximumBytes(payload: maximumPayload)
        guard
            let found = try await client.getWithAge(bucket: location.bucket, key: fullKey(name), maximumBytes: most + 1)
        else { return nil }
        guard found.body.count <= most else {
            throw ReplicationError(
                .damagedObject,
                "\(location.bucket)/\(printable(fullKey(name))) is larger than the \(most) bytes it may have; it was not read past them.",
                key: fullKey(name))
        }
        return (try open(found.body, name: name, acceptsPlaintext: acceptsPlaintext), found.age)
    }

    /// An object's payload as ``get(_:maximumPayload:acceptsPlaintext:)`` reads it, with its ETag
    /// (for a conditional write over it); `nil` when it is not there.
    func getWithETag(_ name: String, maximumPayload: Int, acceptsPlaintext: Bool = false) async throws
        -> (payload: [UInt8], etag: String)?
    {
        guard
            let found = try await client.getWithETag(
                bucket: location.bucket, key: fullKey(name),
                maximumBytes: ObjectEnvelope.maximumBytes(payload: maximumPayload))
        else { return nil }
        return (try open(found.body, name: name, acceptsPlaintext: acceptsPlaintext), found.etag)
    }

    /// Writes an object's payload, sealed (in the clear unless `encrypted`), only if it is still as
    /// seen (`etag`), or, without one, only if there is none; the new ETag, or `nil` when the
    /// condition failed and nothing was written.
    func put(_ name: String, payload: [UInt8], ifMatching etag: String?, encrypted: Bool = true) async throws
        -> String?
    {
        let bytes = try ObjectEnvelope.seal(
            payload, name: name, keyring: encrypted ? keyring : nil, storeID: storeID, replicaID: replicaID,
            chunkBytes: sealedChunkBytes)
        return try await client.put(bucket: location.bucket, key: fullKey(name), body: bytes, ifMatching: etag)
    }

    /// Opens an object's envelope as this replica's.
    func open(_ bytes: [UInt8], name: String, acceptsPlaintext: Bool = false) throws -> [UInt8] {
        try ObjectEnvelope.open(
            bytes, name: name, keyring: keyring, acceptsPlaintext: acceptsPlaintext, storeID: storeID,
            replicaID: replicaID)
    }

    func delete(_ name: String) async throws {
        try await client.delete(bucket: location.bucket, key: fullKey(name))
    }

    /// Deletes the objects named (under the prefix) in as few requests as the server allows, and
    /// returns the names it could not delete.
    func delete(_ names: [String]) async throws -> Set<String> {
        guard !names.isEmpty else { return [] }
        let failed = try await client.delete(bucket: location.bucket, keys: names.map(fullKey))
        return Set(failed.map { String($0.key.dropFirst(location.prefix.count)) })
    }

    /// The names (under the prefix) of the objects whose names start with `folder`.
    func list(_ folder: String = "") async throws -> [S3Object] {
        try await client.list(bucket: location.bucket, prefix: fullKey(folder)).map {
            S3Object(key: String($0.key.dropFirst(location.prefix.count)), size: $0.size)
        }
    }

    /// The store id the prefix replicates, or `nil` when the prefix holds no replica.
    ///
    /// - Throws: ``ReplicationError/Code/foreignPrefix`` when it holds other objects.
    func identity() async throws -> ReplicaIdentity? {
        // The identity is written in the clear, so that every shipper of the store can read it; a
        // key-holding reader trusts it only as far as the sealed generations agree with it.
        guard
            let payload = try await get(
                ReplicaLayout.identity, maximumPayload: ReplicaLimits.maximumIdentityBytes, acceptsPlaintext: true)
        else {
            let present = try await client.listFirstPage(
                bucket: location.bucket, prefix: location.prefix, maximumKeys: 10)
            if let other = present.first {
                throw ReplicationError(
                    .foreignPrefix,
                    "\(location) holds objects that are not a StateJournal replica (such as \(printable(other.key))); choose an empty prefix.",
                    key: other.key)
            }
            return nil
        }
        guard let identity = try? JSONDecoder().decode(ReplicaIdentity.self, from: Data(payload)),
            identity.format == "statejournal-replica", ReplicaIdentity.isStoreID(identity.storeID),
            identity.replicaID.map(ReplicaIdentity.isStoreID) ?? true
        else {
            throw ReplicationError(
                .foreignPrefix, "\(location)\(ReplicaLayout.identity) is not a StateJournal replica's identity.",
                key: fullKey(ReplicaLayout.identity))
        }
        guard ReplicaLayout.readableIdentityVersions.contains(identity.version) else {
            throw ReplicationError(
                .damagedObject,
                """
                \(location) is a replica of layout version \(identity.version), which this StateJournal does not \
                read (it reads versions \(ReplicaLayout.readableIdentityVersions.lowerBound) to \
                \(ReplicaLayout.readableIdentityVersions.upperBound)): a later release wrote it, or the bucket was \
                tampered with. Use the release that shipped it.
                """,
                key: fullKey(ReplicaLayout.identity))
        }
        return identity
    }

    /// Raises the identity of a replica of an earlier layout to this library's, before a shipper
    /// writes a generation of this layout, so that releases which cannot read such generations
    /// refuse the replica naming its layout, instead of taking its newest generations for damage.
    /// Only the version changes, and only if `replica.json` is still what was read.
    private func upgrade(_ identity: ReplicaIdentity) async throws -> ReplicaIdentity? {
        let name = ReplicaLayout.identity
        guard
            let found = try await getWithETag(
                name, maximumPayload: ReplicaLimits.maximumIdentityBytes, acceptsPlaintext: true),
            let current = try? JSONDecoder().decode(ReplicaIdentity.self, from: Data(found.payload)),
            current == identity
        else { return nil }
        var upgraded = identity
        upgraded.version = ReplicaLayout.identityVersion
        let payload = Array(try JSONEncoder().encode(upgraded))
        guard try await put(name, payload: payload, ifMatching: found.etag, encrypted: false) != nil else { return nil }
        return upgraded
    }

    /// Makes the prefix the replica of `storeID`, with an id of its own, or checks that it is;
    /// returns its identity.
    ///
    /// - Throws: ``ReplicationError/Code/otherStore`` when it replicates another store,
    ///   ``ReplicationError/Code/foreignPrefix`` when it holds something else.
    @discardableResult
    func claim(storeID: String) async throws -> ReplicaIdentity {
        for _ in 0..<2 {
            if let identity = try await identity() {
                guard identity.storeID == storeID else {
                    throw ReplicationError(
                        .otherStore,
                        "\(location) is the replica of another store (\(identity.storeID)); this store is \(storeID). Ship each store to its own prefix.",
                        key: fullKey(ReplicaLayout.identity))
                }
                guard identity.version < ReplicaLayout.identityVersion else { return identity }
                // Changed in between (another shipper upgraded it): read again.
                if let upgraded = try await upgrade(identity) { return upgraded }
                continue
            }
            let created = ReplicaIdentity(
                storeID: storeID, encrypted: keyring != nil, replicaID: ReplicaIdentity.newID())
            let payload = Array(try JSONEncoder().encode(created))
            if try await put(ReplicaLayout.identity, payload: payload, createOnly: true, encrypted: false) == .created {
                return created
            }
        }
        throw ReplicationError(
            .unexpectedResponse,
            "\(location)\(ReplicaLayout.identity) could be neither created nor read; try again.",
            key: fullKey(ReplicaLayout.identity))
    }

    /// The newest generation number after `known` that is in the bucket, asked for one at a time
    /// with `HEAD` (at most 16): a holder writing generations renews its lease by them, so whoever
    /// waits for the lease watches them. A failed request ends the search.
    func newestGeneration(after known: UInt64) async -> UInt64 {
        var newest = known
        for _ in 0..<16 {
            let next = newest + 1
            guard next <= ReplicaLimits.maximumCounter,
                (try? await client.etag(bucket: location.bucket, key: fullKey(ReplicaLayout.generation(next)))) != nil
            else { break }
            newest = next
        }
        return newest
    }

    /// The generation numbers present, oldest first.
    func generationNumbers() async throws -> [UInt64] {
        try await list(ReplicaLayout.generationsFolder).compactMap { ReplicaLayout.generationNumber($0.key) }.sorted()
    }

    /// Generation `number` as ``linkedGeneration(_:of:)`` reads it, for a follower that applies it
    /// next: with its age by the server's clock (how long before the response it was written,
    /// whole seconds), and with the bytes it carries inline kept (``carriers``), so that applying
    /// it does not download it again.
    func followedGeneration(_ number: UInt64, of storeID: String) async throws -> (
        generation: ReplicaGeneration, sha256: String, age: Int64?
    )? {
        let name = ReplicaLayout.generation(number)
        guard
            let found = try await bound(to: storeID).getWithAge(
                name, maximumPayload: ReplicaLimits.maximumGenerationBytes)
        else { return nil }
        let (document, inline) = try GenerationContainer.open(found.payload, key: fullKey(name))
        let generation = try document.validated(number: number, storeID: storeID, key: fullKey(name))
        if !inline.isEmpty { await carriers.keep(inline, of: name) }
        return (generation, ReplicaLayout.sha256Hex(found.payload), found.age)
    }

    /// Generation `number` of the replica of `storeID`, checked with
    /// ``ReplicaGeneration/validated(number:storeID:key:)``; `nil` when it is not there.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` when it is damaged, too large, or not a
    ///   valid generation of that store, the envelope's key errors, or the client's.
    func generation(_ number: UInt64, of storeID: String) async throws -> ReplicaGeneration? {
        try await linkedGeneration(number, of: storeID)?.generation
    }

    /// Generation `number` as ``generation(_:of:)`` reads it, with the SHA-256 of its payload (hex):
    /// what a generation that builds on it names (``ReplicaGeneration/Link``).
    func linkedGeneration(_ number: UInt64, of storeID: String) async throws -> (
        generation: ReplicaGeneration, sha256: String
    )? {
        let name = ReplicaLayout.generation(number)
        guard
            let payload = try await bound(to: storeID).get(name, maximumPayload: ReplicaLimits.maximumGenerationBytes)
        else {
            return nil
        }
        let generation = try ReplicaGeneration.decode(payload, key: fullKey(name))
            .validated(number: number, storeID: storeID, key: fullKey(name))
        return (generation, ReplicaLayout.sha256Hex(payload))
    }
}
