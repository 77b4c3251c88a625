import Foundation

/// The inline bytes of the generations a reader fetched last, so that the objects one generation
/// carries cost one download of it, not one each: a restore or a follower that needs several
/// objects of one carrier (a checkpoint and the live segment's last piece, or the pieces of a
/// sealed segment) fetches it once.
///
/// It holds at most ``kept`` carriers, each no larger than ``ReplicaLimits/maximumGenerationBytes``;
/// a carrier that could not be read is not kept, so the next object it carries tries again.
actor InlineCarriers {
    /// How many carriers are kept: the newest generation and the one before it are the usual ones.
    static let kept = 2

    private var entries: [(key: String, fetch: Task<ArraySlice<UInt8>, any Error>)] = []

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
