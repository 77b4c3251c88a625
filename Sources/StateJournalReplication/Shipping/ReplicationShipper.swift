import Foundation
import Logging
import StateJournal

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How a shipper works.
public struct ReplicationOptions: Sendable {
    /// How far behind the store the replica may fall: a commit is in the bucket at most about this
    /// long after it returns, the upload included. Defaults to one second.
    ///
    /// ``ReplicationShipper/run()`` starts a pass 0.92 of an interval after the previous one
    /// started, so that a commit waits that long at most for the next pass, and that pass's upload
    /// still lands within the interval when it takes less than 80 ms; a busy store then writes at
    /// most 3,913 generations an hour at the default interval. It always pauses at least a tenth of
    /// the interval between passes, so a slow server is not sent pass after pass, and a full
    /// interval after a pass that failed. A pass over a store that has not changed reads two inodes
    /// and sends nothing.
    public var interval: Duration
    /// How long generations that a later one does not cover (those from before a compaction) are
    /// kept, so that a restore can reach epochs the store itself no longer retains. Defaults to 24 hours.
    public var retention: Duration
    /// How often old generations and the objects only they name are deleted: each time costs a
    /// listing of the generations (a request per thousand) and a request per thousand objects
    /// deleted. Defaults to five minutes.
    public var retentionCheckInterval: Duration
    /// The keys objects are encrypted with; `nil` ships them unencrypted.
    public var keyring: ReplicationKeyring?
    /// Where the shipper logs: each generation it writes (info), failures it retries (warning).
    public var logger: Logger
    /// How long the shipper's lease on the replica lasts without a renewal: another shipper of the
    /// store takes over once neither the lease nor the generation chain has changed for this long,
    /// and this shipper stops writing generations a fifth of it before it runs out. Every generation the shipper writes renews it; without one, the lease is written again
    /// every quarter of it. Defaults to ten seconds.
    public var leaseDuration: Duration = .seconds(10)
    /// How long the lease lasts once the shipper has shipped nothing for ``leaseDuration``, when a
    /// standby watches the replica (`follow --failover`, ``ReplicaFollower/promote(shipping:)``):
    /// the lease is then written again every half of it, and a standby takes over a primary that
    /// died while idle after this long. With no standby, an idle
    /// shipper's lease is *dormant*: no shipper takes it over unless it is given up or taken by
    /// force, and the shipper only looks for a standby again (a `HEAD`) after this long, then after
    /// twice as long each time, until it ships again. Between ``leaseDuration`` and an hour;
    /// defaults to ten minutes.
    public var idleLeaseDuration: Duration = .seconds(600)
    /// Whether the shipper takes the lease at once even while another shipper holds it, instead of
    /// waiting for it to be released or to expire: the operator's decision that the other shipper
    /// is gone (or must stop). The other shipper is fenced at its next pass. Defaults to `false`.
    public var takesOverImmediately = false

    /// How often ``ReplicationShipper/run()`` logs, at `info`, what shipping cost since the last
    /// time (requests by kind, bytes, generations, the lag of the newest commit shipped) and
    /// reports it as metrics. Defaults to a minute.
    public var statisticsInterval: Duration = .seconds(60)
    /// The host the lease's holder id is derived from, instead of this machine's (tests stand two
    /// hosts up in one process).
    var leaseHost: String?
    /// The size of the chunks encrypted objects are sealed in (tests write smaller ones).
    var sealedChunkBytes = ReplicaLimits.sealedChunkBytes
    /// The most bytes of files a generation carries inline (tests that damage objects of their own
    /// set 0, so that every file's bytes go up as objects, as a pass larger than this does).
    var maximumInlineBytes = ReplicaLimits.maximumInlineBytes
    /// The largest generation payload written with bytes inline: past it, they go up as objects of
    /// their own (tests lower it to reach that path with small stores).
    var maximumGenerationPayload = ReplicaLimits.maximumGenerationBytes
    /// How long a generation that a newer one covers is kept all the same: ten minutes, so that a
    /// ``ReplicaFollower`` that polls for the generation after its own finds it (tests shorten it).
    var coveredGenerationsKept: Duration = .seconds(600)
    /// The clock the lease is timed on: its renewals, its expiry, and the waits for another
    /// shipper's. A `ContinuousClock`; tests pass a clock they advance by hand.
    var leaseClock: any Clock<Duration> = ContinuousClock()

