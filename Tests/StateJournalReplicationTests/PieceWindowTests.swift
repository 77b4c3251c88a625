import Foundation
import Testing

@testable import StateJournalReplication

/// The window a restore fetches the pieces of a large object through: several at once, bounded,
/// handed over in order.
@Suite struct PieceWindowTests {
    /// Requests that wait until a test lets them answer, counting how many are in flight.
    actor Requests {
        private(set) var inFlight = 0
        private(set) var mostInFlight = 0
        private(set) var started: [Int64] = []
        private var waiting: [Int64: CheckedContinuation<Void, Never>] = [:]
        private var released: Set<Int64> = []

        /// Called by a request: returns once the test releases the piece that starts at `start`.
        func arrive(_ start: Int64) async {
            inFlight += 1
            mostInFlight = max(mostInFlight, inFlight)
            started.append(start)
            if !released.contains(start) {
                await withCheckedContinuation { waiting[start] = $0 }
            }
            inFlight -= 1
        }

        func release(_ start: Int64) {
            released.insert(start)
            waiting.removeValue(forKey: start)?.resume()
        }

        func releaseAll() {
            for (start, continuation) in waiting {
                released.insert(start)
                continuation.resume()
            }
            waiting = [:]
        }
    }

    static func ranges(_ count: Int, size: Int64) -> [Range<Int64>] {
        (0..<Int64(count)).map { ($0 * size)..<(($0 + 1) * size) }
    }

    @Test(.timeLimit(.minutes(10)))
    func fourPiecesAreRequestedAtOnceAndAPieceThatArrivesEarlyWaitsForTheOnesBeforeIt() async throws {
        let ranges = Self.ranges(10, size: 1 << 20)
        let requests = Requests()
        let fetching = Task {
            var order: [Int64] = []
            try await PieceWindow.fetch(
                ranges,
                with: { range in
                    await requests.arrive(range.lowerBound)
                    return [UInt8](repeating: UInt8(range.lowerBound >> 20), count: range.count)
                },
                inOrder: { range, bytes in
                    #expect(bytes.count == range.count)
                    #expect(bytes.first == UInt8(range.lowerBound >> 20))
                    order.append(range.lowerBound)
                })
            return order
        }
        // The first four are requested before any has answered; the fifth is not.
        while await requests.started.count < 4 { try await Task.sleep(for: .milliseconds(2)) }
        #expect(await requests.inFlight == 4)
        // The last three of the window answer first: nothing is handed over, nothing more requested.
        for start in ranges[1...3].map(\.lowerBound).reversed() { await requests.release(start) }
        while await requests.inFlight > 1 { try await Task.sleep(for: .milliseconds(2)) }
        #expect(await requests.started.count == 4)
        // The first answers: all four are handed over in order, and the window moves on.
        await requests.release(0)
        while await requests.started.count < 8 { try await Task.sleep(for: .milliseconds(2)) }
        await requests.releaseAll()
        while await requests.started.count < 10 {
            await requests.releaseAll()
            try await Task.sleep(for: .milliseconds(2))
        }
        await requests.releaseAll()
        let order = try await fetching.value
        #expect(order == ranges.map(\.lowerBound))
        #expect(await requests.mostInFlight == ReplicaLimits.streamingPiecesInFlight)
    }

    @Test(.timeLimit(.minutes(10)))
    func theWindowHoldsNoMoreBytesThanTheFetchWindowWhateverThePieceSize() async throws {
        // Pieces of 12 MiB: only two fit in 32 MiB, though four may be in flight.
        let ranges = Self.ranges(6, size: 12 << 20)
        let requests = Requests()
        let fetching = Task {
            try await PieceWindow.fetch(
                ranges,
                with: { range in
                    await requests.arrive(range.lowerBound)
                    return [UInt8](repeating: 0, count: 1)
                },
                inOrder: { _, _ in })
        }
        while await requests.started.count < 2 { try await Task.sleep(for: .milliseconds(2)) }
        for _ in 0..<100 { try await Task.sleep(for: .milliseconds(2)) }
        #expect(await requests.started.count == 2)
        while await requests.started.count < ranges.count {
            await requests.releaseAll()
            try await Task.sleep(for: .milliseconds(2))
        }
        await requests.releaseAll()
        try await fetching.value
        #expect(await requests.mostInFlight == 2)
    }

    struct Failure: Error, Equatable {
        var piece: Int64
    }

    @Test func theErrorSeenIsTheOneOfTheFirstPieceInOrderThatFailedAndNothingAfterItIsUsed() async throws {
        let ranges = Self.ranges(8, size: 100)
        var used: [Int64] = []
        await #expect(throws: Failure(piece: 2)) {
            try await PieceWindow.fetch(
                ranges,
                with: { range in
                    // Piece 3 fails at once; piece 2 fails only after it.
                    if range.lowerBound == 300 { throw Failure(piece: 3) }
                    if range.lowerBound == 200 {
                        for _ in 0..<50 { try await Task.sleep(for: .milliseconds(2)) }
                        throw Failure(piece: 2)
                    }
                    return [UInt8](repeating: 1, count: range.count)
                },
                inOrder: { range, _ in used.append(range.lowerBound) })
        }
        #expect(used == [0, 100])
    }

    @Test(.timeLimit(.minutes(10)))
    func cancellingTheTaskCancelsThePiecesInFlight() async throws {
        let ranges = Self.ranges(8, size: 100)
        let started = Requests()
        let fetching = Task {
            try await PieceWindow.fetch(
                ranges,
                with: { range in
                    await started.arrive(-1 - range.lowerBound)
                    // A request that only a cancellation ends, as the client's does.
                    while !Task.isCancelled { try await Task.sleep(for: .milliseconds(10)) }
                    throw CancellationError()
                },
                inOrder: { _, _ in Issue.record("nothing arrives") })
        }
        while await started.started.count < 4 { await started.releaseAll() }
        fetching.cancel()
        await #expect(throws: CancellationError.self) { try await fetching.value }
    }
}
