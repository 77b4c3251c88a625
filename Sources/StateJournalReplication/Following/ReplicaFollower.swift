import Foundation
import Logging
import StateJournal

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What one step of a ``ReplicaFollower`` did.
public struct FollowReport: Sendable, Hashable {
    /// The replica generation the local store holds after the step (`nil` before the first).
    public var generation: UInt64?
    /// Whether the step applied a generation (or brought in the first one).
    public var applied: Bool
    /// The last epoch the local store holds after the step, as its generation states it.
    public var lastEpoch: UInt64?
    /// Objects fetched in the step.
    public var objectsFetched: Int
    /// Payload bytes fetched in the step.
    public var bytesFetched: Int64
    /// Whether the step listed the replica's generations (see ``ReplicaFollower``).
    public var listed: Bool
}

/// Keeps a local store up to date with a replica as its shipper writes new generations: a live,
/// read-only copy of a store in another place.
///
/// ## Starting
///
/// When the directory is missing or empty, the newest usable generation is brought in as
/// ``ReplicaRestorer`` restores one (and verified the same way). When it holds a store already, the
/// store must be the replica's (``ReplicationError/Code/otherStore`` otherwise), and the follower
/// continues from it, fetching only the objects whose bytes it does not have: the local files are
/// compared with the checksums the generation recorded, locally.
///
/// A store with a history of its own is never overwritten: when the intact store in the directory
/// holds epochs the replica's newest generation does not, an epoch it committed at another time, a
/// segment the replica neither holds nor has compacted, or bytes that differ from the replica's in
/// a file both hold, the follower refuses with ``ReplicationError/Code/diverged`` (naming the
/// epochs) and releases the directory, or sets it aside with ``Options/setsAsideDivergedStore``.
/// A damaged store (a record that fails its checksum) is repaired from the replica instead.
///
/// ## Polling, and when the follower lists
///
/// A shipper numbers the generations it writes one after another, so after generation `k` the
/// follower asks only for generation `k + 1` (one GET; "not found" means nothing new). It lists
/// the replica's generations (a LIST request, which costs more and sees more) only:
///
/// - when it starts;
/// - when its last successful poll is older than ``Options/absenceBeforeListing`` (two minutes by
///   default): it was away (suspended, offline), and retention may have deleted `k + 1`;
/// - when `k + 1` has been missing for ``Options/quietBeforeListing`` (a minute by default): a
///   shipper that lost its place may have numbered past it;
/// - after `k + 1` turned out unusable (damaged, forged, not sealed by the key).
///
/// After a listing it applies the newest usable generation, whatever number it has. A shipper's
/// retention keeps a generation that a newer one covers for ten minutes at least, so a follower
/// that polls more often than ``Options/absenceBeforeListing`` always finds the next one, and
/// lists about once a minute only while the replica does not change.
///
/// While generations keep coming, the polls are phase-locked to the shipper's cadence: from the
/// times the generations say they were written, the follower learns the shipper's interval and
/// how late after its write a generation is found here, polls when the next one is due, and again
/// every 50 ms for up to half an interval while it has not come. After that (a slow upload, the
/// store stopped committing), and before it has seen two consecutive generations, it polls every
/// ``Options/activePollInterval`` for ten seconds after a generation arrived, then every
/// ``Options/pollInterval``, one GET each.
///
/// ## Applying a generation
///
/// Readers (``JournalReader``, a read-only ``Journal``, `statejournal log`) can read the directory
/// all the while: new files are downloaded under staged names, synced and renamed into place; the
/// live segment grows by appending the bytes beyond its local length; a file whose bytes differ
/// from the generation's (a segment the shipper shipped again after a power cut) is downloaded whole
/// and replaces it. Every object is checked against the SHA-256 its generation recorded, and the
/// files are checked as a store (framing, checksums and commits of the segments after the newest
/// checkpoint, and a new checkpoint whole) before the manifest is replaced atomically; then the
/// files the generation no longer names are removed. A generation that fails a check is not
/// applied, and the store is left as it was.
///
/// The bucket is hostile input, as for a restore: names are derived from validated fields, files
/// are reached through the directory's descriptor, never through a symlink, and no object is read
/// past the size its generation declares.
///
/// The follower holds the store's writer lock while it follows, so that no ``Journal`` opens the
/// directory for writing; read-only opens work. ``close()`` releases it.
public actor ReplicaFollower: Sendable {
    /// How a follower works.
    public struct Options: Sendable {
        /// How often it polls while the replica has not changed for ten seconds. Defaults to one second.
        public var pollInterval: Duration
        /// How often it polls while generations arrived in the last ten seconds and it has not yet
        /// learned the shipper's cadence (it then polls when the next generation is due). Defaults
        /// to 250 ms.
        public var activePollInterval: Duration
        /// How old the last successful poll may be before the follower lists the replica instead of
        /// asking for the next generation. Defaults to two minutes; keep it well below the ten minutes
        /// a shipper keeps covered generations.
        public var absenceBeforeListing: Duration
        /// How long the next generation may be missing before the follower lists the replica once
        /// (and again after as long). Defaults to one minute.
        public var quietBeforeListing: Duration
        /// The keys of an encrypted replica.
        public var keyring: ReplicationKeyring?
        /// Where the follower logs: each generation it applies (info), failures it retries (warning).
        public var logger: Logger
        /// Whether a follower that finds a store of another history in its directory (one that
        /// would be refused with ``ReplicationError/Code/diverged`` or
        /// ``ReplicationError/Code/otherStore``) renames that directory to a new sibling,
        /// `DIR.diverged-EPOCH-TIME` (its last epoch, and the time in UTC), and follows into a new
        /// `DIR`. Nothing is overwritten: a name already taken gets a numbered suffix. Defaults to
        /// `false`: the follower refuses.
        public var setsAsideDivergedStore = false

        /// Creates options; every parameter has a default.
        public init(
            pollInterval: Duration = .seconds(1), activePollInterval: Duration = .milliseconds(250),
            absenceBeforeListing: Duration = .seconds(120), quietBeforeListing: Duration = .seconds(60),
            keyring: ReplicationKeyring? = nil,
            logger: Logger = Logger(label: "StateJournalReplication", factory: { _ in SwiftLogNoOpLogHandler() })
        ) {
            self.pollInterval = pollInterval
            self.activePollInterval = activePollInterval
            self.absenceBeforeListing = absenceBeforeListing
            self.quietBeforeListing = quietBeforeListing
            self.keyring = keyring
            self.logger = logger
        }
    }

    /// Where the replica lives.
    public nonisolated let location: S3Location
    /// The directory of the local store.
    public nonisolated let directory: URL
    /// How the follower works.
    public nonisolated let options: Options
    private nonisolated let client: S3Client
    private var replica: Replica
    private var identity: ReplicaIdentity?
    private var folder: FollowerDirectory?
    private var lock: StoreWriterLock?
    /// The generation the local store holds, and what is known of its files.
    private(set) var appliedGeneration: UInt64?
    /// The generation applied last, when it was read whole: its term starts fence later numbers.
    private var appliedDocument: ReplicaGeneration?
    /// The SHA-256 of the payload of the generation applied last, which the next one names.
    private(set) var appliedSHA256: String?
    private var appliedLastEpoch: UInt64?
    private var files = FollowedFiles(local: nil)
    /// The intact store found in the directory at the start, until a generation is applied over it:
    /// the first one is checked against its history.
    private var adopted: StoreFileSet?
    private var mustList = true
    /// The age by the server's clock (whole seconds) of the generation the last ``followOnce()``
    /// applied, read with it; `nil` when that poll applied none, listed, or the server gave no dates.
    private(set) var lastAppliedAge: Int64?
    private var lastSuccessfulPoll: ContinuousClock.Instant?
    private var nextMissingSince: ContinuousClock.Instant?
    /// When the next poll comes: phase-locked to the shipper's cadence.
    private var schedule: FollowerPollSchedule
    /// Generations found unusable, never fetched again.
    private var unusable: Set<UInt64> = []
    private var appliedObserver: (@Sendable (FollowReport) -> Void)?
    private var applyInterruption: (@Sendable (FollowerApply.Step) -> Bool)?

    /// The HTTP requests the follower has sent, retries included.
    public nonisolated var requestsSent: Int { client.requestsSent }
    /// The listings the follower has sent.
    public nonisolated var listRequestsSent: Int { client.listRequestsSent }

    /// Creates a follower; nothing is read, written or locked before ``followOnce()`` or ``run()``.
    public init(
        from location: S3Location, into directory: URL, configuration: S3Configuration, options: Options = Options()
    ) {
        self.location = location
        self.directory = directory
        self.options = options
        client = S3Client(configuration: configuration)
        replica = Replica(client: client, location: location, keyring: options.keyring)
        schedule = FollowerPollSchedule(
            pollInterval: options.pollInterval, activePollInterval: options.activePollInterval)
    }

    /// Whether the follower has started (it holds the directory).
    var isStarted: Bool { identity != nil }
    /// The replica, bound to its identity once started.
    var boundReplica: Replica { identity.map { replica.bound(to: $0) } ?? replica }
    /// The term of the generation applied last (`0` before leases).
    var appliedTerm: UInt64 { appliedDocument?.term ?? 0 }
    /// The generation applied last and its payload's SHA-256, when it was read whole: what a
    /// promoted standby's term builds on.
    var appliedBase: (generation: ReplicaGeneration, sha256: String)? {
        guard let appliedDocument, let appliedSHA256 else { return nil }
        return (appliedDocument, appliedSHA256)
    }
    /// The last epoch the local store holds from the replica.
    var appliedEpoch: UInt64? { appliedLastEpoch }
    /// Where and how requests are sent.
    nonisolated var configuration: S3Configuration { client.configuration }
    /// Makes the next ``followOnce()`` list the generations.
    func requireListing() { mustList = true }

    /// Releases the store's writer lock and the directory; the next ``followOnce()`` starts again
    /// as a new follower would (listing, and comparing the local files).
    public func close() {
        lock?.release()
        lock = nil
        folder = nil
        identity = nil
        appliedGeneration = nil
        mustList = true
    }

    /// Follows until the task is cancelled, then returns: a generation being applied when the
    /// cancellation comes is abandoned, leaving the store as it was, and the writer lock is released.
    ///
    /// Failures that retrying may fix (an unavailable server, a damaged generation, nothing shipped
    /// yet) are logged and retried at the next poll; the others (another store's directory or
    /// prefix, a diverged store, refused credentials, a missing bucket or key, a writer holding the store) end it
    /// with their ``ReplicationError``.
    public func run() async throws {
        defer { close() }
        // An empty prefix is said once, not at every poll, until something is shipped there.
        var nothingShippedSaid = false
        while !Task.isCancelled {
            do {
                let report = try await followOnce()
                if report.applied {
                    appliedObserver?(report)
                    options.logger.info(
                        "applied generation \(report.generation ?? 0) through epoch \(report.lastEpoch.map(String.init) ?? "none")",
                        metadata: [
                            "objects": "\(report.objectsFetched)", "bytes": "\(report.bytesFetched)",
                            "store": "\(directory.path)", "replica": "\(location)",
                        ])
                }
            } catch let error as ReplicationError where error.code == .cancelled {
                break
            } catch let error as ReplicationError
                where Self.isRetried(error) || (error.code == .missingKey && identity != nil)
            {
                // Once following, a generation under a key id the keyring lacks is one anyone could
                // have written: passed over like a damaged one.
                if Task.isCancelled { break }
                if error.code == .nothingShipped {
                    if !nothingShippedSaid {
                        options.logger.notice("\(error.message) Waiting until something is shipped there.")
                    }
                    nothingShippedSaid = true
                } else {
                    options.logger.warning("following failed, retrying: \(error.message)")
                }
            }
            do {
                try await Task.sleep(for: pollInterval)
            } catch {
                break
            }
        }
    }

    /// Stops every apply where `interruption` returns `true`, as a crash there would (tests only).
    func interruptApplies(_ interruption: (@Sendable (FollowerApply.Step) -> Bool)?) {
        applyInterruption = interruption
    }

    /// Tells `observer` about every generation ``run()`` applies, just after it is applied (the
    /// figures measure the follower's lag with it).
    func observeApplied(_ observer: @escaping @Sendable (FollowReport) -> Void) {
        appliedObserver = observer
    }

    /// Makes the follower poll as it did before its polls followed the shipper's cadence (the
    /// figures compare the two).
    func pollWithoutPhaseLock() { schedule.phaseLocked = false }

    /// The pause before the next poll (see ``FollowerPollSchedule``).
    var pollInterval: Duration { schedule.pause(at: ContinuousClock.now) }

    /// The pause before a standby's next poll (``FollowerPollSchedule/standbyPause(at:cap:applied:)``).
    func standbyPause(cap: Duration, applied: Bool) -> Duration {
        schedule.standbyPause(at: ContinuousClock.now, cap: cap, applied: applied)
    }

    static func isRetried(_ error: ReplicationError) -> Bool {
        [.unavailable, .unexpectedResponse, .tooSlow, .damagedObject, .unauthenticated, .wrongKey, .nothingShipped]
            .contains(error.code) || (error.code == .store && !(error.cause is JournalError))
    }

    /// Brings the local store up to the replica's next generation, when there is one: the first
    /// call starts the follower (takes the writer lock, restores into an empty directory or checks
    /// the store there), the next ones poll as the type's documentation says.
    ///
    /// - Throws: ``ReplicationError``: ``ReplicationError/Code/otherStore`` when the directory holds
    ///   another store, ``ReplicationError/Code/diverged`` when it holds a history of its own (see
    ///   the type's documentation), ``ReplicationError/Code/targetNotEmpty`` when it holds something that is not
    ///   a store, ``ReplicationError/Code/store`` when a writer holds it or it cannot be written,
    ///   ``ReplicationError/Code/damagedObject`` (and the key errors) for a generation that fails its
    ///   checks (it is not applied, and is passed over from then on),
    ///   ``ReplicationError/Code/nothingShipped``, ``ReplicationError/Code/cancelled``, or the
    ///   client's errors.
    @discardableResult
    public func followOnce() async throws -> FollowReport {
        lastAppliedAge = nil
        if identity == nil { return try await start() }
        guard let identity else { throw ReplicationError(.cancelled, "The follower was closed.") }
        let now = ContinuousClock.now
        if let lastSuccessfulPoll, now - lastSuccessfulPoll > options.absenceBeforeListing { mustList = true }
        if let nextMissingSince, now - nextMissingSince > options.quietBeforeListing { mustList = true }
        var report = FollowReport(
            generation: appliedGeneration, applied: false, lastEpoch: appliedLastEpoch, objectsFetched: 0,
            bytesFetched: 0, listed: false)
        let bound = replica.bound(to: identity)
        if mustList {
            report.listed = true
            let numbers = try await bound.generationNumbers()
            nextMissingSince = nil
            var passedOver = 0
            for number in numbers.reversed() where number > (appliedGeneration ?? 0) && !unusable.contains(number) {
                guard passedOver <= ReplicaLimits.maximumGenerationsPassedOver else { break }
                do {
                    guard let found = try await bound.linkedGeneration(number, of: identity.storeID) else { continue }
                    if found.generation.term ?? 0 < appliedTerm {
                        // A late write of a shipper whose term ended before the one applied: an orphan.
                        unusable.insert(number)
                        continue
                    }
                    guard try await checkContinues(to: found.generation, bound: bound) else { return report }
                    try await apply(found.generation, sha256: found.sha256, askedAt: now, report: &report)
                    break
                } catch let error as ReplicationError where ReplicaRestorer.isDamage(error) || error.code == .missingKey
                {
                    unusable.insert(number)
                    passedOver += 1
                    options.logger.warning(
                        "generation \(number) of \(location) is passed over: \(error.message)",
                        metadata: ["replica": "\(location)"])
                }
            }
            // Listed again only by the rules above once this listing has been acted on (a failure to
            // fetch or apply what it found lists again at the next poll).
            mustList = false
            lastSuccessfulPoll = ContinuousClock.now
            return report
        }
        // The shipper numbers its generations above those it found unusable: skip them.
        var next = (appliedGeneration ?? 0) + 1
        while unusable.contains(next) { next += 1 }
        let found: (generation: ReplicaGeneration, sha256: String, age: Int64?)?
        do {
            found = try await bound.followedGeneration(next, of: identity.storeID)
        } catch let error as ReplicationError where ReplicaRestorer.isDamage(error) || error.code == .missingKey {
            unusable.insert(next)
            mustList = true
            throw error
        }
        guard let (generation, sha256, age) = found else {
            if nextMissingSince == nil { nextMissingSince = now }
            lastSuccessfulPoll = ContinuousClock.now
            return report
        }
        if let appliedDocument, generation.term ?? 0 < appliedTerm {
            // Written by a shipper of an older term after the current term began (a late write
            // where retention had deleted the number): never applied.
            unusable.insert(next)
            options.logger.warning(
                "generation \(next) of \(location) is of term \(generation.term ?? 0), older than the term that began at generation \(appliedDocument.terms?.last?.generation ?? 0): passed over",
                metadata: ["replica": "\(location)"])
            lastSuccessfulPoll = ContinuousClock.now
            return report
        }
        guard try await checkContinues(to: generation, bound: bound) else { return report }
        do {
            try await apply(generation, sha256: sha256, askedAt: now, report: &report)
        } catch let error as ReplicationError where ReplicaRestorer.isDamage(error) {
            unusable.insert(next)
            mustList = true
            throw error
        }
        lastAppliedAge = age
        lastSuccessfulPoll = ContinuousClock.now
        return report
    }

    /// Applies `generation`, found by a poll sent at `asked`, over the local files and records it as
    /// the one held.
    private func apply(
        _ generation: ReplicaGeneration, sha256: String, askedAt asked: ContinuousClock.Instant,
        report: inout FollowReport
    ) async throws {
        guard let folder, let identity else { return }
        var counts = AppliedCounts()
        var applying = FollowerApply(
            replica: replica.bound(to: identity), directory: folder, generation: generation,
            isCancelled: { Task.isCancelled })
        applying.interruption = applyInterruption
        if let adopted {
            if let divergence = Self.divergence(of: adopted, from: generation) { throw diverged(divergence) }
            let url = directory
            let names = Set(adopted.files.map(\.name))
            applying.localStoreIsIntact = { name in
                names.contains(name) && StoreInspector.verifyFraming(url).status == .clean
            }
        }
        do {
            files = try await applying.run(over: files, counts: &counts)
        } catch let error as FollowerApply.Diverged {
            let file = adopted?.files.first { $0.name == error.name }
            throw diverged(
                (
                    first: file.map { $0.kind == .checkpoint ? $0.lastEpoch : $0.baseEpoch + 1 } ?? 0,
                    last: adopted?.lastEpoch?.epoch ?? 0,
                    why: "that contradict the replica's at the same numbers (\(error.name) holds other bytes)"
                ))
        }
        adopted = nil
        appliedGeneration = generation.generation
        appliedDocument = generation
        appliedSHA256 = sha256
        appliedLastEpoch = generation.lastEpoch
        nextMissingSince = nil
        schedule.arrived(
            number: generation.generation, writtenMilliseconds: generation.writtenMilliseconds, askedAt: asked,
            wallClock: UInt64(max(0, (Date().timeIntervalSince1970 * 1000).rounded())))
        report.generation = generation.generation
        report.lastEpoch = generation.lastEpoch
        report.applied = true
        report.objectsFetched += counts.objects
        report.bytesFetched += counts.bytes
    }

    /// Opens and locks the directory, and brings in the first generation or checks the store there.
    private func start() async throws -> FollowReport {
        guard let found = try await replica.identity() else {
            throw ReplicationError(.nothingShipped, "\(location) holds no StateJournal replica yet.")
        }
        if found.encrypted == true && replica.keyring == nil {
            throw ReplicationError(
                .missingKey, "\(location) is encrypted (its replica.json says so); give its key to follow it.")
        }
        let folder = try FollowerDirectory(opening: directory)
        let lock: StoreWriterLock
        do {
            lock = try StoreWriterLock(directory: directory)
        } catch let error as JournalError {
            throw ReplicationError(
                .store,
                "\(directory.path) cannot be followed into: \(error.message) A follower is the store's only writer; stop the other one, or follow into another directory.",
                cause: error)
        }
        do {
            try folder.removeStaged()
            let names = try folder.names().filter { $0 != "LOCK" }
            var report: FollowReport
            if names.isEmpty {
                report = try await restoreFirst(found)
            } else {
                try adopt(names, replicating: found, in: folder)
                report = FollowReport(
                    generation: nil, applied: false, lastEpoch: nil, objectsFetched: 0, bytesFetched: 0, listed: false)
            }
            self.folder = folder
            self.lock = lock
            identity = found
            if report.applied { return report }
            let listed = try await followOnce()
            report.applied = listed.applied
            report.generation = listed.generation
            report.lastEpoch = listed.lastEpoch
            report.objectsFetched += listed.objectsFetched
            report.bytesFetched += listed.bytesFetched
            report.listed = true
            return report
        } catch let error as ReplicationError where error.code == .diverged || error.code == .otherStore {
            // Never left half started: the next call starts again, and refuses again.
            var aside: URL?
            if options.setsAsideDivergedStore { aside = try? setAside() }
            if self.lock === lock { close() } else { lock.release() }
            adopted = nil
            guard options.setsAsideDivergedStore else { throw error }
            guard let aside else {
                throw ReplicationError(
                    .store, "\(error.message) Setting \(directory.path) aside failed: move it away by hand.",
                    cause: error)
            }
            options.logger.notice(
                "\(directory.path) held a store of another history, set aside as \(aside.path); following into a new \(directory.path)",
                metadata: ["store": "\(directory.path)", "aside": "\(aside.path)"])
            return try await start()
        } catch {
            if self.lock !== lock { lock.release() }
            throw error
        }
    }

    /// Renames the directory to a sibling named after its store's last epoch and the time,
    /// `DIR.diverged-EPOCH-YYYYMMDDTHHMMSSZ`, with `-2`, `-3`… when a name is taken; returns it.
    private func setAside() throws -> URL {
        let epoch = (try? JournalReader(at: directory).fileSet().lastEpoch?.epoch) ?? nil
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let path = directory.standardizedFileURL.path
        let stem = path + ".diverged-\(epoch.map(String.init) ?? "none")-" + formatter.string(from: Date())
        for attempt in 1...1000 {
            let candidate = attempt == 1 ? stem : "\(stem)-\(attempt)"
            // Claimed by creating it empty (which fails when the name is taken), then replaced by
            // the rename, which fails rather than replace a directory that is not empty.
            guard mkdir(candidate, 0o700) == 0 else {
                if errno == EEXIST { continue }
                throw FollowerDirectory.failure("create", candidate, errno)
            }
            guard rename(path, candidate) == 0 else {
                let code = errno
                _ = rmdir(candidate)
                if code == ENOTEMPTY || code == EEXIST { continue }
                throw FollowerDirectory.failure("rename \(path) to", candidate, code)
            }
            return URL(fileURLWithPath: candidate)
        }
        throw ReplicationError(.store, "No free name to set \(path) aside beside it.")
    }

    /// The error a follower refuses a diverged store with.
    /// Throws ``ReplicationError/Code/diverged`` unless `generation` continues the generation applied
    /// last (``ReplicaHistory/continuation(from:sha256:to:)``): a follower never goes back, and never
    /// stays on a generation the replica's history orphaned. With
    /// ``Options/setsAsideDivergedStore``, closes the store instead and returns `false`: the next
    /// poll starts again, sets the directory aside and follows into a new one.
    private func checkContinues(to generation: ReplicaGeneration, bound: Replica) async throws -> Bool {
        guard let appliedDocument, let identity,
            case .diverged(let why) = ReplicaHistory.continuation(
                from: appliedDocument, sha256: appliedSHA256, to: generation)
        else { return true }
        let last = appliedLastEpoch ?? 0
        // The epochs this copy holds that the replica's history does not: those after the
        // generation the newer term began from, when it can be read.
        var first = last
        let span = ReplicaHistory.spans(under: generation).spans.first { $0.term == appliedTerm }
        if let through = span?.through, through < appliedDocument.generation,
            let basis = try? await bound.generation(through, of: identity.storeID)
        {
            first = min(last, (basis.lastEpoch ?? 0) + 1)
        } else if let newLast = generation.lastEpoch, newLast < last {
            first = newLast + 1
        }
        let error = diverged((first: first, last: last, why: "that the replica's history no longer holds (\(why))"))
        guard options.setsAsideDivergedStore else { throw error }
        options.logger.warning(
            "\(error.message) Setting it aside at the next poll.", metadata: ["store": "\(directory.path)"])
        close()
        self.appliedDocument = nil
        appliedSHA256 = nil
        return false
    }

    private func diverged(_ divergence: (first: UInt64, last: UInt64, why: String)) -> ReplicationError {
        let epochs =
            divergence.first >= divergence.last
            ? "epoch \(divergence.last)" : "epochs \(divergence.first)…\(divergence.last)"
        return ReplicationError(
            .diverged,
            """
            \(directory.path) holds \(epochs) \(divergence.why): its store has a history of its own (a fenced \
            primary's store, or a copy someone wrote to). Following \(location) would replace them, so the follower \
            does not start. Move \(directory.path) away and follow into a new directory, or let the follower set it \
            aside (`statejournal follow --set-aside-diverged`, ReplicaFollower.Options.setsAsideDivergedStore), \
            keeping those epochs for whoever decides what they were worth.
            """)
    }

    /// Why the intact local store `set` is not a copy of the history `generation` holds: the epochs
    /// it holds that the generation does not, or `nil`. A local file the generation no longer names
    /// is accepted when the generation's newest checkpoint covers its epochs (the primary compacted
    /// it); local bytes that differ within a file both name are found while applying.
    static func divergence(
        of set: StoreFileSet, from generation: ReplicaGeneration
    ) -> (first: UInt64, last: UInt64, why: String)? {
        let replicaLast = generation.lastEpoch ?? 0
        if let local = set.lastEpoch, local.epoch > replicaLast {
            return (replicaLast + 1, local.epoch, "that the replica does not have (it ends at epoch \(replicaLast))")
        }
        if let local = set.lastEpoch, local.epoch == replicaLast, let committed = generation.lastEpochMilliseconds,
            UInt64((local.timestamp.timeIntervalSince1970 * 1000).rounded()) != committed
        {
            return (local.epoch, local.epoch, "committed at another time than the replica's epoch \(local.epoch)")
        }
        let named = Dictionary(generation.files.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let covered = generation.files.filter(\.isCheckpoint).map(\.lastEpoch).max() ?? 0
        for file in set.files where file.kind == .segment {
            if let theirs = named[file.name] {
                if file.length > theirs.length {
                    return (
                        theirs.lastEpoch + 1, max(file.lastEpoch, theirs.lastEpoch + 1),
                        "in \(file.name) beyond the \(theirs.length) bytes the replica holds of it"
                    )
                }
            } else if file.lastEpoch > file.baseEpoch && file.lastEpoch > covered {
                return (
                    max(file.baseEpoch, covered) + 1, file.lastEpoch,
                    "in \(file.name), a segment the replica does not hold and no checkpoint of it covers"
                )
            }
        }
        return nil
    }

    /// Checks that the store in the directory is the replica's, and starts from its files: those its
    /// manifest names, and the store files it does not name (an apply that stopped after renaming
    /// files into place, or before removing those its generation no longer named), which the first
    /// apply compares with the replica's and removes when the replica does not name them.
    private func adopt(_ names: [String], replicating identity: ReplicaIdentity, in folder: FollowerDirectory) throws {
        guard names.contains("MANIFEST") else {
            throw ReplicationError(
                .targetNotEmpty,
                "\(directory.path) holds files but no store; a follower keeps a store in a new or empty directory, or in one that holds this replica's store."
            )
        }
        let set: StoreFileSet
        var damaged = false
        do {
            set = try JournalReader(at: directory).fileSet()
        } catch let error as JournalError where error.code == .damaged {
            damaged = true
            // A damaged copy: its files are compared with the replica's whole, and what differs is
            // downloaded again.
            do {
                set = try StoreFileSet.storedFiles(in: directory)
            } catch let error as JournalError {
                throw ReplicationError(
                    .store, "The store in \(directory.path) cannot be read: \(error.message)", cause: error)
            }
            options.logger.warning(
                "the store in \(directory.path) is damaged (\(error.message)); its files are compared with the replica's",
                metadata: ["store": "\(directory.path)"])
        } catch let error as JournalError {
            throw ReplicationError(
                .store, "The store in \(directory.path) cannot be read: \(error.message)", cause: error)
        }
        guard set.storeID == identity.storeID else {
            throw ReplicationError(
                .otherStore,
                """
                \(directory.path) holds the store \(set.storeID), but \(location) is the replica of another store \
                (\(identity.storeID)). Follow into a new or empty directory, or into \
                a copy of this replica's store.
                """)
        }
        files = FollowedFiles(local: set)
        for name in names where files.files[name] == nil && FollowerDirectory.isStoreFileName(name) {
            if let size = folder.size(of: name) { files.files[name] = FollowedFiles.File(length: size, sealed: false) }
        }
        adopted = damaged ? nil : set
        appliedGeneration = nil
        mustList = true
    }

    /// Restores the newest usable generation into the empty directory.
    private func restoreFirst(_ found: ReplicaIdentity) async throws -> FollowReport {
        let bound = replica.bound(to: found)
        let output = try RestoreDirectory(preparing: directory, ignoring: ["LOCK"])
        let restored: RestoreReport
        do {
            restored = try await ReplicaRestorer(replica: replica).restore(into: output, target: .latest)
        } catch let error as ReplicationError where error.code == .noSuchEpoch {
            // Generations of a store that has committed nothing yet: nothing to follow yet.
            output.removeEverythingCreated()
            throw ReplicationError(
                .nothingShipped, "\(location) holds no epoch yet: nothing has been committed in its store.",
                cause: error)
        } catch {
            output.removeEverythingCreated()
            throw error
        }
        if restored.damage.isEmpty,
            let (generation, sha256) = try await bound.linkedGeneration(restored.generation, of: found.storeID)
        {
            files = FollowedFiles(applied: generation)
            appliedDocument = generation
            appliedSHA256 = sha256
        } else {
            let set = try? JournalReader(at: directory).fileSet()
            files = FollowedFiles(local: set)
            mustList = true
        }
        appliedGeneration = restored.generation
        appliedLastEpoch = restored.epoch.epoch
        schedule.arrivedWithoutTime(at: ContinuousClock.now)
        lastSuccessfulPoll = ContinuousClock.now
        mustList = !restored.damage.isEmpty
        return FollowReport(
            generation: restored.generation, applied: true, lastEpoch: restored.epoch.epoch,
            objectsFetched: restored.objectsDownloaded, bytesFetched: restored.bytesDownloaded, listed: true)
    }
}
