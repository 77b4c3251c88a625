import Foundation
import StateJournal

/// What a promotion did: the term it took and the history it continues.
public struct PromotionReport: Sendable, Hashable {
    /// The term the promoted store ships in.
    public var term: UInt64
    /// The term before it, `0` when the replica had none.
    public var previousTerm: UInt64
    /// The last epoch the replica held when the term was taken, which the promoted store holds too:
    /// what the previous primary committed after it, if anything, is the loss window.
    public var lastEpoch: UInt64?
    /// Whether the lease was taken over from a live holder (``ReplicationOptions/takesOverImmediately``)
    /// rather than given up or expired.
    public var forced: Bool
    /// The epoch that marks the term's start in the promoted store
    /// (``StateJournal/EventMarkerKind/replicaTermBegan``), one after ``lastEpoch``; `nil` when the
    /// replica held no store to continue.
    public var markerEpoch: UInt64?

    /// Creates a report of a promotion.
    public init(term: UInt64, previousTerm: UInt64, lastEpoch: UInt64?, forced: Bool, markerEpoch: UInt64? = nil) {
        self.term = term
        self.previousTerm = previousTerm
        self.lastEpoch = lastEpoch
        self.forced = forced
        self.markerEpoch = markerEpoch
    }
}

extension ReplicaFollower {
    /// Makes the followed store the replica's primary: takes the replica's lease, waiting and
    /// following while another shipper holds it (until it gives the lease up, or its lease has gone
    /// unrenewed for its duration, or at once with
    /// ``ReplicationOptions/takesOverImmediately``), then applies every generation the replica
    /// holds by then, stops following, and returns a shipper of the store that holds the lease,
    /// with what the promotion did.
    ///
    /// Run the returned shipper (``ReplicationShipper/run()``, or a ``ReplicationService``) and
    /// open the store for writing once this returns: its first pass starts the new term in the
    /// replica, and the previous primary, should it still be running, is fenced at its next pass.
    /// The epochs the previous primary committed but never shipped are not in the promoted store:
    /// ``PromotionReport/lastEpoch`` is where the promoted history leaves it.
    ///
    /// - Parameter options: how the returned shipper ships; its lease duration, host and
    ///   ``ReplicationOptions/takesOverImmediately`` govern the takeover.
    /// - Throws: ``ReplicationError/Code/cancelled`` when cancelled while waiting, or the errors of
    ///   ``followOnce()``.
    public func promote(shipping options: ReplicationOptions = ReplicationOptions()) async throws -> (
        shipper: ReplicationShipper, report: PromotionReport
    ) {
        if !isStarted { try await followOnce() }
        let keeper = LeaseKeeper(
            replica: boundReplica, duration: options.leaseDuration, idleDuration: options.idleLeaseDuration,
            holder: LeaseKeeper.holderID(store: directory, host: options.leaseHost), logger: options.logger)
        var previousTerm: UInt64 = 0
        var waitingSaid = false
        var dormantSaid = false
        var markAttempts = 0
        // The generations the primary writes renew its lease, so the newest one in the bucket is
        // watched: not the newest applied, which moves while a lagging follower catches up with a
        // primary that is already gone. Looked for again whenever the follower applied one, or
        // failed to.
        let replica = boundReplica
        let logger = self.options.logger
        var marked = false
        // A standby that stops waiting takes its mark away, in a task of its own (a request of a
        // cancelled task would not be sent).
        func cancelled() async -> ReplicationError {
            if marked { await Task { await replica.removeStandbyMark(logger: logger) }.value }
            return ReplicationError(.cancelled, "Cancelled while waiting for the lease of \(location).")
        }
        var chainSeen = await boundReplica.newestGeneration(after: appliedGeneration ?? 0)
        var wasDormant = false
        var leaseRead = false
        let pauseCap = min(options.leaseDuration / 4, .seconds(1))
        while true {
            if Task.isCancelled { throw await cancelled() }
            // Following while waiting keeps the takeover short.
            let applied = appliedGeneration
            // Whether this poll applied a generation the holder had just written, which renewed its lease
            // (it cannot expire for a lease's duration from then): the lease is then not read, nor the
            // chain probed, so that while generations keep coming a standby costs one request each, as
            // a follower does. A poll that finds nothing reads the lease at once.
            var renewedJustNow = false
            do {
                try await followOnce()
                if let newest = appliedGeneration, newest != applied {
                    if newest > chainSeen, let age = lastAppliedAge, age <= Self.freshGenerationAge {
                        // Beyond every generation seen, and written a moment ago by the server's
                        // clock: the chain moved just now (a lagging standby's generations are older).
                        chainSeen = newest
                        await keeper.observeChain(movedTo: newest)
                        renewedJustNow = true
                    } else {
                        chainSeen = await boundReplica.newestGeneration(after: max(chainSeen, newest))
                    }
                }
            } catch let error as ReplicationError where Self.isRetried(error) {
                self.options.logger.warning("following failed, retrying: \(error.message)")
                // A generation that cannot be applied must not hide a primary that goes on shipping.
                chainSeen = await boundReplica.newestGeneration(after: max(chainSeen, appliedGeneration ?? 0))
            }
            // The lease is read at the first poll whatever it found: the silence is counted, and the
            // replica marked as watched, from then on.
            if !renewedJustNow || !leaseRead || options.takesOverImmediately {
                leaseRead = true
                let (held, other) = try await keeper.tryAcquire(
                    chainTerm: appliedTerm, chainHead: chainSeen, force: options.takesOverImmediately)
                if held { break }
                if let other {
                    previousTerm = other.term
                    if markAttempts < 3 || (other.dormant == true && !wasDormant) {
                        // So that the primary, once idle, keeps a lease that expires rather than a
                        // dormant one. Tried up to three times, and again whenever the lease turns
                        // dormant (another standby took its mark away); the wait goes on without it.
                        markAttempts += 1
                        if await boundReplica.markStandby(logger: self.options.logger) {
                            markAttempts = 3
                            marked = true
                        }
                    }
                    if !waitingSaid {
                        waitingSaid = true
                        self.options.logger.notice(
                            "another shipper (term \(other.term)) holds the lease of \(location); following until it gives it up or it expires"
                        )
                    }
                    if wasDormant, other.dormant != true {
                        self.options.logger.notice(
                            "the primary of \(location) heard of this standby: its idle lease now expires after \(other.durationMilliseconds / 1000) s unrenewed"
                        )
                    }
                    wasDormant = other.dormant == true
                    if other.dormant == true, !dormantSaid {
                        dormantSaid = true
                        self.options.logger.warning(
                            """
                            the primary of \(location) is idle and its lease is dormant (no standby watched the replica when \
                            it went idle): it does not expire. The primary hears of this standby when it ships again or \
                            next looks for one (after its idle lease duration, then twice as long each time: this standby \
                            may wait as long as the primary has been idle), and its lease expires from then on. It had \
                            shipped everything when it went idle: if its host is gone, stop this command and run \
                            `statejournal promote --take-over` (takesOverImmediately)
                            """)
                    }
                }
            }
            do {
                try await Task.sleep(for: standbyPause(cap: pauseCap, applied: appliedGeneration != applied))
            } catch {
                throw await cancelled()
            }
        }
        // The primary now: it no longer stands by.
        if marked { await replica.removeStandbyMark(logger: logger) }
        // Held: whatever the previous primary shipped by now is applied, so that the new term
        // continues it. A generation it lands from now on is an orphan: the term's first generation
        // names the last one applied as the generation it began from.
        requireListing()
        for _ in 0..<1000 {
            let report = try await followOnce()
            if !report.applied && !report.listed { break }
        }
        let term = await keeper.term ?? 0
        previousTerm = max(previousTerm, appliedTerm)
        let lastEpoch = appliedEpoch
        let base = appliedBase
        close()
        let marker: UInt64?
        do {
            marker = try Self.commitTermMarker(
                in: directory, term: term, previousTerm: previousTerm, continuesFrom: lastEpoch,
                takenOver: options.takesOverImmediately)
        } catch {
            await keeper.release()
            throw error
        }
        self.options.logger.notice(
            "promoted \(directory.path) to the primary of \(location) in term \(term); the replica held epochs through \(lastEpoch.map(String.init) ?? "none"), and whatever the previous primary committed after them is not in this store"
        )
        // The term builds on the generation applied last: whatever the previous primary lands from
        // now on is an orphan (``ReplicaHistory``).
        let shipper = ReplicationShipper(
            store: directory, to: location, configuration: configuration, options: options, lease: keeper,
            base: base)
        return (
            shipper,
            PromotionReport(
                term: term, previousTerm: previousTerm, lastEpoch: lastEpoch, forced: options.takesOverImmediately,
                markerEpoch: marker)
        )
    }