    /// Creates options; every parameter has a default.
    public init(
        interval: Duration = .seconds(1), retention: Duration = .seconds(24 * 3600),
        retentionCheckInterval: Duration = .seconds(300), keyring: ReplicationKeyring? = nil,
        logger: Logger = Logger(label: "StateJournalReplication", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.interval = interval
        self.retention = retention
        self.retentionCheckInterval = retentionCheckInterval
        self.keyring = keyring
        self.logger = logger
    }
}

/// What one pass of a shipper did.
public struct ShipmentReport: Sendable, Hashable {
    /// The replica generation that is current after the pass (`nil` when nothing is shipped yet).
    public var generation: UInt64?
    /// Whether the pass wrote a new generation.
    public var wroteGeneration: Bool
    /// The last epoch the replica holds.
    public var lastEpoch: UInt64?
    /// Objects uploaded in the pass, and their payload bytes.
    public var objectsUploaded: Int
    /// Payload bytes uploaded in the pass.
    public var bytesUploaded: Int64
}

/// Ships a store to S3-compatible object storage, continuously: checkpoints and sealed segments as
/// whole objects, the live segment's committed tail in pieces as it grows, and after them a new
/// generation naming them all.
///
/// The shipper opens the store read-only (like the inspection commands), so it runs beside the
/// app's writer, in the app's process or in another (`statejournal replicate`). It claims the
/// prefix for the store: a shipper of another store at the same prefix throws
/// ``ReplicationError/Code/otherStore``. Two shippers of the same store at one prefix are safe:
/// every object name is create-only and content-addressed, and a generation number is taken by
/// exactly one of them.
public actor ReplicationShipper {
    /// The store directory.
    public nonisolated let store: URL
    /// Where the replica lives.
    public nonisolated let location: S3Location
    /// How the shipper works.
    public nonisolated let options: ReplicationOptions
    private var replica: Replica
    private nonisolated let client: S3Client

    /// The HTTP requests the shipper has sent, retries included.
    public nonisolated var requestsSent: Int { client.requestsSent }

    /// The requests the shipper has sent, by kind (its lease's included), and the bytes they carried.
    public nonisolated var requestCounts: S3RequestCounts { client.requestCounts }

    /// For each generation written since the last statistics, how long after its newest commit
    /// returned it was in the bucket, in milliseconds (at most ``ShippingStatistics/maximumLags``).
    var lagsSinceStatistics: [Int64] = []
    private var reader: JournalReader?
    private var claimedStoreID: String?
    private var latest: ReplicaGeneration?
    /// The SHA-256 of `latest`'s payload, which the next generation names as its predecessor.
    private var latestSHA256: String?
    /// The generation a promoted standby applied last, which its term builds on (see
    /// ``ReplicaHistory``), until the first pass has read the replica.
    private var promotionBase: (generation: ReplicaGeneration, sha256: String)?
    /// Whether the next pass checks, against the store's own bytes, every object it would name
    /// again from `latest`: set when `latest` was written by another holder, whose files of the
    /// same names and lengths may hold other bytes (a history that diverged).
    private var checksReusedObjects = false
    /// Whether `latest` is the generation a promoted standby applied, whose objects match its store.
    private var buildsOnAppliedBase = false
    /// The highest generation number the bucket was seen to hold, usable or not: the next
    /// generation takes a number above it.
    private var highestGeneration: UInt64 = 0
    /// Generations found unusable (damaged, or not written by this store's shipper), not read again.
    private var unusableGenerations: Set<UInt64> = []
    private var lastRetention = ContinuousClock.now
    /// Generations this shipper knows the contents of, by number.
    private var knownGenerations: [UInt64: ReplicaGeneration] = [:]
    /// Objects this shipper uploaded that no generation it wrote names (pieces merged in the pass
    /// that uploaded them): deleted by retention unless a generation names them by then.
    private var unnamedUploads: Set<String> = []
    /// The live segment's name at the last pass, and what the files looked like before it.
    private var liveSegment: String?
    private var shippedFingerprint: [Int64]?
    private var generationObserver: (@Sendable (ShipmentReport) -> Void)?
    private var generationWork: (@Sendable () async -> Void)?
    /// The shipper's hold on the replica's lease, once the replica is claimed.
    private(set) var lease: LeaseKeeper?
    /// Whether ``ReplicationOptions/takesOverImmediately`` was used: only the first claim forces.
    private var forcedOnce = false
    /// The newest term any generation read showed.
    private var highestTerm: UInt64 = 0
    /// The shipper's hold on its store for this replica (``ShipperLock``).
    private var shipperLock: ShipperLock?
    /// The last epoch a generation this shipper wrote reaches.
    private var shippedEpoch: UInt64?
    /// The last epoch of the generation this shipper's term built on: what of its store was in the
    /// replica before it wrote anything.
    private var termBaseEpoch: UInt64?

    /// Creates a shipper; nothing is read or sent before ``shipOnce()`` or ``run()``.
    public init(
        store: URL, to location: S3Location, configuration: S3Configuration,
        options: ReplicationOptions = ReplicationOptions()
    ) {
        self.init(store: store, to: location, configuration: configuration, options: options, lease: nil)
    }

    /// Creates a shipper that holds `lease` already (a promoted follower's, whose term builds on
    /// `base`, the generation it applied last), or takes one.
    init(
        store: URL, to location: S3Location, configuration: S3Configuration, options: ReplicationOptions,
        lease: LeaseKeeper?, base: (generation: ReplicaGeneration, sha256: String)? = nil
    ) {
        promotionBase = base
        self.store = store
        self.location = location
        self.options = options
        client = S3Client(configuration: configuration)
        self.replica = Replica(client: client, location: location, keyring: options.keyring)
        replica.sealedChunkBytes = options.sealedChunkBytes
        self.lease = lease
    }

    /// Ships until the task is cancelled, keeping the replica about ``ReplicationOptions/interval``
    /// behind the store at most; when cancelled, runs one last pass, so that every epoch committed
    /// before the cancellation is shipped, and returns.
    ///
    /// Passes are scheduled start to start: the next pass starts 0.92 of an interval after the
    /// previous one started, so that a commit that just missed a pass waits that long for the next
    /// one, then for its upload. Between two passes the shipper pauses at least a tenth of the
    /// interval.
    ///
    /// A pass that fails because the server is unavailable is logged and retried a full interval
    /// later; failures that retrying cannot fix (another store's prefix, refused credentials, a
    /// missing bucket) end the run with their error.
    public func run() async throws {
        let schedule = PassSchedule(interval: options.interval)
        var statistics = ShippingStatistics(
            started: .now, counts: client.requestCounts, generations: generationsWritten)
        while !Task.isCancelled {
            let started = ContinuousClock.now
            let outcome: PassOutcome
            do {
                outcome = try await shipOnceLogged()
            } catch let error as ReplicationError where error.code == .cancelled {
                break
            }
            if started - statistics.started >= options.statisticsInterval {
                statistics = reportStatistics(since: statistics)
            }
            let pause = schedule.pause(afterPassThat: outcome, took: ContinuousClock.now - started)
            do {
                try await Task.sleep(for: pause)
            } catch {
                break
            }
        }
        // The last pass runs in a task of its own, which the cancellation does not reach; only a
        // shipper that still holds the lease runs it, and then gives the lease up, so that another
        // shipper can take over at once.
        guard let lease, await lease.term != nil else { return }
        guard await lease.isValid else {
            if let other = await lease.fencedBy { throw fenced(by: other, storeLastEpoch: nil) }
            throw ReplicationError(
                .unavailable,
                "The lease of \(location) ran out (the server could not be reached to renew it), so the last epochs were not shipped."
            )
        }
        _ = try await Task { try await self.shipOnceLogged(final: true) }.value
        // Given up in a task of its own too: a request of the cancelled task would not be sent.
        await Task { await lease.release() }.value
    }

    /// Whether the shipper has reached the replica and claimed it for its store (it read or wrote
    /// `replica.json`): `false` for one that never reached the server, or was refused there.
    public var hasClaimedReplica: Bool { claimedStoreID != nil }

    /// How many generations this shipper has written.
    public private(set) var generationsWritten = 0

    /// Whether the shipper holds the replica's lease now: it took it, and it has not run out, been
    /// given up or been taken over. A shipper that does not hold it writes no generation.
    public var holdsLease: Bool {
        get async { await lease?.isValid ?? false }
    }

    /// Holds the replica's lease before anything is written, and returns its term: takes it when
    /// it is free, released or expired, and waits while another shipper holds it.
    ///
    /// - Throws: ``ReplicationError/Code/fenced`` when another shipper took it over,
    ///   ``ReplicationError/Code/cancelled`` when cancelled while waiting.
    private func holdLease(storeLastEpoch: UInt64?) async throws -> (term: UInt64, waited: Bool) {
        guard let lease else {
            throw ReplicationError(.unexpectedResponse, "The replica at \(location) is not claimed yet.")
        }
        if let other = await lease.fencedBy { throw fenced(by: other, storeLastEpoch: storeLastEpoch) }
        if await lease.isValid, let term = await lease.term {
            if case .fenced(let other) = await lease.renewIfDue() {
                throw fenced(by: other, storeLastEpoch: storeLastEpoch)
            }
            return (term, false)
        }
        var waitingSaid = false
        var waited = false
        while true {
            if Task.isCancelled {
                throw ReplicationError(.cancelled, "Cancelled while waiting for the lease of \(location).")
            }
            let force = options.takesOverImmediately && !forcedOnce
            if waited { highestGeneration = await replica.newestGeneration(after: highestGeneration) }
            let (held, other) = try await lease.tryAcquire(
                chainTerm: highestTerm, chainHead: waited ? highestGeneration : nil, force: force)
            if held, let term = await lease.term {
                forcedOnce = true
                return (term, waited)
            }
            waited = true
            if let fencedBy = await lease.fencedBy { throw fenced(by: fencedBy, storeLastEpoch: storeLastEpoch) }
            if !waitingSaid, let other {
                waitingSaid = true
                // Waiting for the lease is standing by (see ``ReplicationOptions/idleLeaseDuration``).
                _ = await replica.markStandby(logger: options.logger)
                options.logger.notice(
                    """
                    another shipper (\(other.host.map { printable($0) } ?? "unknown host"), term \(other.term)) holds the \
                    lease of \(location); waiting for it to be released or to expire
                    """)
            }
            do {
                try await options.leaseClock.sleep(for: min(options.leaseDuration / 4, .seconds(1)))
            } catch {
                throw ReplicationError(.cancelled, "Cancelled while waiting for the lease of \(location).")
            }
        }
    }

    /// The store's files now.
    private func readFileSet() throws -> StoreFileSet {
        do {
            if reader == nil { reader = try JournalReader(at: store) }
            return try reader!.fileSet()
        } catch let error as JournalError {
            throw ReplicationError(.store, "Could not read the store at \(store.path): \(error.message)", cause: error)
        }
    }

    /// Checks that the store does not contradict the history `latest` holds: it must reach the
    /// newest epoch `latest` does, and hold that epoch as committed at the same millisecond when it
    /// still retains it. When it has compacted that epoch away, the oldest epoch it retains after it
    /// must have been committed after it (within half a lease's duration, for the hosts' clocks).
    /// A fenced primary started again, or a copy that diverged, holds that epoch committed at
    /// another time, or epochs after it committed before it (they were committed before the other
    /// host's term began), or ends before it; a store restored or followed from the replica holds it
    /// as shipped, or has compacted it since and committed the epochs after it later.
    ///
    /// - Throws: ``ReplicationError/Code/fenced`` when it contradicts it.
    private func checkContinues(_ latest: ReplicaGeneration, set: StoreFileSet) throws {
        guard let epoch = latest.lastEpoch, let committed = latest.lastEpochMilliseconds else { return }
        let what: String
        if let last = set.lastEpoch?.epoch, last >= epoch {
            let history: [EpochInfo]
            do {
                history = try reader?.history() ?? []
            } catch let error as JournalError {
                throw ReplicationError(
                    .store, "Could not read the store at \(store.path): \(error.message)", cause: error)
            }
            func milliseconds(_ info: EpochInfo) -> UInt64 {
                UInt64(max(0, (info.timestamp.timeIntervalSince1970 * 1000).rounded()))
            }
            if let local = history.first(where: { $0.epoch == epoch }) {
                guard milliseconds(local) != committed else { return }
                what = "this store's epoch \(epoch) was committed at another time: the two histories diverged"
            } else {
                guard let after = history.first(where: { $0.epoch > epoch }) else { return }
                let lease = options.leaseDuration.components
                let skew = UInt64(max(0, lease.seconds * 500 + lease.attoseconds / 2_000_000_000_000_000))
                guard milliseconds(after) + skew < committed else { return }
                what = """
                    this store compacted that epoch away, and its epoch \(after.epoch), after it, was committed \
                    \(committed - milliseconds(after)) ms before it: the two histories diverged
                    """
            }
        } else {
            what = "this store ends before it (at epoch \(set.lastEpoch.map { String($0.epoch) } ?? "none"))"
        }
        throw ReplicationError(
            .fenced,
            """
            \(location) holds epochs through \(epoch) shipped by another host, and \(what). Shipping this store \
            would replace that history, so this shipper does not ship it. Follow or restore the replica into a new \
            directory, and move this store aside, keeping its epochs for whoever decides what they were worth.
            """)
    }

    /// The error a shipper whose lease another took over stops with, naming what of its store is
    /// in the replica's history and what is not (the loss window), as the store is *now*: it went on
    /// committing while this shipper waited.
    ///
    /// With `head`, a generation of the newer term, the epochs in the replica are those of the last
    /// generation this shipper wrote that `head`'s history keeps; later ones are orphans.
    private func fenced(
        by other: LeaseDocument, storeLastEpoch: UInt64?, head: ReplicaGeneration? = nil
    ) -> ReplicationError {
        var last = storeLastEpoch
        if let reader, let now = try? reader.fileSet().lastEpoch?.epoch { last = max(last ?? 0, now) }
        var kept = shippedEpoch
        var orphaned = ""
        if let head, let holder = lease?.holder {
            let mine = knownGenerations.values.filter { $0.holder == holder }
            let members = mine.filter { ReplicaHistory.placement(of: $0, under: head).isMember }
            kept = members.max { $0.generation < $1.generation }?.lastEpoch ?? termBaseEpoch
            let orphans = mine.count - members.count
            if orphans > 0 {
                orphaned =
                    orphans == 1
                    ? " 1 generation it wrote after the takeover began is an orphan, which no restore or follower uses."
                    : " \(orphans) generations it wrote after the takeover began are orphans, which no restore or follower uses."
            }
        }
        var window = ""
        if let last {
            let from = (kept ?? 0) + 1
            window =
                from <= last
                ? " This store's epochs \(from)…\(last) are not in the replica: they are the loss window, kept in this store only."
                : " Every epoch of this store is in the replica."
        }
        return ReplicationError(
            .fenced,
            """
            Another shipper (\(other.host.map { printable($0) } ?? "unknown host")) took over \(location) in term \
            \(other.term), so this shipper stopped.\(orphaned)\(window) Stop taking writes into this store, and \
            follow or restore the replica instead.
            """)
    }

    /// The lease that names the holder of `generation`'s term or a newer one, for a fenced
    /// shipper's message; one made up from the generation when the lease says otherwise.
    private func leaseOf(_ generation: ReplicaGeneration) async throws -> LeaseDocument {
        let term = generation.term ?? 0
        if let other = await lease?.fencedBy, other.term >= term { return other }
        if let (current, _) = try? await replica.lease(), current.term >= term, current.holder != lease?.holder {
            return current
        }
        return LeaseDocument(
            term: term, holder: generation.holder ?? String(repeating: "0", count: 32), renewal: 0,
            durationMilliseconds: 0, released: false, latestGeneration: generation.generation, host: nil,
            writtenMilliseconds: 0)
    }

    /// Tells `observer` about every generation ``run()`` writes, just after it is written (the
    /// figures measure the replica's lag with it).
    func observeGenerations(_ observer: @escaping @Sendable (ShipmentReport) -> Void) {
        generationObserver = observer
    }

    /// Runs `work` in every pass that writes a generation, after its uploads and before the lease
    /// is checked and the generation written (tests stand in for a slow upload with it).
    func beforeWritingGeneration(_ work: @escaping @Sendable () async -> Void) {
        generationWork = work
    }

    private func shipOnceLogged(final: Bool = false) async throws -> PassOutcome {
        do {
            let report = try await shipOnce()
            if report.wroteGeneration {
                generationObserver?(report)
                options.logger.info(
                    "shipped generation \(report.generation ?? 0) through epoch \(report.lastEpoch.map(String.init) ?? "none")",
                    metadata: [
                        "objects": "\(report.objectsUploaded)", "bytes": "\(report.bytesUploaded)",
                        "store": "\(store.path)", "replica": "\(location)",
                    ])
                return .wroteGeneration
            }
            return .nothingNew
        } catch let error as ReplicationError
            where error.code == .unavailable || error.code == .store || error.code == .unexpectedResponse
        {
            options.logger.warning("shipping failed, retrying at the next interval: \(error.message)")
            if final { throw error }
            return .failed
        }
    }

    /// Ships what the store has committed now, and writes a generation when anything changed.
    ///
    /// - Throws: ``ReplicationError``: ``ReplicationError/Code/otherStore``,
    ///   ``ReplicationError/Code/foreignPrefix``, ``ReplicationError/Code/accessDenied``,
    ///   ``ReplicationError/Code/noSuchBucket``, ``ReplicationError/Code/notS3``,
    ///   ``ReplicationError/Code/unavailable``, or ``ReplicationError/Code/store`` when the store
    ///   cannot be read.
    @discardableResult
    public func shipOnce() async throws -> ShipmentReport {
        // Nothing to do when neither the manifest nor the live segment changed since a pass that
        // shipped everything: a pass on an idle store reads two inodes and sends nothing.
        let fingerprint = filesFingerprint()
        // Modification times are kept at the kernel's tick, so a write just after the fingerprint
        // can leave it the same: files changed in the last second are always read.
        let newest = stride(from: 2, to: fingerprint.count, by: 4).map { fingerprint[$0] }.max() ?? 0
        let settled = Int64(Date().timeIntervalSince1970) - newest >= 2
        if settled, let shippedFingerprint, shippedFingerprint == fingerprint, latest != nil {
            return ShipmentReport(
                generation: latest?.generation, wroteGeneration: false, lastEpoch: latest?.lastEpoch,
                objectsUploaded: 0, bytesUploaded: 0)
        }
        var set = try readFileSet()
        var chainReadThisPass = false
        if claimedStoreID != set.storeID {
            chainReadThisPass = true
            let identity = try await replica.claim(storeID: set.storeID)
            claimedStoreID = set.storeID
            replica = replica.bound(to: identity)
            lease =
                lease
                ?? LeaseKeeper(
                    replica: replica, duration: options.leaseDuration, idleDuration: options.idleLeaseDuration,
                    holder: LeaseKeeper.holderID(store: store, host: options.leaseHost), logger: options.logger,
                    clock: options.leaseClock)
            if let base = promotionBase {
                // A promoted standby's term builds on what it applied, whatever the previous primary
                // landed since: those generations are orphans (``ReplicaHistory``).
                promotionBase = nil
                buildsOnAppliedBase = true
                latest = base.generation
                latestSHA256 = base.sha256
                highestGeneration = max(try await replica.generationNumbers().last ?? 0, base.generation.generation)
            } else {
                try await loadLatest()
            }
        }
        let holder = lease!.holder
        if shipperLock == nil {
            // Held for the shipper's life: a second shipper of this store to this replica on this
            // host would share its holder id, take its lease and fence it.
            shipperLock = try ShipperLock.acquire(store: store, location: location, holder: holder)
        }
        let wasHolding = await lease!.isValid
        if !wasHolding, let latest, let holderOfLatest = latest.holder, holderOfLatest != holder {
            // Another host shipped last: a store that does not continue its history (a fenced
            // primary started again, a copy that diverged or lags) must never ship, so it says so
            // now rather than wait for the lease.
            try checkContinues(latest, set: set)
        }
        let (term, waited) = try await holdLease(storeLastEpoch: set.lastEpoch?.epoch)
        if !wasHolding {
            // Newly held: the previous holder may have shipped, and the store moved on, while this
            // shipper waited.
            if waited || !chainReadThisPass {
                try await loadLatest()
                set = try readFileSet()
            }
            if let latest, latest.term != term, let holderOfLatest = latest.holder, holderOfLatest != holder {
                // The first pass of a term that follows another host's: the store must continue
                // the replica's history, or shipping it would replace epochs that host shipped.
                do {
                    try checkContinues(latest, set: set)
                } catch {
                    // Given up, so that a shipper of the replica's own history can take over at once.
                    await lease?.release()
                    throw error
                }
            }
        }
        if let latest, ReplicaHistory.isFenced(term: term, reading: [latest]) {
            // The history's head is of a newer term: another shipper took over.
            throw fenced(by: try await leaseOf(latest), storeLastEpoch: set.lastEpoch?.epoch, head: latest)
        }
        // A promoted standby's base was checked object by object as it was applied; any other
        // holder's generation is checked against this store's bytes before its objects are named again.
        if let latest, latest.holder != holder, !buildsOnAppliedBase { checksReusedObjects = true }
        var report = ShipmentReport(
            generation: latest?.generation, wroteGeneration: false, lastEpoch: latest?.lastEpoch, objectsUploaded: 0,
            bytesUploaded: 0)
        let previous = Dictionary((latest?.files ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var files: [ReplicaGeneration.File] = []
        var staged = StagedUploads()
        let number = ReplicaHistory.nextNumber(highestSeen: highestGeneration, building: latest)
        staged.carrier = ReplicaLayout.generation(number)
        staged.inlineLimit = max(0, min(options.maximumInlineBytes, ReplicaLimits.maximumInlineBytes))
        do {
            for file in set.files {
                files.append(try await ship(file, previous: previous[file.name], staged: &staged, report: &report))
            }
        } catch let error as FileGone {
            // Compaction removed a file between the listing and the read: the next pass sees the new files.
            options.logger.debug("\(error.name) went away during the pass; shipping again at the next interval")
            return report
        }
        try await send(&staged, report: &report)
        var inline = assembleInline(&files, from: staged)
        liveSegment = set.files.last { !$0.isSealed }?.name
        // A shipper's first generation in a term is written even when no file changed: it starts
        // the term in the chain, which fences every shipper of an older term.
        if let latest, latest.files == files, latest.term == term, latest.holder == holder {
            shippedFingerprint = fingerprint
            return report
        }
        var next = ReplicaGeneration(
            storeID: set.storeID, generation: number,
            writtenMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000), storeGeneration: set.generation,
            nextFileSequence: set.nextFileSequence, epochFloor: set.epochFloor, lastEpoch: set.lastEpoch?.epoch,
            lastEpochMilliseconds: set.lastEpoch.map { UInt64(($0.timestamp.timeIntervalSince1970 * 1000).rounded()) },
            files: files)
        // Version 3: a container carrying the pass's new bytes inline, whose objects may be sealed
        // in chunks (version 2 envelopes).
        next.version = ReplicaGeneration.currentVersion
        next.term = term
        next.holder = holder
        next.terms = ReplicaHistory.termStarts(term: term, number: next.generation, building: latest)
        if let latest, let latestSHA256 {
            next.predecessor = ReplicaGeneration.Link(
                generation: latest.generation, term: latest.term ?? 0, sha256: latestSHA256)
        } else if let latest {
            // Built on a generation it did not read whole (it cannot happen: every `latest` is read
            // or written with its digest): the term start's basis still names it.
            options.logger.warning("generation \(latest.generation) of \(location) has no known digest")
        }
        await generationWork?()
        // A shipper whose lease ran out during the pass (a slow upload, a starved renewal) renews
        // it first: a renewal proves nobody took it. One that cannot writes no generation, since
        // another may take over soon.
        if let lease, !(await lease.isValid), await lease.fencedBy == nil {
            if case .fenced(let other) = await lease.renew() {
                throw fenced(by: other, storeLastEpoch: set.lastEpoch?.epoch)
            }
        }
        guard let lease, await lease.isValid else {
            options.logger.warning(
                "the lease of \(location) ran out before generation \(next.generation) was written; not writing it")
            return report
        }
        var payload = try GenerationContainer.seal(next, inline: inline)
        if payload.count > min(options.maximumGenerationPayload, ReplicaLimits.maximumGenerationBytes) {
            // A document too large to carry bytes as well: they go up as objects of their own.
            try await spillInline(&next.files, from: staged, report: &report)
            inline = []
            payload = try GenerationContainer.seal(next, inline: [])
        }
        let carried = next.files.reduce(0) { $0 + $1.objects.filter { $0.key == staged.carrier }.count }
        let sent = lease.now()
        // Sent, and sent again, only while the lease is valid on this shipper's own clock: a
        // shipper that may have lost it writes nothing more, not even a retry.
        let outcome = try await replica.put(
            ReplicaLayout.generation(next.generation), payload: payload, createOnly: true,
            while: { await lease.isValid })
        guard outcome == .created else {
            // Another shipper took the number. One of a newer term ends this shipper's; this
            // shipper's own (a retry whose first attempt landed after all) is built on; one of an
            // older term is a late write of a holder that lost its lease, an orphan this shipper
            // never builds on: it numbers its next generation above it, on the same base.
            highestGeneration = max(highestGeneration, next.generation)
            let found = try await replica.linkedGeneration(next.generation, of: set.storeID)
            if let found,
                ReplicaHistory.isFenced(term: term, reading: [found.generation])
                    || ((found.generation.term ?? 0) == term && found.generation.holder != holder)
            {
                throw fenced(
                    by: try await leaseOf(found.generation), storeLastEpoch: set.lastEpoch?.epoch,
                    head: found.generation)
            }
            if let found, found.generation.term == term, found.generation.holder == holder {
                latest = found.generation
                latestSHA256 = found.sha256
                knownGenerations[next.generation] = found.generation
                options.logger.notice(
                    "generation \(next.generation) was written by this shipper's earlier attempt; continuing from it")
            } else {
                options.logger.notice(
                    "generation \(next.generation) of \(location) was taken by a shipper of an older term (an orphan); numbering above it"
                )
            }
            return report
        }
        report.objectsUploaded += carried
        report.bytesUploaded += Int64(inline.count)
        if next.terms?.last?.generation == next.generation { termBaseEpoch = latest?.lastEpoch }
        await lease.noteGeneration(next.generation, sent: sent)
        shippedEpoch = next.lastEpoch
        generationsWritten += 1
        if let committed = next.lastEpochMilliseconds, lagsSinceStatistics.count < ShippingStatistics.maximumLags {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            lagsSinceStatistics.append(max(0, now - Int64(clamping: committed)))
        }
        latest = next
        latestSHA256 = ReplicaLayout.sha256Hex(payload)
        checksReusedObjects = false
        buildsOnAppliedBase = false
        highestGeneration = next.generation
        shippedFingerprint = fingerprint
        knownGenerations[next.generation] = next
        report.generation = next.generation
        report.lastEpoch = next.lastEpoch
        report.wroteGeneration = true
        if ContinuousClock.now - lastRetention >= options.retentionCheckInterval {
            try await applyRetention()
        }
        return report
    }

    /// Deletes generations that a newer one covers (once they are ten minutes old, so that a
    /// ``ReplicaFollower`` never loses its place), and those older than the retention period except
    /// the newest, then the objects only deleted generations named.
    public func applyRetention() async throws {
        lastRetention = ContinuousClock.now
        let numbers = try await replica.generationNumbers()
        guard !numbers.isEmpty else { return }
        // The generations this shipper has not read yet (all of them, the first time after it
        // starts beside a long chain) are read a few at a time, and at most so many in one pass,
        // so that a pass holds shipping back for a bounded time; while some are still unread,
        // nothing is deleted: what they name must not be taken for garbage.
        let unread = numbers.filter { !unusableGenerations.contains($0) && knownGenerations[$0] == nil }
        let read = try await readGenerations(Array(unread.prefix(Self.generationsReadPerRetention)))
        for (number, loaded) in read {
            if let loaded {
                knownGenerations[number] = loaded
            } else {
                // Read once: a generation that cannot be used is never used to decide what to delete.
                unusableGenerations.insert(number)
            }
        }
        if unread.count > read.count {
            options.logger.debug(
                "retention read \(read.count) of \(unread.count) generations of \(location) it had not read; deleting nothing yet"
            )
            return
        }
        let readable = numbers.compactMap { number in knownGenerations[number].map { (number, $0) } }
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let retentionMilliseconds = UInt64(options.retention.components.seconds * 1000)
        let keptMilliseconds = UInt64(options.coveredGenerationsKept.components.seconds * 1000)
        var kept: [ReplicaGeneration] = []
        var dropped: [ReplicaGeneration] = []
        // Only the history's generations decide what is covered; orphans (late writes of a shipper
        // that had lost its lease) are kept for the retention period, for whoever looks into what
        // a takeover lost, then deleted.
        let newestFirst = readable.reversed().map(\.1)
        guard let headIndex = ReplicaHistory.headIndex(Array(newestFirst.prefix(2))) else { return }
        let head = newestFirst[headIndex]
        var generations: [(UInt64, ReplicaGeneration)] = []
        for (number, generation) in readable {
            if ReplicaHistory.placement(of: generation, under: head).isMember {
                generations.append((number, generation))
            } else if generation.writtenMilliseconds + retentionMilliseconds < now {
                dropped.append(generation)
            } else {
                kept.append(generation)
            }
        }
        for (index, (_, generation)) in generations.enumerated() {
            let isNewest = index == generations.count - 1
            // A covered generation is kept for a while, so that a follower polling for the next one finds it.
            let covered =
                !isNewest && generation.isCovered(by: generations[index + 1].1)
                && generation.writtenMilliseconds + keptMilliseconds < now
            let expired = generation.writtenMilliseconds + retentionMilliseconds < now
            if isNewest || (!covered && !expired) { kept.append(generation) } else { dropped.append(generation) }
        }
        let referenced = Set(kept.flatMap { $0.files.flatMap { $0.objects.map(\.key) } })
        // A generation that carries bytes a kept one names stays until none does.
        dropped.removeAll { referenced.contains(ReplicaLayout.generation($0.generation)) }
        // In batches: the generations first, so that none names an object already deleted, then the
        // objects only they named. A generation the server did not delete keeps its objects.
        let failedGenerations = try await replica.delete(dropped.map { ReplicaLayout.generation($0.generation) })
        var stillNamed = referenced
        for generation in dropped {
            if failedGenerations.contains(ReplicaLayout.generation(generation.generation)) {
                for file in generation.files { for object in file.objects { stillNamed.insert(object.key) } }
            } else {
                knownGenerations[generation.generation] = nil
            }
        }
        // Generations are deleted as generations above, never as the objects that carry bytes.
        let garbage = Set(dropped.flatMap { $0.files.flatMap { $0.objects.map(\.key) } }).union(unnamedUploads)
            .subtracting(stillNamed).filter { ReplicaLayout.generationNumber($0) == nil }
        unnamedUploads = []
        let failedObjects = try await replica.delete(garbage.sorted())
        if !failedGenerations.isEmpty || !failedObjects.isEmpty {
            options.logger.warning(
                """
                retention could not delete \(failedGenerations.count) generations and \(failedObjects.count) objects \
                of \(location); the next retention pass tries the generations again
                """)
        }
    }

    /// Continues from the head of the replica's history (``ReplicaHistory``): the newest generation
    /// of this store that is usable, unless a generation of a newer term just below it shows it is
    /// an orphan. One written by another shipper is read as hostile input; one that is damaged,
    /// sealed by no key of the keyring or not this store's is passed over (and never used to decide
    /// what retention deletes); so is one that the history of the newest term this shipper knows of
    /// does not hold (a late write of a shipper that had lost its lease), as restores and followers
    /// pass it over.
    private func loadLatest() async throws {
        // The generation of the newest term this shipper read or wrote: its history is the one to follow.
        let authority = (knownGenerations.values + (latest.map { [$0] } ?? [])).max {
            ($0.term ?? 0, $0.generation) < ($1.term ?? 0, $1.generation)
        }
        latest = nil
        latestSHA256 = nil
        buildsOnAppliedBase = false
        let numbers = try await replica.generationNumbers()
        highestGeneration = max(highestGeneration, numbers.last ?? 0)
        var passedOver = 0
        var candidate: (generation: ReplicaGeneration, sha256: String)?
        for number in numbers.reversed() {
            if let found = try await usableGeneration(number) {
                let generation = found.generation
                if let authority, (generation.term ?? 0) <= (authority.term ?? 0),
                    case .orphan(let why) = ReplicaHistory.placement(of: generation, under: authority)
                {
                    options.logger.warning(
                        "generation \(number) of \(location) is passed over: \(why)",
                        metadata: ["replica": "\(location)"])
                } else if let head = candidate {
                    // The generation just below the newest one read: when it is of a newer term and
                    // its history does not hold the newest, the newest is a late write.
                    if ReplicaHistory.headIndex([head.generation, generation]) == 1 {
                        options.logger.warning(
                            "generation \(head.generation.generation) of \(location) is passed over: it is an orphan of term \(head.generation.term ?? 0) under term \(generation.term ?? 0)",
                            metadata: ["replica": "\(location)"])
                        candidate = found
                    }
                    break
                } else {
                    candidate = found
                    continue
                }
            }
            // Someone who can write the bucket can add generations faster than they can be read:
            // beyond this many, the shipper starts over with a generation that names everything.
            passedOver += 1
            if passedOver > ReplicaLimits.maximumGenerationsPassedOver {
                options.logger.error(
                    """
                    more than \(ReplicaLimits.maximumGenerationsPassedOver) generations of \(location), the newest \
                    ones, cannot be used: shipping a generation that names every file again, above them; the \
                    bucket holds objects this store's shipper did not write
                    """,
                    metadata: ["replica": "\(location)"])
                break
            }
        }
        if let candidate {
            highestTerm = max(highestTerm, candidate.generation.term ?? 0)
            latest = candidate.generation
            latestSHA256 = candidate.sha256
            knownGenerations[candidate.generation.generation] = candidate.generation
        }
    }

    /// How many generations one retention pass reads at most, and how many at a time.
    static let generationsReadPerRetention = 128
    static let concurrentGenerationReads = 8

    /// Generations `numbers` of this store, read ``concurrentGenerationReads`` at a time: each
    /// generation read, `nil` when it is missing or unusable (logged). Past
    /// ``ReplicaLimits/maximumGenerationsPassedOver`` unusable ones it stops reading, so that a bucket
    /// flooded with generations costs a bounded number of requests; those not read are left out.
    private func readGenerations(_ numbers: [UInt64]) async throws -> [UInt64: ReplicaGeneration?] {
        guard let storeID = claimedStoreID, !numbers.isEmpty else { return [:] }
        let replica = self.replica
        var read: [UInt64: ReplicaGeneration?] = [:]
        var unusable = 0
        try await withThrowingTaskGroup(of: (UInt64, Result<ReplicaGeneration?, ReplicationError>).self) { group in
            var next = 0
            func start() {
                let number = numbers[next]
                next += 1
                group.addTask {
                    do {
                        return (number, .success(try await replica.generation(number, of: storeID)))
                    } catch let error as ReplicationError where Self.passesOver(error) {
                        return (number, .failure(error))
                    }
                }
            }
            while next < min(numbers.count, Self.concurrentGenerationReads) { start() }
            while let (number, result) = try await group.next() {
                switch result {
                case .success(let generation):
                    read[number] = .some(generation)
                    if generation == nil { unusable += 1 }
                case .failure(let error):
                    options.logger.warning(
                        "generation \(number) of \(location) is passed over: \(error.message)",
                        metadata: ["replica": "\(location)"])
                    read[number] = .some(nil)
                    unusable += 1
                }
                if unusable > ReplicaLimits.maximumGenerationsPassedOver {
                    group.cancelAll()
                    break
                }
                if next < numbers.count { start() }
            }
        }
        return read
    }

    /// Whether a generation that could not be read for `error` is passed over (never used), rather
    /// than the failure ending the pass: it is damaged, or sealed by no key of the keyring.
    static func passesOver(_ error: ReplicationError) -> Bool {
        [.damagedObject, .unauthenticated, .wrongKey, .missingKey].contains(error.code)
    }

    /// Generation `number` of this store and its payload's SHA-256, or `nil` when it is missing or
    /// unusable (logged).
    private func usableGeneration(_ number: UInt64) async throws -> (generation: ReplicaGeneration, sha256: String)? {
        guard let storeID = claimedStoreID else { return nil }
        do {
            return try await replica.linkedGeneration(number, of: storeID)
        } catch let error as ReplicationError where Self.passesOver(error) {
            options.logger.warning(
                "generation \(number) of \(location) is passed over: \(error.message)",
                metadata: ["replica": "\(location)"])
            return nil
        }
    }

    private struct FileGone: Error { var name: String }

    /// Identity, size and modification time of the manifest and of the live segment of the last
    /// pass: any commit, roll or compaction changes one of them.
    private func filesFingerprint() -> [Int64] {
        var result: [Int64] = []
        for name in ["MANIFEST", liveSegment].compactMap({ $0 }) {
            var info = stat()
            guard stat(store.appendingPathComponent(name).path, &info) == 0 else {
                result += [-1, -1, -1, -1]
                continue
            }
            result += [
                Int64(info.st_ino), Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec),
            ]
        }
        return result
    }

    /// Objects a pass has read and will upload before its generation; sent a few at a time.
    private struct StagedUploads {
        var objects: [(name: String, bytes: [UInt8])] = []
        var bytes = 0
        /// The name of the generation the pass writes, which carries the bytes staged inline.
        var carrier = ""
        /// Bytes the generation will carry inline, by file and range (see ``inlineID(_:_:)``), and
        /// the name they go up under should they not fit after all.
        var inline: [String: (name: String, bytes: [UInt8])] = [:]
        var inlineBytes = 0
        /// The most bytes it carries.
        var inlineLimit = ReplicaLimits.maximumInlineBytes

        /// How a piece staged inline is found again when the generation is assembled.
        static func inlineID(_ file: String, _ range: Range<Int64>) -> String {
            "\(file)@\(range.lowerBound)-\(range.upperBound)"
        }

        /// Stages bytes inline when they fit in what a generation carries; `false` when they do not.
        mutating func addInline(_ file: String, _ range: Range<Int64>, _ bytes: [UInt8], name: String) -> Bool {
            guard bytes.count <= inlineLimit - inlineBytes else { return false }
            inline[Self.inlineID(file, range)] = (name, bytes)
            inlineBytes += bytes.count
            return true
        }

        /// Drops bytes staged inline (a piece merged in the same pass).
        mutating func dropInline(_ file: String, _ range: Range<Int64>) {
            if let staged = inline.removeValue(forKey: Self.inlineID(file, range)) { inlineBytes -= staged.bytes.count }
        }
        /// Past this many bytes, what is staged is sent before more is read.
        static let limit = 32 << 20
        /// How many uploads are in flight at once.
        static let concurrency = 4

        mutating func add(_ name: String, _ bytes: [UInt8]) {
            objects.append((name, bytes))
            self.bytes += bytes.count
        }

        /// Drops a staged object; `false` when it is not staged (it was sent already).
        mutating func drop(_ name: String) -> Bool {
            guard let index = objects.firstIndex(where: { $0.name == name }) else { return false }
            bytes -= objects.remove(at: index).bytes.count
            return true
        }
    }

    /// Uploads what is staged, up to ``StagedUploads/concurrency`` at a time.
    private func send(_ staged: inout StagedUploads, report: inout ShipmentReport) async throws {
        let objects = staged.objects
        staged.objects = []
        staged.bytes = 0
        guard !objects.isEmpty else { return }
        let replica = self.replica
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func start() {
                let (name, bytes) = objects[next]
                next += 1
                // Immutable objects too large for one PUT go up in parts (which cannot be
                // create-only; their content is the same whoever writes them).
                let large = bytes.count > S3Client.multipartPartSize
                group.addTask { try await replica.put(name, payload: bytes, createOnly: !large) }
            }
            while next < min(objects.count, StagedUploads.concurrency) { start() }
            while try await group.next() != nil {
                if next < objects.count { start() }
            }
        }
        report.objectsUploaded += objects.count
        report.bytesUploaded += objects.reduce(Int64(0)) { $0 + Int64($1.bytes.count) }
    }

