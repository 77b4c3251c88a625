/// How a manager retries after its journal failed to write or sync: how long it waits between
/// attempts to open the store again, and on which clock.
///
/// The first attempt is made at once (at the next pass); each failed attempt multiplies the wait
/// before the next by ``multiplier``, from ``initialDelay`` up to ``maximumDelay``. Passes asked for
/// while the manager waits fail at once without encoding anything, so an outage of any length
/// costs no more than one attempt per wait.
public struct StoreRecoveryPolicy: Sendable {
    /// The wait after the first failed attempt. Defaults to 50 ms.
    public var initialDelay: Duration
    /// The longest wait between attempts, which bounds how long after the disk heals the first save
    /// is acknowledged again. Defaults to half a second.
    public var maximumDelay: Duration
    /// What each failed attempt multiplies the wait by. Defaults to 2.
    public var multiplier: Double
    /// The clock the waits are measured on (and, in `StateRestorationService`, slept on). Defaults
    /// to a `ContinuousClock`; tests pass a clock they advance themselves.
    public var clock: any Clock<Duration>

    /// Creates a policy; every parameter has a default.
    ///
    /// - Parameters:
    ///   - initialDelay: The wait after the first failed attempt.
    ///   - maximumDelay: The longest wait.
    ///   - multiplier: What each failed attempt multiplies the wait by.
    ///   - clock: The clock the waits are measured on.
    public init(
        initialDelay: Duration = .milliseconds(50), maximumDelay: Duration = .milliseconds(500),
        multiplier: Double = 2, clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.clock = clock
    }

    /// The wait before the next attempt once `failedAttempts` attempts failed in a row: none before
    /// the first, then ``initialDelay`` growing by ``multiplier`` up to ``maximumDelay``.
    ///
    /// - Parameter failedAttempts: The attempts that failed since the store became unavailable.
    /// - Returns: The wait.
    public func delay(afterFailedAttempts failedAttempts: Int) -> Duration {
        guard failedAttempts > 0 else { return .zero }
        var delay = initialDelay
        for _ in 1..<min(failedAttempts, 64) {
            delay = delay * multiplier
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }
}

/// Time elapsed on a clock since the stopwatch was made.
struct Stopwatch: Sendable {
    let elapsed: @Sendable () -> Duration

    init(_ clock: some Clock<Duration>) {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
    }
}
