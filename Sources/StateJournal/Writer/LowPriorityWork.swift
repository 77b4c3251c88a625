import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Runs CPU-heavy background work (folding the journal into a checkpoint) on a thread of its own
/// with a lower scheduling priority, so that on a machine with few cores the app's threads, and
/// the writers among them, are not kept waiting for a time slice behind it.
enum LowPriorityWork {
    /// The `nice` value of the worker thread: under Linux's scheduler it gets about a tenth of a core
    /// that a normal thread also wants, and all of a core no one else wants.
    static let niceness: Int32 = 10

    /// Runs `body` on a new thread at lower priority and waits for it. The calling thread's own
    /// priority is left alone (an unprivileged thread cannot raise it back).
    static func run<T>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome<T>()
        let thread = Thread {
            lowerPriority()
            outcome.result = Result { try body() }
            done.signal()
        }
        thread.name = "StateJournal.fold"
        thread.start()
        done.wait()
        return try outcome.result!.get()
    }

    private static func lowerPriority() {
        #if os(Linux)
            // On Linux the nice value belongs to each thread: `who` 0 is the calling thread alone.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
        #endif
    }

    /// The result handed from the worker to the waiting thread; the semaphore orders the accesses.
    private final class Outcome<T>: @unchecked Sendable {
        var result: Result<T, any Error>?
    }
}
