import Foundation

/// A committer waiting, with the journal's lock released, for a sync to cover its epoch.
///
/// Each waiter sleeps on a semaphore of its own, and the thread that ends a sync tells each one
/// covered what happened (``Outcome``) before waking it: woken committers return at once, without
/// queueing for the journal's lock one after another. One waiter not yet covered is woken to lead
/// the next sync, as in LevelDB's writer queue.
final class DurabilityWaiter: @unchecked Sendable {
    // @unchecked Sendable: `outcome` is written once before `signal()` and read after `wait()`,
    // which orders the two.
    enum Outcome {
        /// A sync covered the waiter's epoch.
        case durable
        /// The sync failed; the journal is poisoned.
        case failed(JournalError)
        /// No sync runs and the waiter's epoch is not covered: it runs the next one.
        case lead
    }

    let target: JournalPosition
    private let semaphore = DispatchSemaphore(value: 0)
    private var outcome: Outcome = .lead

    init(target: JournalPosition) { self.target = target }

    func wake(_ outcome: Outcome) {
        self.outcome = outcome
        semaphore.signal()
    }

    func wait() -> Outcome {
        semaphore.wait()
        return outcome
    }
}

/// A thread waiting, with the journal's lock released, to begin an epoch while another is open.
///
/// The end of an epoch wakes only the first of them, rather than broadcasting to every thread
/// waiting on the journal's condition: with many committers, a broadcast per epoch woke all the
/// others to find the epoch taken again, which cost a group commit more than its sync.
final class EpochWaiter: @unchecked Sendable {
    // @unchecked Sendable: a semaphore only.
    private let semaphore = DispatchSemaphore(value: 0)

    func wake() { semaphore.signal() }

    func wait() { semaphore.wait() }
}