    /// Ships what is new of one file and returns how the generation describes it.
    private func ship(
        _ file: StoreFileSet.File, previous: ReplicaGeneration.File?, staged: inout StagedUploads,
        report: inout ShipmentReport
    ) async throws -> ReplicaGeneration.File {
        var described = ReplicaGeneration.File(
            name: file.name, kind: file.kind == .checkpoint ? "checkpoint" : "segment", sequence: file.sequence,
            baseEpoch: file.baseEpoch, lastEpoch: file.lastEpoch, timestampMilliseconds: file.timestampMilliseconds,
            sealed: file.isSealed, length: file.length, objects: [])
        if file.isSealed, let previous, previous.sealed, previous.length == file.length,
            try !checksReusedObjects || holds(previous.objects, in: file.name)
        {
            described.objects = previous.objects
            return described
        }
        // A checkpoint, or a segment sealed before this shipper saw it live, goes up whole; a
        // segment shipped while live stays made of its pieces, and only its last bytes go up.
        if file.kind == .checkpoint || (file.isSealed && (previous.map { $0.sealed || $0.objects.isEmpty } ?? true)) {
            let bytes = try read(file.name, 0..<file.length)
            let hash = ReplicaLayout.sha256Hex(bytes)
            let name =
                file.kind == .checkpoint
                ? ReplicaLayout.checkpoint(epoch: file.lastEpoch, sequence: file.sequence, sha256: hash)
                : ReplicaLayout.segment(baseEpoch: file.baseEpoch, sequence: file.sequence, sha256: hash)
            described.objects = [
                stage(name, file: file.name, bytes: bytes, start: 0, level: 0, sha256: hash, in: &staged)
            ]
            if staged.bytes > StagedUploads.limit { try await send(&staged, report: &report) }
            return described
        }
        // The live segment: pieces, merged four at a time so that there are few of them.
        var pieces = previous.map { $0.sealed ? [] : $0.objects } ?? []
        let shippedEnd = pieces.last?.end ?? 0
        if checksReusedObjects, file.length >= shippedEnd, try !holds(pieces, in: file.name) {
            // Another holder's pieces of a file of this name: a history that diverged from this
            // store's holds other bytes there. Shipped again from the start, under new names.
            options.logger.warning(
                "\(file.name) does not hold the bytes the replica's pieces of it hold; shipping it again")
            pieces = []
        } else if file.length < shippedEnd {
            // The segment is shorter than what was shipped (a power cut lost bytes never synced):
            // ship it again from the start, under new names.
            pieces = []
        } else if let last = pieces.last, file.length >= last.end,
            ReplicaLayout.sha256Hex(try read(file.name, last.start..<last.end)) != last.sha256
        {
            // The bytes shipped last are not the file's any more: the store cut its unsynced end
            // after a power cut and wrote new epochs there. Ship the segment again from the start.
            options.logger.warning("\(file.name) no longer holds the bytes shipped last; shipping it again")
            pieces = []
        }
        let start = pieces.last?.end ?? 0
        if file.length > start {
            let bytes = try read(file.name, start..<file.length)
            let hash = ReplicaLayout.sha256Hex(bytes)
            pieces.append(
                stage(
                    ReplicaLayout.piece(sequence: file.sequence, start: start, end: file.length, sha256: hash),
                    file: file.name, bytes: bytes, start: start, level: 0, sha256: hash, in: &staged))
            while pieces.count >= 4, Set(pieces.suffix(4).map(\.level)).count == 1 {
                let merged = pieces.suffix(4)
                let range = merged.first!.start..<merged.last!.end
                let bytes = try read(file.name, range)
                let hash = ReplicaLayout.sha256Hex(bytes)
                let piece = stage(
                    ReplicaLayout.piece(
                        sequence: file.sequence, start: range.lowerBound, end: range.upperBound, sha256: hash),
                    file: file.name, bytes: bytes, start: range.lowerBound, level: merged.first!.level + 1,
                    sha256: hash, in: &staged)
                // A piece staged in this pass and merged in it too is never sent; one already sent
                // that no generation names is deleted by retention. Bytes an earlier generation
                // carries go with that generation.
                for replaced in merged where !(previous?.objects.contains(replaced) ?? false) {
                    if replaced.isInline {
                        staged.dropInline(file.name, replaced.start..<replaced.end)
                    } else if !staged.drop(replaced.key) {
                        unnamedUploads.insert(replaced.key)
                    }
                }
                pieces.removeLast(4)
                pieces.append(piece)
            }
        }
        described.objects = pieces
        return described
    }

