/// Fetches the ranged pieces of one object several at a time and hands them over in order.
///
/// At most ``ReplicaLimits/streamingPiecesInFlight`` pieces are requested or held at once, and
/// their sizes add up to at most ``ReplicaLimits/fetchWindowBytes`` (one piece is always let in), so
/// memory stays bounded whatever the object's size. A piece that arrives before the ones ahead of it
/// waits in the window; `use` sees every piece in the order of `ranges`, so that a hash fed there is
/// fed in order. A piece whose request failed fails the whole only when its turn comes: the error
/// seen is the one of the first piece in order that failed, as when the pieces were fetched one
/// after another. When `use` or a piece throws, or the task is cancelled, the requests still in
/// flight are cancelled (each ends at once, as a cancelled request of ``S3Client`` does).
enum PieceWindow {
    /// Fetches each of `ranges` with `get`, several at once, and passes its bytes to `use` in order.
    static func fetch(
        _ ranges: [Range<Int64>],
        with get: @escaping @Sendable (Range<Int64>) async throws -> [UInt8],
        inOrder use: (Range<Int64>, [UInt8]) throws -> Void
    ) async throws {
        // Pieces `used..<launched` are in the window: requested, or arrived and waiting. A piece's
        // task is dropped once it is used, and its bytes with it.
        var tasks: [Int: Task<[UInt8], any Error>] = [:]
        var launched = 0
        var used = 0
        var windowBytes: Int64 = 0
        defer { for task in tasks.values { task.cancel() } }
        while used < ranges.count {
            while launched < ranges.count, launched - used < ReplicaLimits.streamingPiecesInFlight,
                launched == used
                    || windowBytes + Int64(ranges[launched].count) <= ReplicaLimits.fetchWindowBytes
            {
                let range = ranges[launched]
                tasks[launched] = Task { try await get(range) }
                windowBytes += Int64(range.count)
                launched += 1
            }
            // Piece `used` was launched: the window always lets one in.
            let task = tasks.removeValue(forKey: used)!
            let bytes = try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
            try Task.checkCancellation()
            try use(ranges[used], bytes)
            windowBytes -= Int64(ranges[used].count)
            used += 1
        }
    }
}
