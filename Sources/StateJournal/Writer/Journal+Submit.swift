import Foundation

extension Journal {
    /// Hands an epoch of changes to the journal's background committer and returns at once; the
    /// epoch is compressed, written and made as durable as the policy promises on the committer's
    /// thread, off the caller's.
    ///
    /// Submitted epochs commit one at a time, in the order they were submitted, each as one epoch
    /// (applied wholly or not at all), exactly as ``commit(_:metadata:)`` would commit it. The
    /// returned ``PendingEpoch`` finishes once the epoch is as durable as the policy promises: synced
    /// under ``Durability/everyCommit``, handed to the operating system otherwise. An epoch that
    /// another thread begins with ``beginEpoch()`` may land between two submitted ones.
    ///
    /// Pass the previous submission as `predecessor` when this epoch's content assumes that one
    /// committed (for instance, it leaves out what the predecessor already wrote): if the
    /// predecessor fails, this epoch fails too, with ``JournalError/Code/precedingEpochFailed``,
    /// and writes nothing, so the journal never holds a later epoch without the one it built on.
    ///
    /// Validate the changes first (``JournalChange/validate()``) when a change over the limits should
    /// not fail the whole epoch. ``close()`` waits for every submitted epoch to finish.
    ///
    /// - Parameters:
    ///   - changes: The puts, removes and clears of the epoch, applied in order.
    ///   - metadata: The epoch's metadata.
    ///   - predecessor: An earlier submission to this journal that this epoch depends on, or `nil`.
    /// - Returns: The submission, to wait for or await.
    /// - Complexity: O(1) on the caller's thread, which never waits for the journal's lock nor for a
    ///   write or a sync; the commit runs on the committer's thread.
    public func submit(
        _ changes: [JournalChange], metadata: [String: String] = [:], after predecessor: PendingEpoch? = nil
    ) -> PendingEpoch {
        let pending = PendingEpoch()
        let queued = committer.enqueue { [self] in
            // The committer is serial, so a predecessor submitted earlier has finished by now.
            if case .failure(let failure)? = predecessor?.result {
                pending.finish(
                    .failure(
                        JournalError(
                            .precedingEpochFailed,
                            """
                            The epoch submitted before this one failed, and this one depends on it, so it was not \
                            written. Write the changes again in a new epoch.
                            """,
                            cause: failure)))
                return
            }
            do {
                pending.finish(.success(try commit(changes, metadata: metadata, inBackground: true)))
            } catch let error as JournalError {
                pending.finish(.failure(error))
            } catch {
                pending.finish(.failure(Journal.ioError(error, "commit a submitted epoch")))
            }
        }
        if !queued { pending.finish(.failure(JournalError(.closed, "The journal is closed; open it again to write."))) }
        return pending
    }
}

/// An epoch handed to ``Journal/submit(_:metadata:after:)``: wait for it or await it to learn when
/// it is as durable as the journal's policy promises, or why it failed.
///
/// `Sendable`: it can be awaited from any task or thread, by any number of waiters.
public final class PendingEpoch: @unchecked Sendable {
    // @unchecked Sendable: `outcome` and `waiters` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var outcome: Result<EpochInfo, JournalError>?
    private var waiters: [CheckedContinuation<Result<EpochInfo, JournalError>, Never>] = []

    init() {}

    /// The outcome once the committer has finished with the epoch, or `nil` while it is queued or
    /// being written. Never blocks.
    public var result: Result<EpochInfo, JournalError>? {
        condition.lock()
        defer { condition.unlock() }
        return outcome
    }

    /// Blocks the calling thread until the epoch is committed and as durable as the policy promises.
    ///
    /// - Returns: The committed epoch.
    /// - Throws: The ``JournalError`` that made the commit fail; nothing of the epoch is then in
    ///   the journal, except after ``JournalError/Code/storePoisoned`` (see
    ///   ``EpochWriter/commit(metadata:)``).
    public func wait() throws -> EpochInfo {
        condition.lock()
        while outcome == nil { condition.wait() }
        let outcome = outcome!
        condition.unlock()
        return try outcome.get()
    }

    /// The committed epoch, once it is as durable as the policy promises.
    ///
    /// Cancelling the awaiting task does not cancel the commit, nor end the wait early: the epoch
    /// is already on its way to the disk.
    ///
    /// - Throws: as ``wait()``.
    public var value: EpochInfo {
        get async throws {
            let finished = await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<EpochInfo, JournalError>, Never>) in
                condition.lock()
                if let outcome {
                    condition.unlock()
                    continuation.resume(returning: outcome)
                } else {
                    waiters.append(continuation)
                    condition.unlock()
                }
            }
            return try finished.get()
        }
    }

    func finish(_ result: Result<EpochInfo, JournalError>) {
        condition.lock()
        outcome = result
        let waiters = waiters
        self.waiters = []
        condition.broadcast()
        condition.unlock()
        for waiter in waiters { waiter.resume(returning: result) }
    }
}