    /// Describes an object and stages its upload: inline in the pass's generation when it fits
    /// (its offset is set when the generation is assembled), else as an object of its own, `name`.
    private func stage(
        _ name: String, file: String, bytes: [UInt8], start: Int64, level: Int, sha256: String,
        in staged: inout StagedUploads
    ) -> ReplicaGeneration.Object {
        let range = start..<(start + Int64(bytes.count))
        if staged.addInline(file, range, bytes, name: name) {
            return ReplicaGeneration.Object(
                key: staged.carrier, start: start, end: range.upperBound, sha256: sha256, level: level,
                offset: Self.pendingOffset)
        }
        staged.add(name, bytes)
        return ReplicaGeneration.Object(key: name, start: start, end: range.upperBound, sha256: sha256, level: level)
    }

    /// The offset of bytes staged inline until the generation is assembled.
    private static let pendingOffset: Int64 = -1

    /// Gives every object staged inline its offset among the generation's inline bytes, and
    /// returns those bytes, in the order the files name them.
    private func assembleInline(_ files: inout [ReplicaGeneration.File], from staged: StagedUploads) -> [UInt8] {
        var inline: [UInt8] = []
        for fileIndex in files.indices {
            for objectIndex in files[fileIndex].objects.indices
            where files[fileIndex].objects[objectIndex].offset == Self.pendingOffset {
                let object = files[fileIndex].objects[objectIndex]
                let id = StagedUploads.inlineID(files[fileIndex].name, object.start..<object.end)
                files[fileIndex].objects[objectIndex].offset = Int64(inline.count)
                // Every object staged inline and still named was staged under this id.
                inline += staged.inline[id]!.bytes
            }
        }
        return inline
    }

