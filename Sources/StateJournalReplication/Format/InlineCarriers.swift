import Foundation

/// The inline bytes of the generations a reader fetched last, so that the objects one generation
/// carries cost one download of it, not one each: a restore or a follower that needs several
/// objects of one carrier (a checkpoint and the live segment's last piece, or the pieces of a
/// sealed segment) fetches it once.
///
/// It holds at most ``kept`` carriers, each no larger than ``ReplicaLimits/maximumGenerationBytes``;
/// a carrier that could not be read is not kept, so the next object it carries tries again.
///
/// Keeping carriers does not by itself bound what a reader fetches: pieces of three carriers named
/// in turn (2, 3, 4, 2, 3, 4, …) would find the two kept ones the wrong ones every time. Readers
/// ask for a generation's carried pieces through ``CarrierPass``, which asks for each carrier once.
actor InlineCarriers {
    /// How many carriers are kept: the newest generation and the one before it are the usual ones.
    static let kept = 2

    private var entries: [(key: String, fetch: Task<ArraySlice<UInt8>, any Error>)] = []

    /// The keys of the carriers kept (or being fetched), oldest first.
    var keys: [String] { entries.map(\.key) }

    /// Keeps the inline bytes of the generation object `key`, read by the caller with its document.
    func keep(_ inline: ArraySlice<UInt8>, of key: String) {
        entries.removeAll { $0.key == key }
        entries.append((key, Task { inline }))
        if entries.count > Self.kept { entries.removeFirst() }
    }

    /// The inline bytes of the generation object `key`, fetched by `fetch` unless they are kept
    /// already (or being fetched for another object).
    func inline(
        of key: String, fetch: @escaping @Sendable () async throws -> ArraySlice<UInt8>
    ) async throws -> ArraySlice<UInt8> {
        let task: Task<ArraySlice<UInt8>, any Error>
        if let entry = entries.first(where: { $0.key == key }) {
            task = entry.fetch
        } else {
            task = Task { try await fetch() }
            entries.append((key, task))
            if entries.count > Self.kept { entries.removeFirst() }
        }
        do {
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        } catch {
            entries.removeAll { $0.key == key }
            throw error
        }
    }
}

/// Writes the pieces of files that generations carry inline where they belong, one carrier at a
/// time, so that what reading them costs depends on the carriers a generation names, not on how
/// many pieces it names or in which order: pieces of three carriers named 2, 3, 4, 2, 3, 4, … cost
/// three downloads, not one a piece (an ``InlineCarriers`` that keeps two carriers would fetch each
/// again for every piece).
///
/// The pieces are grouped by carrier, the carriers taken in the order each is first named, those
/// the replica keeps already first. Each carrier is fetched once, through the replica's
/// ``InlineCarriers`` (so a carrier fetched just before, for a piece a follower fetched on its own,
/// is not fetched again); each of its pieces is checked against the SHA-256 its generation
/// recorded and handed to the caller's `write` with the offset it has in its file (a positional
/// write: the pieces of a file arrive out of order); then the carrier is let go before the next is
/// fetched.
///
/// The bound: a pass sends at most one request per distinct carrier it names (retries aside), each
/// read no further than ``ReplicaLimits/maximumGenerationBytes`` (8 MiB), and holds at most the
/// ``InlineCarriers/kept`` carriers the replica keeps (the one in use among them) and one piece (a
/// copy of part of it, checked and written before the next is taken). A carrier is a generation of
/// the replica (this one or an earlier one), so what a pass downloads is at most what those
/// generations weigh, once each: its time and memory do not grow with the number of pieces or
/// their order, beyond checking and writing the bytes they hold.
enum CarrierPass {
    /// What became of one piece: the length of its payload once written, or the error that kept it
    /// from being written (its carrier missing, damaged, not sealed by the key, or not holding the
    /// bytes recorded). A caller that writes its files in order raises the error where the piece's
    /// turn comes, as if it had fetched the piece then.
    typealias Outcome = Result<Int64, any Error>

    /// Fetches the carriers of `pieces` once each and hands every piece's checked payload to
    /// `write` with the piece's index in `pieces`; returns each piece's outcome, in the order of
    /// `pieces`. `done` is called after the last piece of each carrier (to close what `write`
    /// opened).
    ///
    /// Errors of a carrier become the outcomes of its pieces; a cancellation, and what `write`
    /// throws (the local disk), are thrown at once.
    static func run(
        _ pieces: [ReplicaGeneration.Object], from replica: Replica, write: (Int, [UInt8]) throws -> Void,
        done: () throws -> Void = {}
    ) async throws -> [Outcome] {
        var outcomes = [Outcome?](repeating: nil, count: pieces.count)
        var order: [String] = []
        var byCarrier: [String: [Int]] = [:]
        for (index, piece) in pieces.enumerated() where piece.isInline {
            if byCarrier[piece.key] == nil { order.append(piece.key) }
            byCarrier[piece.key, default: []].append(index)
        }
        // Carriers kept already first (one a follower fetched for a piece that straddles the end
        // of its local file), before fetching others pushes them out.
        let kept = Set(await replica.carriers.keys)
        order = order.filter(kept.contains) + order.filter { !kept.contains($0) }
        for key in order {
            guard !Task.isCancelled else { throw ReplicationError(.cancelled, "The restore was cancelled.") }
            let indices = byCarrier[key] ?? []
            let inline: ArraySlice<UInt8>
            do {
                inline = try await replica.carriers.inline(of: key) {
                    try await ReplicaRestorer.carriedBytes(of: key, from: replica)
                }
            } catch {
                if isCancellation(error) { throw error }
                for index in indices { outcomes[index] = .failure(error) }
                continue
            }
            for index in indices {
                let payload: [UInt8]
                do {
                    payload = try self.payload(of: pieces[index], in: inline, from: replica)
                } catch {
                    outcomes[index] = .failure(error)
                    continue
                }
                try write(index, payload)
                outcomes[index] = .success(Int64(payload.count))
            }
            try done()
        }
        return outcomes.map {
            $0 ?? .failure(ReplicationError(.damagedObject, "The piece is carried by no generation."))
        }
    }

    /// The bytes `object` names among a carrier's inline bytes, checked against what the
    /// generation naming them recorded.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` when they lie beyond the carrier's inline
    ///   bytes or differ.
    static func payload(of object: ReplicaGeneration.Object, in inline: ArraySlice<UInt8>, from replica: Replica)
        throws -> [UInt8]
    {
        let key = replica.fullKey(object.key)
        let offset = object.offset ?? 0
        let size = object.end - object.start
        // Validation bounds offset and size by the largest generation: the sum cannot overflow.
        guard offset + size <= Int64(inline.count) else {
            throw ReplicationError(
                .damagedObject,
                "The generation \(printable(object.key)) carries \(inline.count) bytes inline, not the \(offset)..<\(offset + size) a generation names.",
                key: key)
        }
        let start = inline.startIndex + Int(offset)
        let bytes = Array(inline[start..<(start + Int(size))])
        guard ReplicaLayout.sha256Hex(bytes) == object.sha256 else {
            throw ReplicationError(
                .damagedObject,
                "The generation \(printable(object.key)) does not carry the bytes a generation recorded at \(offset) (SHA-256 differs).",
                key: key)
        }
        return bytes
    }

    private static func isCancellation(_ error: any Error) -> Bool {
        error is CancellationError || (error as? ReplicationError)?.code == .cancelled || Task.isCancelled
    }
}
