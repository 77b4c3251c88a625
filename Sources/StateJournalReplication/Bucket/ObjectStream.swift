import Crypto
import Foundation

/// Fetches a large object in ranged pieces, several at once (``PieceWindow``), and writes its
/// payload to a file as the pieces come, in order, checking it on the way, so that a restore holds a
/// bounded window of it, whatever size the generation declares: a plaintext envelope by its SHA-256
/// and the payload's, a version 2 (chunked) encrypted envelope chunk by chunk, each authenticated
/// before it is written.
///
/// Only an encrypted object of envelope version 1 (written before version 2) is fetched whole:
/// AES-GCM authenticates it as one (its size is then sealed by the key, in the generation that
/// names it).
struct ObjectStream {
    let replica: Replica
    let object: ReplicaGeneration.Object

    /// What became of the object.
    enum Outcome {
        /// The payload was written to the file and checked.
        case written(Int64)
        /// The object is encrypted: its payload, fetched whole and checked.
        case sealed([UInt8])
    }

    /// Fetches the object and writes its payload to `file` at its offset.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` when the object is missing, shorter, or
    ///   differs from what its envelope and its generation say; ``ReplicationError/Code/unauthenticated``
    ///   for a plaintext object read with a key; the client's errors; `write`'s errors.
    func run(writing write: ([UInt8], Int64) throws -> Void) async throws -> Outcome {
        let key = replica.fullKey(object.key)
        let size = object.end - object.start
        let piece = Int64(ReplicaLimits.streamingPieceBytes)
        // The header first: enough to tell the envelope's version and to read a version 2 header.
        let headBytes = Int64(SealedChunks.fixedHeaderBytes + 255)
        guard
            let first = try await range(0..<min(headBytes, Int64(ObjectEnvelope.maximumBytes(payload: Int(size)))))
        else {
            throw ReplicationError(.damagedObject, "The object \(printable(object.key)) is missing.", key: key)
        }
        guard first.count >= 7, Array(first[0..<4]) == ObjectEnvelope.magic, first[4] == 1 || first[4] == 2 else {
            throw damaged("it does not start as a StateJournal replica object")
        }
        if first[4] == 2 {
            return .written(try await chunks(header: first, writing: write))
        }
        if first[5] & 1 != 0 {
            return .sealed(try await ReplicaRestorer.fetch(object, from: replica))
        }
        guard replica.keyring == nil else {
            throw ReplicationError(
                .unauthenticated,
                "The object \(printable(object.key)) is not encrypted, but this replica is read with a key: every object must be sealed by it. Someone who can write the bucket may have replaced it.",
                key: key)
        }
        let header = 7 + Int64(first[6])
        let total = header + size + 32
        var envelopeHash = SHA256()
        var payloadHash = SHA256()
        var trailer: [UInt8] = []
        // Takes the bytes `offset..<offset + bytes.count` of the object (header, payload, trailer),
        // in order: the hashes are fed in the order of the bytes.
        func take(_ bytes: [UInt8], at offset: Int64) throws {
            let end = offset + Int64(bytes.count)
            let bodyEnd = min(end, total - 32)
            if bodyEnd > offset {
                let body = bytes[0..<Int(bodyEnd - offset)]
                envelopeHash.update(data: body)
                let payloadStart = max(offset, header)
                if bodyEnd > payloadStart {
                    let payload = Array(body[Int(payloadStart - offset)...])
                    payloadHash.update(data: payload)
                    try write(payload, object.start + payloadStart - header)
                }
            }
            if end > total - 32 {
                trailer += bytes[Int(max(offset, total - 32) - offset)..<Int(min(end, total) - offset)]
            }
        }
        try take(first, at: 0)
        // The rest in pieces, several fetched at once, taken in order.
        let rest = stride(from: min(Int64(first.count), total), to: total, by: Int(piece)).map {
            $0..<min($0 + piece, total)
        }
        let stream = self
        try await PieceWindow.fetch(
            rest,
            with: { range in
                guard let bytes = try await stream.range(range), !bytes.isEmpty else {
                    throw stream.damaged("it is shorter than its generation says")
                }
                return bytes
            },
            inOrder: { range, bytes in try take(bytes, at: range.lowerBound) })
        guard trailer == Array(envelopeHash.finalize()) else {
            throw damaged("its SHA-256 does not match its bytes (truncated or altered)")
        }
        guard SignatureV4.hex(payloadHash.finalize()) == object.sha256 else {
            throw ReplicationError(
                .damagedObject,
                "The object \(printable(object.key)) does not hold the bytes its generation recorded (SHA-256 or length differs).",
                key: key)
        }
        return .written(size)
    }