    /// Turns the bytes staged inline into objects of their own, under the names they were staged
    /// with, and uploads them: for a generation whose document and inline bytes together would be
    /// larger than a generation may be.
    private func spillInline(
        _ files: inout [ReplicaGeneration.File], from staged: StagedUploads, report: inout ShipmentReport
    ) async throws {
        var spilled = StagedUploads()
        for fileIndex in files.indices {
            for objectIndex in files[fileIndex].objects.indices
            where files[fileIndex].objects[objectIndex].key == staged.carrier {
                let object = files[fileIndex].objects[objectIndex]
                // Every object staged inline and still named was staged under this id.
                let (name, bytes) = staged.inline[
                    StagedUploads.inlineID(files[fileIndex].name, object.start..<object.end)]!
                spilled.add(name, bytes)
                files[fileIndex].objects[objectIndex].key = name
                files[fileIndex].objects[objectIndex].offset = nil
            }
        }
        try await send(&spilled, report: &report)
    }

    /// Whether the store's file `name` holds the bytes of every one of `objects`, by their SHA-256:
    /// how a shipper checks what another holder's generation named before naming it again.
    private func holds(_ objects: [ReplicaGeneration.Object], in name: String) throws -> Bool {
        try objects.allSatisfy { ReplicaLayout.sha256Hex(try read(name, $0.start..<$0.end)) == $0.sha256 }
    }

