import Foundation

/// A value behind an `NSLock`, for state that tests share between threads.
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer does not see the lock that
/// `Mutex` takes on its contended path on Linux (a futex wait in the uninstrumented standard
/// library), and reports the accesses it orders as races. `NSLock` is a pthread mutex, which it sees.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
