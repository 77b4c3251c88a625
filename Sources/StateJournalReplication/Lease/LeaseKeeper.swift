import Foundation
import Logging

/// Takes, renews and gives up a replica's lease for one shipper, and says whether the shipper may
/// write a generation now.
///
/// Time is measured on one clock of this process only, a `ContinuousClock` (which keeps counting
/// while the process is stopped or the machine sleeps) unless a test passes a clock it advances by
/// hand: the renewer sleeps on it, requests are given up on it, and expiry is judged on it. A renewal counts from the moment its request was
/// sent, so the shipper stops writing generations (``isValid``) a margin (a fifth of the duration)
/// before any other shipper may judge the lease expired: another shipper waits for the document to
/// stay unchanged for the duration, counted from when *its* response showing the document arrived,
/// which is after the holder sent it. Only the clocks' rates enter, never their readings, and a wrong
/// judgement costs an unneeded takeover, never two writers with accepted generations (the
/// generation chain fences them).
///
/// Every generation the shipper writes renews the lease as a write of the lease would: another
/// shipper counts the holder as silent only while neither the lease nor the generation chain
/// changes, so a busy holder writes the lease only when it goes idle and when it ships again.
/// Once it has shipped nothing for a lease's duration, the lease is written with
/// ``idleDuration`` (renewed every half of it) when a standby has marked the replica, else as
/// *dormant*: it does not expire, and the idle holder only looks for a standby again, less and
/// less often.
actor LeaseKeeper {
    /// How the lease is written: as the shipper ships, while it is idle and a standby watches, or
    /// while it is idle and nobody does.
    enum Mode: Sendable, Equatable {
        case active
        case idle
        case dormant
    }

    /// What a renewal came to.
    enum Renewal: Sendable {
        case renewed
        /// The server could not be reached: the lease holds until ``LeaseKeeper/isValid`` says otherwise.
        case failed(ReplicationError)
        /// Another shipper holds the lease in a newer term.
        case fenced(LeaseDocument)
    }

    let holder: String
    let duration: Duration
    /// How long the lease lasts while the shipper is idle and a standby watches the replica.
    let idleDuration: Duration
    private let replica: Replica
    private let logger: Logger
    private let host: String?
    /// The lease as this shipper last wrote it, and its ETag.
    private var document: LeaseDocument?
    private var etag: String?
    /// The clock's time (see ``LeaseClock``) until which this shipper may write generations.
    private var validUntil: Duration?
    private var lastRenewalSent: Duration?
    /// When the newest generation the shipper wrote was sent (or the lease taken): a shipper that
    /// has written none for a lease's duration is idle.
    private var lastActivity: Duration?
    /// How the lease was last written, and when it was last written as idle or dormant.
    private(set) var mode = Mode.active
    private var restingSince: Duration?
    /// Whether a standby was found to watch the replica: once it was, the lease is never dormant.
    private var standbyFound = false
    /// While dormant: when to look for a standby next, and how long after that the next look is.
    private var nextStandbyCheck: Duration?
    private var standbyCheckInterval = Duration.zero
    /// Whether the lease is written as idle or dormant once the shipper has shipped nothing for a
    /// lease's duration (tests of renewals turn it off).
    private(set) var restsWhenIdle = true

    /// Sets ``restsWhenIdle``.
    func setRestsWhenIdle(_ rests: Bool) { restsWhenIdle = rests }
    private var renewing = false
    /// The lease of the shipper that took over, once one did.
    private(set) var fencedBy: LeaseDocument?
    /// Another holder's lease and the newest generation as last seen, and when the response
    /// showing them arrived.
    private var observed: (etag: String, renewal: UInt64, chainHead: UInt64?, at: Duration)?
    private var latestGeneration: UInt64?
    /// Renews the lease every eighth of its duration while it is held, beside whatever the shipper
    /// is doing, so that a long upload does not let it run out.
    private var renewer: Task<Void, Never>?
    private var warnedOfDamage = false
    /// What the keeper measures time on and sleeps on.
    private let clock: LeaseClock

    /// A keeper for `replica`'s lease; `holder` is the shipper's holder id (see
    /// ``holderID(store:host:)``); time is measured on `clock`.
    init(
        replica: Replica, duration: Duration, idleDuration: Duration? = nil, holder: String, logger: Logger,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.replica = replica
        self.duration = duration
        self.idleDuration = min(max(idleDuration ?? duration * 60, duration), .seconds(3600))
        self.logger = logger
        self.holder = holder
        self.clock = LeaseClock(clock)
        host = ProcessInfo.processInfo.hostName
    }

    deinit { renewer?.cancel() }

    /// The holder id of a shipper of the store at `store` on this host: the same for every run of
    /// it here, so that a shipper started again after a crash takes over from its earlier run at
    /// once (fencing it, should it still be running) instead of waiting for its lease to expire,
    /// while a shipper on any other host, or of a store at another path, waits.
    ///
    /// The host is this machine's id, read from `machineIDPath`, and its host name.
    static func holderID(store: URL, host: String? = nil, machineIDPath: String = "/etc/machine-id") -> String {
        let machine = host ?? machineID(at: machineIDPath) + "/" + ProcessInfo.processInfo.hostName
        let path = store.standardizedFileURL.resolvingSymlinksInPath().path
        return String(
            ReplicaLayout.sha256Hex(Array("statejournal-lease-holder\u{0}\(machine)\u{0}\(path)".utf8)).prefix(32))
    }

    /// The longest machine id read: a file longer than this is not one, and is ignored.
    static let maximumMachineIDBytes = 4096

    /// The machine id in the file at `path`, trimmed; empty when the file cannot be read, is longer
    /// than ``maximumMachineIDBytes`` (at most that many bytes and one more are read) or is not text.
    static func machineID(at path: String) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: maximumMachineIDBytes + 1),
            data.count <= maximumMachineIDBytes, let text = String(data: data, encoding: .utf8)
        else { return "" }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func startRenewing() {
        guard renewer == nil else { return }
        let period = duration / 8
        let clock = self.clock
        renewer = Task { [weak self] in
            while !Task.isCancelled {
                try? await clock.sleep(period)
                guard let self else { return }
                let renewal = await self.renewIfDue()
                await self.countRenewerPass()
                switch renewal {
                case .fenced(let other):
                    self.logger.error(
                        "another shipper took over \(self.replica.location) in term \(other.term); this shipper stops at its next pass"
                    )
                    return
                case .failed(let error):
                    self.logger.warning(
                        "renewing the lease of \(self.replica.location) failed, retrying: \(error.message)")
                case .renewed, nil:
                    break
                }
            }
        }
    }

    /// How many times the renewer has woken and done what was due (tests wait on it).
    private(set) var renewerPasses = 0

    private func countRenewerPass() { renewerPasses += 1 }

    /// The margin the holder keeps: it stops writing generations this long before its lease runs
    /// out, while another shipper waits the lease's whole duration. The margin absorbs clocks that
    /// run at rates up to a fifth apart; what keeps the history whole when they do not is not timing
    /// (a generation that lands after another term began is an orphan, never part of the history).
    var margin: Duration { duration / 5 }

    /// The term this shipper holds the lease in, once it took it.
    var term: UInt64? { document?.term }

    /// Whether this shipper holds the lease and may write a generation now.
    var isValid: Bool {
        guard fencedBy == nil, let validUntil else { return false }
        return clock.now() < validUntil
    }

    /// The time on the keeper's clock, for ``noteGeneration(_:sent:)``.
    nonisolated func now() -> Duration { clock.now() }

    /// Notes a generation this shipper wrote, whose request was sent at `sent` (``now()``): it
    /// renews the lease, since another shipper counts a changed chain as a renewal.
    func noteGeneration(_ number: UInt64, sent: Duration) {
        latestGeneration = number
        lastActivity = max(lastActivity ?? sent, sent)
        guard document != nil, fencedBy == nil else { return }
        lastRenewalSent = max(lastRenewalSent ?? sent, sent)
        validUntil = max(validUntil ?? sent, sent + duration - margin)
    }

    /// Tries once to take the lease: at once when there is none or it was released (or `force`),
    /// else once it has stayed unchanged for its duration. `chainTerm` is the
    /// newest term the generations show: the new term is above it and above the lease's.
    ///
    /// - Returns: whether this shipper now holds the lease; when `false`, the lease another holds.
    /// `chainHead` is the newest generation number the caller has seen, when it watches the chain:
    /// a holder that writes generations renews its lease by them.
    func tryAcquire(chainTerm: UInt64, chainHead: UInt64? = nil, force: Bool) async throws -> (
        held: Bool, other: LeaseDocument?
    ) {
        if isValid { return (true, nil) }
        if fencedBy != nil { return (false, fencedBy) }
        guard let stored = try await replica.leaseAsStored() else {
            let taken = try await claim(term: chainTerm + 1, replacing: nil)
            if taken, chainTerm > 0 {
                // Generations of a term were written, so a lease was: it was deleted.
                logger.notice(
                    "took over the lease of \(replica.location) in term \(chainTerm + 1): it was missing, though generations of term \(chainTerm) were written"
                )
            }
            return (taken, nil)
        }
        guard let found = stored.document else {
            // A lease no shipper could have written (damaged, or not sealed by the key): no holder
            // is known, so it is treated as one that went silent. Once it has stayed as it is for
            // a lease's duration, it is replaced, in a term above every one the
            // generations show.
            let arrived = clock.now()
            observe(etag: stored.etag, renewal: 0, chainHead: chainHead, at: arrived)
            if !warnedOfDamage {
                warnedOfDamage = true
                logger.warning(
                    "the lease of \(replica.location) cannot be used (\(stored.damage?.message ?? "damaged")); it is replaced once it has stayed unchanged for \(duration)"
                )
            }
            guard force || arrived - (observed?.at ?? arrived) >= duration else { return (false, nil) }
            let term = max(chainTerm, document?.term ?? 0) + 1
            let taken = try await claim(term: term, replacing: stored.etag)
            if taken {
                logger.notice(
                    "took over the lease of \(replica.location) in term \(term), replacing one that could not be used (\(stored.damage?.message ?? "damaged"))"
                )
            }
            return (taken, nil)
        }
        let foundETag = stored.etag
        if found.holder == holder, document == nil, !found.released {
            // An earlier run of this shipper, on this host, for this store (killed, or still running
            // and about to be fenced): taken over at once, in a new term.
            let taken = try await claim(term: max(found.term, chainTerm) + 1, replacing: foundETag)
            if taken {
                logger.notice(
                    "took over the lease of \(replica.location) in term \(document?.term ?? 0) from an earlier run of this shipper on this host"
                )
            }
            return (taken, taken ? nil : found)
        }
        if let document, found.holder == holder, found.term == document.term {
            // Its own lease, unchanged since it ran out: renewing it proves that nobody took it.
            etag = foundETag
            self.document = found
            if case .renewed = await renew() { return (true, nil) }
            return (false, found)
        }
        if let document, found.term > document.term {
            fencedBy = found
            return (false, found)
        }
        let arrived = clock.now()
        observe(etag: foundETag, renewal: found.renewal, chainHead: chainHead, at: arrived)
        let silentFor = arrived - (observed?.at ?? arrived)
        // A dormant lease does not expire: its holder had shipped everything and went idle with
        // nobody standing by.
        let expired =
            found.dormant != true && silentFor >= .milliseconds(Int64(found.durationMilliseconds))
        guard found.released || force || expired else { return (false, found) }
        let taken = try await claim(term: max(found.term, chainTerm) + 1, replacing: foundETag)
        if taken {
            logger.notice(
                "took over the lease of \(replica.location) in term \(document?.term ?? 0) from \(found.holder) (term \(found.term), \(found.released ? "released" : force ? "forced" : "expired"))"
            )
        }
        return (taken, taken ? nil : found)
    }

    /// Notes that the chain of generations was seen to move to `head` just now, by a read that was
    /// not the lease's (a standby applying a generation the holder had just written): the holder's
    /// silence starts again, as when ``tryAcquire(chainTerm:chainHead:force:)`` finds the chain
    /// moved. Nothing is noted before the lease was read once.
    func observeChain(movedTo head: UInt64) {
        guard var seen = observed, seen.chainHead != head else { return }
        seen.chainHead = head
        seen.at = clock.now()
        observed = seen
    }

    /// Notes what another holder's lease and the chain look like at `arrived`: the silence starts
    /// again when either changed. A caller that starts watching the chain only later has not seen
    /// it move.
    private func observe(etag: String, renewal: UInt64, chainHead: UInt64?, at arrived: Duration) {
        let chainMoved = observed?.chainHead.flatMap { seen in chainHead.map { $0 != seen } } ?? false
        if observed?.etag != etag || observed?.renewal != renewal || chainMoved {
            observed = (etag, renewal, chainHead, arrived)
        } else if observed?.chainHead == nil {
            observed?.chainHead = chainHead
        }
    }

    private func claim(term: UInt64, replacing foundETag: String?) async throws -> Bool {
        let sent = clock.now()
        let claimed = LeaseDocument(
            term: term, holder: holder, renewal: 0,
            durationMilliseconds: milliseconds(duration),
            released: false, latestGeneration: nil, host: host, writtenMilliseconds: Self.wallClock())
        guard let newETag = try await replica.writeLease(claimed, ifMatching: foundETag) else { return false }
        document = claimed
        etag = newETag
        observed = nil
        lastRenewalSent = sent
        lastActivity = sent
        mode = .active
        restingSince = nil
        validUntil = sent + duration - margin
        startRenewing()
        return true
    }

    /// Writes the lease when it is due: while the shipper ships, a quarter of its duration after
    /// the last renewal (a generation counts as one); once it has shipped nothing for a lease's
    /// duration, as idle or dormant (see ``Mode``); while idle, every half of ``idleDuration``;
    /// while dormant, never; and as active again once the shipper ships.
    func renewIfDue() async -> Renewal? {
        guard document != nil, fencedBy == nil, !renewing else { return nil }
        let now = clock.now()
        let shippedSinceResting = restingSince.map { (lastActivity ?? .zero) > $0 } ?? false
        switch mode {
        case .idle, .dormant:
            if shippedSinceResting { return await renew(as: .active) }
            if mode == .dormant {
                // A standby may have started since: looked for after the idle duration, then after
                // twice as long each time, at least once a day, so that a long rest costs a few
                // requests and a standby that came late is heard of within as long as the rest was.
                guard let nextStandbyCheck, now >= nextStandbyCheck else { return nil }
                let found = (try? await replica.hasStandby()) ?? false
                standbyCheckInterval = min(standbyCheckInterval * 2, .seconds(86_400))
                self.nextStandbyCheck = now + standbyCheckInterval
                guard found else { return nil }
                standbyFound = true
                return await renew(as: .idle)
            }
            guard let lastRenewalSent, now - lastRenewalSent >= idleDuration / 2 else { return nil }
            return await renew(as: .idle)
        case .active:
            if restsWhenIdle, now - (lastActivity ?? now) >= duration {
                if !standbyFound {
                    // Asked each time the shipper goes idle until a standby is found; when the
                    // answer does not come, the lease is kept as idle, which expires.
                    standbyFound = (try? await replica.hasStandby()) ?? true
                }
                return await renew(as: standbyFound ? .idle : .dormant)
            }
            if let lastRenewalSent, now - lastRenewalSent < duration / 4 { return nil }
            return await renew()
        }
    }

    /// How long the lease lasts when written as `mode`: a dormant one does not expire, so its
    /// holder may write for as long as nobody takes it by force (the generation chain fences it then).
    private func length(_ mode: Mode) -> Duration {
        switch mode {
        case .active: duration
        case .idle: idleDuration
        case .dormant: .seconds(Int64(1) << 40)
        }
    }

    private func milliseconds(_ duration: Duration) -> UInt64 {
        UInt64(max(1, duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000))
    }

    /// Renews the lease: the document with its renewal count one up, written as `mode` only over
    /// the ETag this shipper last wrote.
    func renew(as mode: Mode = .active) async -> Renewal {
        guard var next = document, let etag else {
            return .failed(ReplicationError(.unexpectedResponse, "No lease is held."))
        }
        if let fencedBy { return .fenced(fencedBy) }
        renewing = true
        defer { renewing = false }
        next.renewal += 1
        next.latestGeneration = latestGeneration ?? next.latestGeneration
        next.writtenMilliseconds = Self.wallClock()
        next.durationMilliseconds = milliseconds(mode == .idle ? idleDuration : duration)
        next.dormant = mode == .dormant ? true : nil
        var currentETag = etag
        do {
            for _ in 0..<2 {
                let sent = clock.now()
                if let newETag = try await write(next, ifMatching: currentETag) {
                    adopt(next, etag: newETag, sent: sent, as: mode)
                    return .renewed
                }
                // The condition failed: the lease changed, or an earlier renewal whose answer never
                // came (it timed out) landed after all. Then the lease is still this shipper's, in
                // this term: adopt it and write the renewal over it.
                guard let (found, foundETag) = try await deadline({ try await self.replica.lease() }) else { break }
                guard found.holder == holder, found.term == next.term else {
                    fencedBy = found
                    renewer?.cancel()
                    return .fenced(found)
                }
                document = found
                self.etag = foundETag
                currentETag = foundETag
                next.renewal = found.renewal + 1
            }
            guard let (found, _) = try await deadline({ try await self.replica.lease() }) else {
                fencedBy = LeaseDocument(
                    term: next.term, holder: String(repeating: "0", count: 32), renewal: 0,
                    durationMilliseconds: next.durationMilliseconds, released: true, latestGeneration: nil, host: nil,
                    writtenMilliseconds: 0)
                return .fenced(fencedBy!)
            }
            if found.holder == holder, found.term == next.term {
                return .failed(ReplicationError(.unavailable, "The lease of \(replica.location) kept changing."))
            }
            fencedBy = found
            renewer?.cancel()
            return .fenced(found)
        } catch let error as ReplicationError {
            return .failed(error)
        } catch {
            return .failed(ReplicationError(.unavailable, "Renewing the lease failed.", cause: nil))
        }
    }

    /// Writes the lease within a quarter of its duration (at most two seconds): a request that gets
    /// no answer (a connection gone silent waits thirty seconds for one) is given up, so that the
    /// next renewal is tried while the lease still holds.
    private func write(_ document: LeaseDocument, ifMatching etag: String?) async throws -> String? {
        let replica = self.replica
        return try await deadline { try await replica.writeLease(document, ifMatching: etag) }
    }

    private func deadline<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let limit = min(duration / 4, .seconds(2))
        let clock = self.clock
        return try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await clock.sleep(limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw ReplicationError(
                    .unavailable, "\(replica.location)\(LeaseDocument.name) did not answer within \(limit).")
            }
            return value
        }
    }

    private func adopt(_ written: LeaseDocument, etag newETag: String, sent: Duration, as mode: Mode) {
        document = written
        etag = newETag
        lastRenewalSent = sent
        if mode != .active, self.mode == .active { restingSince = sent }
        if mode == .dormant {
            standbyCheckInterval = idleDuration
            nextStandbyCheck = sent + idleDuration
        }
        if mode == .active { restingSince = nil }
        self.mode = mode
        // A generation sent after this renewal was sent may make the shipper valid for longer.
        var until = sent + length(mode) - margin
        if let lastActivity, lastActivity > sent { until = max(until, lastActivity + duration - margin) }
        validUntil = until
    }

    /// Gives the lease up, so that another shipper can take over at once; a failure is left for
    /// the lease to expire.
    func release() async {
        guard var next = document, let etag, fencedBy == nil else { return }
        next.renewal += 1
        next.released = true
        next.dormant = nil
        next.latestGeneration = latestGeneration ?? next.latestGeneration
        next.writtenMilliseconds = Self.wallClock()
        renewer?.cancel()
        renewer = nil
        if (try? await replica.writeLease(next, ifMatching: etag)) != nil {
            validUntil = nil
            document = nil
            self.etag = nil
        }
    }

    private static func wallClock() -> UInt64 { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }
}

/// The clock a ``LeaseKeeper`` measures time on, read as the time elapsed since the keeper was made
/// (any clock's instants come down to that), and slept on.
struct LeaseClock: Sendable {
    /// The time elapsed on the clock since this was made.
    let now: @Sendable () -> Duration
    /// Sleeps for a duration on the clock; throws when the task is cancelled.
    let sleep: @Sendable (Duration) async throws -> Void

    /// Reads and sleeps on `clock`.
    init<C: Clock<Duration>>(_ clock: C) {
        let start = clock.now
        now = { start.duration(to: clock.now) }
        sleep = { try await clock.sleep(until: clock.now.advanced(by: $0), tolerance: nil) }
    }
}