    /// Reads a version 2 envelope in groups of chunks (about a piece each), several fetched at once,
    /// writing each chunk's plaintext in order once it is authenticated; returns the payload's length.
    private func chunks(header: [UInt8], writing write: ([UInt8], Int64) throws -> Void) async throws -> Int64 {
        let size = object.end - object.start
        let sealed = try SealedChunks(
            header: header, name: object.key, keyring: replica.keyring, storeID: replica.storeID,
            replicaID: replica.replicaID)
        guard sealed.length == size else {
            throw damaged("its header says it holds \(sealed.length) bytes, its generation \(size)")
        }
        let perGroup = max(1, Int64(ReplicaLimits.streamingPieceBytes) / (sealed.chunkBytes + 16))
        var payloadHash = SHA256()
        // Groups of chunks, several fetched at once, each opened in order as its turn comes.
        let groups = stride(from: Int64(0), to: sealed.count, by: Int(perGroup)).map { index in
            index..<min(sealed.count, index + perGroup)
        }
        let spans = groups.map {
            sealed.chunkRange($0.lowerBound).lowerBound..<sealed.chunkRange($0.upperBound - 1).upperBound
        }
        let stream = self
        var nextGroup = 0
        try await PieceWindow.fetch(
            spans,
            with: { span in
                guard let bytes = try await stream.range(span), Int64(bytes.count) == Int64(span.count) else {
                    throw stream.damaged("it is shorter than its header says")
                }
                return bytes
            },
            inOrder: { span, bytes in
                for chunk in groups[nextGroup] {
                    let bounds = sealed.chunkRange(chunk)
                    let plain = try sealed.open(
                        chunk: chunk,
                        bytes[Int(bounds.lowerBound - span.lowerBound)..<Int(bounds.upperBound - span.lowerBound)])
                    payloadHash.update(data: plain)
                    try write(plain, object.start + chunk * sealed.chunkBytes)
                }
                nextGroup += 1
            })
        // Nothing may follow the final chunk.
        let total = sealed.totalBytes
        let after = try await replica.client.get(
            bucket: replica.location.bucket, key: replica.fullKey(object.key), range: total..<(total + 1),
            maximumBytes: 64 << 10)
        guard after?.isEmpty ?? false else { throw damaged("it goes on after its final chunk") }
        guard SignatureV4.hex(payloadHash.finalize()) == object.sha256 else {
            throw ReplicationError(
                .damagedObject,
                "The object \(printable(object.key)) does not hold the bytes its generation recorded (SHA-256 or length differs).",
                key: replica.fullKey(object.key))
        }
        return size
    }

    private func range(_ range: Range<Int64>) async throws -> [UInt8]? {
        guard
            let bytes = try await replica.client.get(
                bucket: replica.location.bucket, key: replica.fullKey(object.key), range: range,
                maximumBytes: range.count)
        else { return nil }
        guard Int64(bytes.count) == Int64(range.count) || range.lowerBound == 0 else {
            throw damaged("it is shorter than its generation says")
        }
        return bytes
    }

    private func damaged(_ reason: String) -> ReplicationError {
        ReplicationError(
            .damagedObject, "The object \(printable(object.key)) is damaged: \(reason).",
            key: replica.fullKey(object.key))
    }
}
