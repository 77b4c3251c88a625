import Foundation

/// A clock whose time moves only when a test advances it: what a coalescing delay, a timer or a
/// timeout sleeps on in tests, so that how fast a loaded machine runs cannot change what happens.
///
/// A sleeper wakes when ``advance(by:)`` reaches its deadline, in order of deadlines; a sleeper
/// whose task is cancelled throws `CancellationError` at once. ``sleeperCount`` tells a test that
/// the code under test has started waiting, so that the test advances the clock only then.
package final class ManualClock: Clock, @unchecked Sendable {
    // @unchecked Sendable: the time and the sleepers are only touched with the lock of `state` held.

    /// A point in the clock's time: how far it is from the clock's start.
    package struct Instant: InstantProtocol {
        /// The time since the clock's start.
        package var offset: Duration

        /// The instant `offset` after the clock's start.
        package init(offset: Duration) { self.offset = offset }

        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }

        package func duration(to other: Instant) -> Duration { other.offset - offset }

        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    /// A clock at its start, with no sleeper.
    package init() {}

    package var now: Instant { state.withLock { $0.now } }

    package var minimumResolution: Duration { .zero }

    /// How many tasks sleep on the clock now.
    package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Waits until the clock reaches `deadline`, or returns at once when it has.
    ///
    /// - Throws: `CancellationError` when the task is cancelled before the clock reaches `deadline`.
    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checked under the lock: a cancellation handler that ran before the sleeper was
                // added found nothing to wake, and the task's cancelled flag was set before it ran.
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                state.sleepers.firstIndex { $0.id == id }.map { state.sleepers.remove(at: $0) }
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on by `duration` and wakes every sleeper whose deadline it reaches, earliest
    /// first.
    package func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
