import Foundation

/// When a follower polls for the next generation: phase-locked to the shipper's cadence while
/// generations keep coming, at its poll interval otherwise.
///
/// A shipper writes its generations about one interval apart while the store commits. From the
/// times the generations say they were written, the schedule learns that interval (the median of
/// the recent gaps between consecutive generations) and how much later than its write time (by the
/// shipper's clock) a generation is found here: the smallest recent delay, which takes in the
/// difference between the two hosts' clocks and the time the write takes to become visible. The
/// next generation is due one interval after the last one was written, plus that delay: the
/// follower polls then, and again every ``retryStep`` for ``retryWindow`` while it has not come.
///
/// After that (a slow upload, the store stopped committing, the shipper could not reach the
/// server), and without an estimate (fewer than two consecutive generations seen, or gaps longer
/// than ten seconds), it polls as it did before it followed the cadence: every
/// ``ReplicaFollower/Options/activePollInterval`` for ten seconds after a generation arrived, then
/// every ``ReplicaFollower/Options/pollInterval``, as an idle follower always did: one GET per
/// poll, and no LIST in steady state.
struct FollowerPollSchedule: Sendable {
    /// The pause between polls while a due generation has not come.
    static let retryStep: Duration = .milliseconds(50)
    /// How many gaps and delays are remembered.
    static let remembered = 8

    let pollInterval: Duration
    let activePollInterval: Duration
    /// Whether polls follow the shipper's cadence once it is known (the figures turn it off to
    /// measure the schedule without it).
    var phaseLocked = true
    /// Gaps between the write times of consecutive generations, newest last.
    private(set) var gaps: [Duration] = []
    /// How much later than its write time (mapped onto this host's clock) each recent generation was
    /// asked for by the poll that found it, newest last; negative when the shipper's clock is ahead.
    private(set) var delays: [Duration] = []
    /// The last generation seen: its number, its write time in milliseconds since 1970 by the
    /// shipper's clock, and that time on this host's clock.
    private var last: (number: UInt64, milliseconds: UInt64, written: ContinuousClock.Instant)?
    /// When the last generation arrived.
    private(set) var lastArrival: ContinuousClock.Instant?

    init(pollInterval: Duration, activePollInterval: Duration) {
        self.pollInterval = pollInterval
        self.activePollInterval = activePollInterval
    }

    /// Records generation `number`, written at `writtenMilliseconds` by the shipper's clock and
    /// found by a poll sent at `asked`, when this host's clock read `wallClock` (milliseconds since
    /// 1970).
    mutating func arrived(
        number: UInt64, writtenMilliseconds: UInt64, askedAt asked: ContinuousClock.Instant, wallClock: UInt64
    ) {
        let written = asked - .milliseconds(Int64(bitPattern: wallClock &- writtenMilliseconds))
        Self.append(asked - written, to: &delays)
        if let last, number == last.number + 1, writtenMilliseconds > last.milliseconds {
            // A gap of more than ten seconds is a pause of the store's, not the shipper's cadence.
            let gap = Duration.milliseconds(Int64(writtenMilliseconds - last.milliseconds))
            if gap <= .seconds(10) { Self.append(gap, to: &gaps) }
        } else if last != nil {
            // Generations skipped, or a shipper whose clock went back: the gaps start again.
            gaps.removeAll()
        }
        last = (number, writtenMilliseconds, written)
        lastArrival = asked
    }

    /// Records a generation whose write time is unknown, arrived at `instant`.
    mutating func arrivedWithoutTime(at instant: ContinuousClock.Instant) {
        lastArrival = instant
    }

    /// The shipper's interval between generations, as learned.
    var cadence: Duration? {
        guard !gaps.isEmpty else { return nil }
        let median = gaps.sorted()[gaps.count / 2]
        return median <= .seconds(10) ? median : nil
    }

    /// How long to keep polling every ``retryStep`` once the next generation is due: half the
    /// cadence, at most half a second.
    var retryWindow: Duration { min((cadence ?? .zero) / 2, .milliseconds(500)) }

    /// When the next generation is due to be found, when the cadence is known.
    var nextDue: ContinuousClock.Instant? {
        guard let cadence, let last, let delay = delays.min() else { return nil }
        return last.written + cadence + delay
    }

    /// The pause before the next poll, at `now`.
    func pause(at now: ContinuousClock.Instant) -> Duration {
        if phaseLocked, let due = nextDue {
            if now < due { return min(due - now, pollInterval) }
            if now < due + retryWindow { return min(Self.retryStep, pollInterval) }
        }
        if let lastArrival, now - lastArrival < .seconds(10) { return activePollInterval }
        return pollInterval
    }

    /// How long after a generation is due a standby asks for it.
    static let standbyMargin: Duration = .milliseconds(100)

    /// The pause before a standby's next poll, at `now`, at most `cap`: until the next generation
    /// is due, and ``standbyMargin`` after, when the cadence is known; at once when it is due
    /// already and the last poll `applied` a generation (the standby is catching up); otherwise
    /// `cap`. A due generation the poll did not find is asked for again after `cap`, not every
    /// ``retryStep``: a standby costs about one request a generation while generations keep coming.
    func standbyPause(at now: ContinuousClock.Instant, cap: Duration, applied: Bool) -> Duration {
        guard phaseLocked, let due = nextDue else { return cap }
        let target = due + Self.standbyMargin
        if now < target { return min(target - now, cap) }
        return applied ? .zero : cap
    }

    private static func append(_ value: Duration, to values: inout [Duration]) {
        values.append(value)
        if values.count > remembered { values.removeFirst(values.count - remembered) }
    }
}