    /// Bytes `range` of a store file; ``FileGone`` when the file is not there any more.
    private func read(_ name: String, _ range: Range<Int64>) throws -> [UInt8] {
        let path = store.appendingPathComponent(name).path
        guard let handle = FileHandle(forReadingAtPath: path) else { throw FileGone(name: name) }
        defer { try? handle.close() }
        do {
            try handle.seek(toOffset: UInt64(range.lowerBound))
            let data = try handle.read(upToCount: Int(range.upperBound - range.lowerBound)) ?? Data()
            guard data.count == range.count else {
                throw ReplicationError(
                    .store,
                    "\(path) is shorter than the store said (\(range.upperBound) bytes); it changed while shipping.")
            }
            return [UInt8](data)
        } catch let error as ReplicationError {
            throw error
        } catch {
            throw ReplicationError(.store, "Could not read \(path).", cause: error)
        }
    }
}

/// What one pass of ``ReplicationShipper/run()`` came to.
enum PassOutcome: Sendable {
    case wroteGeneration
    case nothingNew
    case failed
}

/// When ``ReplicationShipper/run()`` starts its next pass: 0.92 of an interval after the previous
/// pass started, so that a commit waits at most that long for a pass to start and a busy store
/// costs at most 3,913 generations an hour at the default interval, however long its uploads
/// take; never less than a tenth of the interval after a pass ends, and a full interval after one
/// that failed.
struct PassSchedule: Sendable {
    let interval: Duration

    init(interval: Duration) { self.interval = interval }

    /// The shortest pause between two passes.
    var minimumPause: Duration { interval / 10 }

    /// The time from a pass's start to the next one's.
    var period: Duration { interval * 23 / 25 }

    /// The pause before the next pass, after one that ended as `outcome` and took `took`.
    func pause(afterPassThat outcome: PassOutcome, took: Duration) -> Duration {
        if case .failed = outcome { return interval }
        return max(period - took, minimumPause)
    }
}
