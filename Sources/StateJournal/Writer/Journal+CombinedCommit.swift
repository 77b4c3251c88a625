import Foundation

/// A one-shot commit (``Journal/commit(_:metadata:)``) waiting, under ``Durability/everyCommit``,
/// for the thread that combines commits to write it and sync it.
final class CombinedCommit: @unchecked Sendable {
    // @unchecked Sendable: `outcome` is written once, by the combining thread before `wake()`, and
    // read by the committer after `wait()`, which orders the two.
    let changes: [JournalChange]
    let metadata: [String: String]
    let start = JournalMetrics.now()
    var outcome: Result<EpochInfo, any Error>?
    private let semaphore = DispatchSemaphore(value: 0)

    init(changes: [JournalChange], metadata: [String: String]) {
        self.changes = changes
        self.metadata = metadata
    }

    func wake() { semaphore.signal() }

    func wait() { semaphore.wait() }
}

extension Journal {
    /// Commits `changes` as one epoch and returns once it is synced, writing it together with the
    /// one-shot commits of other threads queued at the same time.
    ///
    /// The first committer to find no thread combining becomes the combining thread: it waits,
    /// at most about one sync's time, until as many commits are queued as it wrote last time, then
    /// writes every queued commit as an epoch of its own, in queue order, syncs once, hands the
    /// combining to the first commit queued meanwhile, and wakes the committers it wrote for, each
    /// on a semaphore of its own. As in LevelDB's writer queue, committers neither hand the epoch
    /// to each other one by one nor queue for the journal's lock after the sync, which on a machine
    /// with few cores took longer than the sync itself.
    func commitCombined(_ changes: [JournalChange], metadata: [String: String]) throws -> EpochInfo {
        let request = CombinedCommit(changes: changes, metadata: metadata)
        condition.lock()
        combinedCommits.append(request)
        if combining {
            // The gathering thread is woken once, when the last commit it waits for arrives.
            if combineGathering && combinedCommits.count >= lastCombinedBatch { condition.broadcast() }
            condition.unlock()
            request.wait()
            if let outcome = request.outcome { return try outcome.get() }
            // Woken with no outcome: the combining thread handed the combining over.
            condition.lock()
        }
        combining = true
        gatherCombinedCommits()
        let batch = combinedCommits
        combinedCommits.removeAll(keepingCapacity: true)
        lastCombinedBatch = batch.count
        condition.unlock()

        var end: JournalPosition?
        for commit in batch {
            do {
                let (info, position) = try commitWithoutWaiting(
                    commit.changes, metadata: commit.metadata, inBackground: false)
                commit.outcome = .success(info)
                end = position
            } catch {
                commit.outcome = .failure(error)
            }
        }
        if let end {
            do {
                try waitForDurability(of: end)
            } catch {
                for commit in batch where (try? commit.outcome?.get()) != nil { commit.outcome = .failure(error) }
            }
        }
        for commit in batch {
            if case .success(let info) = commit.outcome { metrics.recordCommit(bytes: info.bytes, since: commit.start) }
        }

        condition.lock()
        if let next = combinedCommits.first {
            next.wake()
        } else {
            combining = false
        }
        condition.unlock()
        for commit in batch where commit !== request { commit.wake() }
        return try request.outcome!.get()
    }

    /// Waits, with `condition` unlocked meanwhile, until as many one-shot commits are queued as the
    /// combining thread wrote last time, or about one sync's time has passed. Called with
    /// `condition` locked.
    private func gatherCombinedCommits() {
        guard lastCombinedBatch > 1, combinedCommits.count < lastCombinedBatch, lastSyncNanoseconds > 0 else { return }
        combineGathering = true
        defer { combineGathering = false }
        let patience = min(lastSyncNanoseconds, Self.longestGathering)
        let deadline = Date(timeIntervalSinceNow: Double(patience) / 1e9)
        while combinedCommits.count < lastCombinedBatch && poison == nil && !isClosed {
            guard condition.wait(until: deadline) else { return }
        }
    }
}
