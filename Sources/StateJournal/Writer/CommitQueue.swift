import Foundation

/// The background committer of ``Journal/submit(_:metadata:after:)``: a queue of work run in order
/// on one thread of its own, started by the first submission and stopped when the journal shuts
/// down.
///
/// A thread of its own rather than a dispatch queue: handing work to a parked thread costs one
/// wake-up, while a dispatch queue may have to start a worker thread inside the submitter's call,
/// which is an app's main thread.
final class CommitQueue: @unchecked Sendable {
    // @unchecked Sendable: every mutable property below is read and written with `condition` locked.
    private let condition = NSCondition()
    private var work: [() -> Void] = []
    private var head = 0
    /// Work queued or running.
    private var pending = 0
    private var started = false
    private var stopped = false

    /// Queues `item` to run after everything queued before it; returns `false`, without queueing
    /// it, once the queue is stopped.
    func enqueue(_ item: @escaping () -> Void) -> Bool {
        condition.lock()
        guard !stopped else {
            condition.unlock()
            return false
        }
        work.append(item)
        pending += 1
        if !started {
            started = true
            // The thread holds the queue, never the journal: a journal with nothing queued can go away.
            let thread = Thread { [self] in run() }
            thread.name = "StateJournal.commit"
            thread.start()
        }
        condition.unlock()
        // Signalled with the lock free, so that the woken thread does not wait for it.
        condition.signal()
        return true
    }

    /// Waits until nothing is queued or running, or until `deadline`; returns whether nothing is.
    func waitUntilDrained(until deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while pending > 0 && condition.wait(until: deadline) {}
        return pending == 0
    }

    /// Lets the thread end once the queue is empty.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        Self.neverPreemptOnWake()
        condition.lock()
        while true {
            while head == work.count && !stopped { condition.wait() }
            guard head < work.count else { break }
            var item: (() -> Void)? = work[head]
            work[head] = {}
            head += 1
            if head == work.count {
                work.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            item?()
            // Released with the lock free: the last reference to the journal may go with it, and
            // the journal's deinit stops this queue.
            item = nil
            condition.lock()
            pending -= 1
            condition.broadcast()
        }
        condition.unlock()
    }

    /// Makes the calling thread a batch thread (Linux's `SCHED_BATCH`): it keeps its share of the
    /// processor, but waking it never preempts the thread that woke it, which is the app's main
    /// thread handing over an epoch. Without it, on a machine with few cores, the submitter would
    /// often wait while the committer compresses and writes the epoch it just handed over.
    private static func neverPreemptOnWake() {
        #if os(Linux)
            // SCHED_BATCH of <sched.h>, which Swift imports only with _GNU_SOURCE.
            let batch: Int32 = 3
            var parameters = sched_param()
            parameters.sched_priority = 0
            _ = sched_setscheduler(0, batch, &parameters)
        #endif
    }
}