    /// The oldest a generation may be, by the server's clock in whole seconds (so up to a second
    /// more), for a standby that applied it to take it as the holder's renewal of its lease.
    static let freshGenerationAge: Int64 = 2

    /// Commits the epoch that marks the term's start in the promoted store (see
    /// ``EventMarkerKind/replicaTermBegan``), so that its history shows where the previous primary's
    /// epochs end and this store's begin; the shipper's first pass ships it. Nothing is committed
    /// when the replica held no store yet.
    ///
    /// - Returns: The marker's epoch, or `nil` when there was no store.
    static func commitTermMarker(
        in directory: URL, term: UInt64, previousTerm: UInt64, continuesFrom: UInt64?, takenOver: Bool
    ) throws -> UInt64? {
        guard continuesFrom != nil else { return nil }
        do {
            let journal = try Journal.open(at: directory)
            defer { try? journal.close() }
            // The marker carries the metadata of the epoch it follows (the app's bundle version, its
            // scene...), so that once compaction folds that epoch, the marker still says what
            // wrote the state it holds.
            var metadata = journal.lastCommitted?.metadata ?? [:]
            metadata[EventMarkerKey.event] = EventMarkerKind.replicaTermBegan.rawValue
            metadata[EventMarkerKey.term] = String(term)
            metadata[EventMarkerKey.previousTerm] = String(previousTerm)
            metadata[EventMarkerKey.takenOver] = takenOver ? "1" : "0"
            metadata[EventMarkerKey.continuesFrom] = continuesFrom.map(String.init)
            return try journal.commit([], metadata: metadata).epoch
        } catch let error as JournalError {
            throw ReplicationError(
                .store,
                "The promoted store at \(directory.path) could not record the start of term \(term): \(error.message) The lease was given up again; mend the store (statejournal verify) and promote it again.",
                cause: error)
        }
    }
}
