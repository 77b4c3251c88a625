import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Which epoch a restore brings back.
public enum RestoreTarget: Sendable, Hashable {
    /// The latest epoch the replica holds.
    case latest
    /// One epoch.
    case epoch(UInt64)
    /// The latest epoch committed at or before a time.
    case time(Date)
}

/// An object a restore found damaged, and what it cost.
public struct DamagedObject: Sendable, Hashable, CustomStringConvertible {
    /// The object's key in the bucket.
    public var key: String
    /// The store file whose bytes it held.
    public var file: String
    /// What is wrong with it.
    public var reason: String
    /// The epochs the restore could not reach because of it: from the first epoch after the one
    /// restored to the last the replica holds (empty when none were lost).
    public var epochsLost: ClosedRange<UInt64>?
    /// Whether the object was a generation too damaged to say which epochs it reached: epochs after
    /// the one restored may be lost, how many is not known.
    public var lostEpochsUnknown = false

    /// The object, the file and the epochs lost, in a sentence.
    public var description: String {
        "\(printable(key))\(file.isEmpty ? "" : " (bytes of \(file))") is damaged: \(reason); "
            + (epochsLost.map { "epochs \($0.lowerBound)…\($0.upperBound) are lost" }
                ?? (lostEpochsUnknown ? "the epochs only it reached are lost" : "no epoch is lost"))
    }
}

/// A generation the replica holds that is not in its history (see "The replica's history" in the
/// article "Backing Up and Moving a Store"): a late write of a shipper that had lost its lease, which no restore or
/// follower uses.
public struct OrphanedGeneration: Sendable, Hashable, CustomStringConvertible {
    /// The generation's number.
    public var generation: UInt64
    /// The term of the shipper that wrote it.
    public var term: UInt64
    /// The epochs it reaches: those after the history's last epoch of that term are what the
    /// takeover lost from that shipper (they are in its store only).
    public var epochs: ClosedRange<UInt64>?
    /// Why it is not in the history.
    public var reason: String

    /// The generation, its term, its epochs and why, in a sentence.
    public var description: String {
        "generation \(generation) (term \(term)\(epochs.map { ", epochs \($0.lowerBound)…\($0.upperBound)" } ?? "")) is an orphan: \(reason)"
    }
}

/// What a restore did.
public struct RestoreReport: Sendable, Hashable {
    /// The latest epoch of the restored store.
    public var epoch: EpochInfo
    /// The replica generation restored from.
    public var generation: UInt64
    /// Objects downloaded, and their payload bytes.
    public var objectsDownloaded: Int
    /// Payload bytes downloaded.
    public var bytesDownloaded: Int64
    /// Objects a delta restore did not fetch: their bytes were on the local disk already (in the
    /// old copy, or in the staging directory an interrupted run left), with the SHA-256 the
    /// generation recorded. Zero for a restore into a new or empty directory.
    public var objectsReused = 0
    /// Payload bytes of the objects reused.
    public var bytesReused: Int64 = 0
    /// Damaged objects the restore stopped before, if any.
    public var damage: [DamagedObject]
    /// The verification of the restored store (clean, or the restore would have failed).
    public var verification: StoreVerification
    /// Generations newer than the one restored that are not in the replica's history, newest first:
    /// never restored from.
    public var orphans: [OrphanedGeneration] = []
}

/// Brings a replica back as a local store.
///
/// The bucket is read as hostile input (see "Threat model" in the article "Backing Up and Moving a
/// Store"): every generation is validated before it is used, every local file name is derived
/// from the kind and sequence number the generation gives, files are created through a descriptor
/// of the target directory and never through a symlink, no object is read past the size its
/// generation declares, and with a keyring every object must be sealed by one of its keys.
public struct ReplicaRestorer: Sendable {
    /// Where the replica lives.
    public let location: S3Location
    let replica: Replica
    /// Verifies the restored store (tests slow it down).
    var verifier: @Sendable (URL) -> StoreVerification = { StoreInspector.verifyFraming($0) }

    /// Creates a restorer; `keyring` must hold the keys of encrypted objects.
    public init(from location: S3Location, configuration: S3Configuration, keyring: ReplicationKeyring? = nil) {
        self.location = location
        self.replica = Replica(client: S3Client(configuration: configuration), location: location, keyring: keyring)
    }

    /// Creates a restorer that reads through `replica` (a follower's, whose requests it counts).
    init(replica: Replica) {
        self.location = replica.location
        self.replica = replica
    }

    /// The replica's generations, oldest first, each with the epochs it reaches (`nil` for one
    /// that is damaged or not this replica's). Orphans (``OrphanedGeneration``) are left out: they
    /// are not the replica's history.
    public func generations() async throws -> [(generation: UInt64, epochs: ClosedRange<UInt64>?)] {
        let identity = try await requireReplica()
        var read: [(UInt64, ReplicaGeneration?)] = []
        for number in try await replica.generationNumbers() {
            do {
                guard let generation = try await replica.bound(to: identity).generation(number, of: identity.storeID)
                else { continue }
                read.append((number, generation))
            } catch let error as ReplicationError where Self.isDamage(error) {
                read.append((number, nil))
            }
        }
        let newestFirst = read.reversed().compactMap(\.1)
        guard let index = ReplicaHistory.headIndex(Array(newestFirst.prefix(2))) else {
            return read.map { ($0.0, nil) }
        }
        let head = newestFirst[index]
        return read.compactMap { number, generation in
            guard let generation else { return (number, nil) }
            return ReplicaHistory.placement(of: generation, under: head).isMember
                ? (number, generation.epochRange) : nil
        }
    }

    /// Writes a new store into `directory` (which must be missing or empty) whose latest epoch is
    /// the one `target` asks for, and verifies it before returning, down to its framing: every
    /// record's and every checkpoint's checksum, and every commit against its epoch's records and
    /// the epoch before it, a window at a time, so that the memory a restore takes does not grow with
    /// the store. Decoding the entries and replaying the state is left to opening the store (which
    /// recovers from anything wrong there as from any damage), or to ``StoreInspector/verify(_:)``.
    ///
    /// Every object is checked (its envelope's SHA-256, its decryption, the SHA-256 the generation
    /// recorded). When one is damaged, the restore stops before it: the store holds the latest
    /// consistent epoch before the damage, and ``RestoreReport/damage`` says which object and which
    /// epochs. A generation that is itself damaged (or not sealed by the key, or not this replica's)
    /// is passed over for the newest intact one before it, and reported the same way.
    ///
    /// Memory is bounded whatever the bucket holds: objects up to
    /// ``ReplicaLimits/streamingPieceBytes`` are fetched ahead while their declared sizes add up to
    /// at most ``ReplicaLimits/fetchWindowBytes``, larger ones are read in pieces (or groups of
    /// sealed chunks), a few at once within a window of the same size, checked and written in
    /// order, and none is read past its declared size, so a restore holds at most those two
    /// windows; only an encrypted object of envelope version 1 (written by 0.1.0)
    /// is held whole. Cancelling the task stops it within moments, the verification of the restored
    /// store included, removing what it wrote.
    ///
    /// - Throws: ``ReplicationError/Code/targetNotEmpty`` (also when the directory cannot be read),
    ///   ``ReplicationError/Code/nothingShipped``, ``ReplicationError/Code/noSuchEpoch``,
    ///   ``ReplicationError/Code/damagedObject`` when nothing consistent is left,
    ///   ``ReplicationError/Code/unauthenticated``, ``ReplicationError/Code/wrongKey``,
    ///   ``ReplicationError/Code/missingKey``, ``ReplicationError/Code/cancelled``, or the client's
    ///   errors.
    public func restore(into directory: URL, target: RestoreTarget = .latest) async throws -> RestoreReport {
        let output = try RestoreDirectory(preparing: directory)
        do {
            return try await restore(into: output, target: target)
        } catch {
            output.abandon()
            throw Self.cancelledIfCancelled(error, directory: directory)
        }
    }

    /// Restores as ``restore(into:target:)`` does, and with `delta`, over an older copy of the same
    /// store, fetching only what it lacks.
    ///
    /// With `delta` false this is ``restore(into:target:)``. With `delta` true, `directory` may be
    /// missing, empty, or hold a store whose store id is the replica's (an earlier restore, a
    /// follower's copy, even a damaged one). The new store is built beside it, in
    /// `NAME.restoring`; each object whose bytes are already there, or at the same offsets of the
    /// same file of the old copy, with the SHA-256 the generation recorded, is reused instead of
    /// fetched (``RestoreReport/objectsReused``). Nothing else of the local disk is trusted. The
    /// store written is byte for byte the one a restore into an empty directory writes, verified
    /// the same way; only then is the old copy replaced with it, by renames (the old copy is
    /// renamed to `NAME.replaced`, the new store to `NAME`, then `NAME.replaced` is removed), so that
    /// a restore that fails or is cancelled leaves the old copy as it was.
    ///
    /// A delta restore that fails or is cancelled keeps `NAME.restoring`: running it again resumes,
    /// reusing what the first run fetched wherever it still matches the generation restored (which
    /// may be a newer one); remove `NAME.restoring` to start over. The old copy is held with the
    /// store's writer lock meanwhile, so an app or a follower that holds the store makes the
    /// restore fail before anything is written.
    ///
    /// - Throws: what ``restore(into:target:)`` throws, and with `delta`
    ///   ``ReplicationError/Code/otherStore`` when `directory` holds another store,
    ///   ``ReplicationError/Code/targetNotEmpty`` when it holds something that is not a store, and
    ///   ``ReplicationError/Code/store`` when a writer holds it; `directory` is then left untouched.
    public func restore(into directory: URL, target: RestoreTarget = .latest, delta: Bool) async throws
        -> RestoreReport
    {
        guard delta else { return try await restore(into: directory, target: target) }
        let identity = try await requireReplica()
        let staging = try RestoreStaging(target: directory, storeID: identity.storeID)
        do {
            let report = try await restore(into: staging.output, target: target, reusing: staging.old)
            try checkCancellation()
            try staging.publish()
            return report
        } catch {
            staging.output.abandon()
            throw Self.cancelledIfCancelled(error, directory: directory)
        }
    }

    /// `error`, or ``ReplicationError/Code/cancelled`` when the task was cancelled and `error` does
    /// not already say so.
    private static func cancelledIfCancelled(_ error: any Error, directory: URL) -> any Error {
        if Task.isCancelled, (error as? ReplicationError)?.code != .cancelled {
            return ReplicationError(.cancelled, "The restore into \(directory.path) was cancelled.", cause: error)
        }
        return error
    }

    /// Restores into a directory already opened for it (a follower's first generation, a delta
    /// restore's staging directory, reusing what `old` holds); the caller abandons `output` when
    /// this throws.
    func restore(into output: RestoreDirectory, target: RestoreTarget, reusing old: LocalCopies? = nil) async throws
        -> RestoreReport
    {
        let identity = try await requireReplica()
        if identity.encrypted == true && replica.keyring == nil {
            throw ReplicationError(
                .missingKey, "\(location) is encrypted (its replica.json says so); give its key to restore it.")
        }
        let numbers = try await replica.generationNumbers()
        guard !numbers.isEmpty else {
            throw ReplicationError(
                .nothingShipped, "\(location) holds no generation yet: nothing has been shipped to it.")
        }
        var lastError: ReplicationError?
        var firstDamageError: ReplicationError?
        var earlierDamage: [DamagedObject] = []
        var newestLastEpoch: UInt64?
        var authority: ReplicaGeneration?
        var orphans: [OrphanedGeneration] = []
        var passedOver = 0
        // The epochs the generations read reach, newest first, for a message when none holds the one asked for.
        var reached: (newest: ClosedRange<UInt64>, oldest: ClosedRange<UInt64>)?
        // Newest generation first: it reaches every epoch the store retained when it was written;
        // older ones reach epochs that compaction dropped since.
        for number in numbers.reversed() {
            try checkCancellation()
            if passedOver > ReplicaLimits.maximumGenerationsPassedOver {
                throw ReplicationError(
                    .damagedObject,
                    """
                    More than \(ReplicaLimits.maximumGenerationsPassedOver) generations of \(location), the newest ones, \
                    are damaged or were not written by its shipper (the first: \(firstDamageError?.message ?? "unknown")). \
                    The bucket holds objects its shipper did not write: restore from a copy of the replica you trust, \
                    or remove the generations above the newest intact one.
                    """,
                    cause: firstDamageError)
            }
            let generation: ReplicaGeneration
            do {
                guard let found = try await replica.bound(to: identity).generation(number, of: identity.storeID) else {
                    continue
                }
                generation = found
            } catch let error as ReplicationError where Self.passesOver(error) {
                // A generation that cannot be used: an older one may still reach an epoch.
                firstDamageError = firstDamageError ?? error
                passedOver += 1
                earlierDamage.append(
                    DamagedObject(
                        key: error.key ?? replica.fullKey(ReplicaLayout.generation(number)), file: "",
                        reason: error.message, epochsLost: nil, lostEpochsUnknown: newestLastEpoch == nil))
                continue
            }
            // The history's head says which generations are its history (``ReplicaHistory``): one
            // written by a shipper that had already lost its lease is an orphan, never restored from.
            if let authority, case .orphan(let why) = ReplicaHistory.placement(of: generation, under: authority) {
                orphans.append(
                    OrphanedGeneration(
                        generation: number, term: generation.term ?? 0, epochs: generation.epochRange, reason: why))
                continue
            }
            if authority == nil {
                // The newest generation read is the head, unless the one below it is of a newer
                // term and shows it is an orphan (a late write landing at the newest number).
                if let below = try await self.generation(below: number, in: numbers, identity: identity),
                    ReplicaHistory.headIndex([generation, below]) == 1
                {
                    authority = below
                    if case .orphan(let why) = ReplicaHistory.placement(of: generation, under: below) {
                        orphans.append(
                            OrphanedGeneration(
                                generation: number, term: generation.term ?? 0, epochs: generation.epochRange,
                                reason: why))
                    }
                    continue
                }
                authority = generation
            }
            guard let range = generation.epochRange else { continue }
            reached = (reached?.newest ?? range, range)
            if case .epoch(let epoch) = target, !range.contains(epoch), let reached {
                let span = "\(min(reached.oldest.lowerBound, reached.newest.lowerBound))…\(reached.newest.upperBound)"
                lastError = ReplicationError(
                    .noSuchEpoch,
                    span == "\(reached.newest)"
                        ? "Epoch \(epoch) is not in the replica: its newest generation reaches epochs \(reached.newest)."
                        : """
                        Epoch \(epoch) is not in the replica: its generations reach epochs \(span) (the newest \
                        \(reached.newest)), and none holds epoch \(epoch) as an epoch of its own: the store folded \
                        it into a checkpoint before it was shipped, or retention dropped the generations that held it.
                        """)
                continue
            }
            do {
                var report = try await restore(
                    generation, into: output, target: target, from: replica.bound(to: identity), reusing: old)
                // Damage that made a newer generation unusable is reported with what it cost.
                report.orphans = orphans
                for var found in earlierDamage {
                    if let last = newestLastEpoch, last > report.epoch.epoch {
                        found.epochsLost = (report.epoch.epoch + 1)...last
                    }
                    report.damage.insert(found, at: 0)
                }
                return report
            } catch let error as ReplicationError where error.code == .noSuchEpoch {
                lastError = lastError ?? error
                output.removeEverythingCreated()
            } catch let error as ReplicationError where Self.isDamage(error) {
                // Nothing consistent in this generation (a damaged checkpoint whose earlier
                // segments it no longer names): an older generation may still reach an epoch.
                firstDamageError = firstDamageError ?? error
                passedOver += 1
                earlierDamage.append(
                    DamagedObject(
                        key: error.key ?? replica.fullKey(ReplicaLayout.generation(number)), file: "",
                        reason: error.message, epochsLost: nil))
                newestLastEpoch = newestLastEpoch ?? generation.lastEpoch
                output.removeEverythingCreated()
            }
        }
        if let firstDamageError { throw firstDamageError }
        throw lastError
            ?? ReplicationError(.noSuchEpoch, "No generation of \(location) reaches the requested epoch or time.")
    }

    /// The generation numbered just below `number` among `numbers`, or `nil` when there is none or
    /// it cannot be used.
    private func generation(below number: UInt64, in numbers: [UInt64], identity: ReplicaIdentity) async throws
        -> ReplicaGeneration?
    {
        guard let index = numbers.lastIndex(where: { $0 < number }) else { return nil }
        do {
            return try await replica.bound(to: identity).generation(numbers[index], of: identity.storeID)
        } catch let error as ReplicationError where Self.passesOver(error) {
            return nil
        }
    }

    /// Whether `error` says that an object of the bucket cannot be trusted (damaged, sealed by no
    /// key, not sealed at all), as opposed to a problem of the request or of the local disk.
    static func isDamage(_ error: ReplicationError) -> Bool {
        error.code == .damagedObject || error.code == .unauthenticated || error.code == .wrongKey
    }

    /// Whether a generation that failed with `error` is passed over for an older one: damage, or a
    /// key id the keyring lacks (anyone can write a generation under a made-up key id; when every
    /// generation lacks its key, the first such error is what the restore throws).
    static func passesOver(_ error: ReplicationError) -> Bool {
        isDamage(error) || error.code == .missingKey
    }

    private func checkCancellation() throws {
        if Task.isCancelled { throw ReplicationError(.cancelled, "The restore was cancelled.") }
    }

    private func requireReplica() async throws -> ReplicaIdentity {
        guard let identity = try await replica.identity() else {
            throw ReplicationError(.nothingShipped, "\(location) holds no StateJournal replica.")
        }
        return identity
    }

    /// Fetches a generation's objects in order, several ahead of the one being written while their
    /// declared sizes fit in ``ReplicaLimits/fetchWindowBytes``.
    private struct Prefetcher {
        /// An object as the restore gets it: its payload, or, for an object larger than
        /// ``ReplicaLimits/streamingPieceBytes``, left for ``ObjectStream`` to write as it comes.
        enum Fetched {
            case payload([UInt8])
            case stream
            /// Carried by a generation: written already, this many bytes (``CarriedPieces``).
            case written(Int64)
        }

        let objects: [ReplicaGeneration.Object]
        let replica: Replica
        private var fetches: [Int: Task<[UInt8], any Error>] = [:]
        private var nextToFetch = 0
        private var nextToUse = 0
        private var bytesInFlight: Int64 = 0

        init(objects: [ReplicaGeneration.Object], replica: Replica) {
            self.objects = objects
            self.replica = replica
        }

        /// The next object's payload, checked against what its generation recorded.
        mutating func next() async throws -> Fetched {
            while nextToFetch < objects.count, nextToFetch - nextToUse < ReplicaLimits.fetchConcurrency {
                let size = Self.heldBytes(objects[nextToFetch])
                if size > Int64(ReplicaLimits.streamingPieceBytes) && !objects[nextToFetch].isInline {
                    nextToFetch += 1
                    continue
                }
                guard nextToFetch == nextToUse || bytesInFlight + size <= ReplicaLimits.fetchWindowBytes else { break }
                let object = objects[nextToFetch]
                let replica = self.replica
                fetches[nextToFetch] = Task { try await ReplicaRestorer.fetch(object, from: replica) }
                bytesInFlight += size
                nextToFetch += 1
            }
            let index = nextToUse
            nextToUse += 1
            guard let task = fetches.removeValue(forKey: index) else { return .stream }
            bytesInFlight -= Self.heldBytes(objects[index])
            return .payload(
                try await withTaskCancellationHandler {
                    try await task.value
                } onCancel: {
                    task.cancel()
                })
        }

        func cancelAll() {
            for task in fetches.values { task.cancel() }
        }

        /// What fetching `object` may hold: its size, or for bytes a generation carries inline the
        /// largest generation object, which is read whole.
        static func heldBytes(_ object: ReplicaGeneration.Object) -> Int64 {
            object.isInline ? Int64(ReplicaLimits.maximumGenerationBytes) : object.end - object.start
        }
    }

    private func restore(
        _ generation: ReplicaGeneration, into output: RestoreDirectory, target: RestoreTarget, from replica: Replica,
        reusing old: LocalCopies?
    ) async throws -> RestoreReport {
        let plan = RestorePlan(validated: generation)
        // Which objects are on the local disk already: only the others are fetched.
        var reused = plan.files.map { [Bool](repeating: false, count: $0.objects.count) }
        if let old {
            output.removeAllBut(Set(plan.files.map(\.name)))
            for (index, planned) in plan.files.enumerated() {
                try checkCancellation()
                let descriptor = try output.create(planned.name)
                defer { close(descriptor) }
                reused[index] = try old.reuse(planned.objects, in: descriptor, name: planned.name, staging: output.url)
            }
        }
        // Bytes generations carry inline: written first, each carrier fetched once (CarriedPieces).
        let carried = try await CarriedPieces.write(plan, skipping: reused, into: output, from: replica)
        let toFetch = zip(plan.files, reused).flatMap { planned, flags in
            zip(planned.objects, flags).filter { !$0.1 && !$0.0.isInline }.map(\.0)
        }
        var prefetcher = Prefetcher(objects: toFetch, replica: replica)
        defer { prefetcher.cancelAll() }
        var downloaded = 0
        var bytes: Int64 = 0
        var reusedObjects = 0
        var reusedBytes: Int64 = 0
        var damage: DamagedObject?
        var kept: [ReplicaGeneration.File] = []
        var lengths: [String: Int64] = [:]
        fileLoop: for (fileIndex, planned) in plan.files.enumerated() {
            // The name is derived from the validated kind and sequence, never taken from the bucket.
            let name = planned.name
            let file = planned.described
            let descriptor = try carried.open(name, in: output)
            var open = true
            defer { if open { close(descriptor) } }
            for (objectIndex, object) in file.objects.enumerated() {
                try checkCancellation()
                if reused[fileIndex][objectIndex] {
                    // Validation bounds every object's range: the sums cannot overflow.
                    reusedObjects += 1
                    reusedBytes += object.end - object.start
                    continue
                }
                var written: Int64
                do {
                    let fetched: Prefetcher.Fetched
                    if let placed = try carried.written(file: fileIndex, object: objectIndex) {
                        fetched = .written(placed)
                    } else {
                        fetched = try await prefetcher.next()
                    }
                    switch fetched {
                    case .written(let count): written = count
                    case .payload(let payload):
                        try output.write(payload, to: descriptor, at: object.start, name: name)
                        written = Int64(payload.count)
                    case .stream:
                        // Too large to hold: written as its pieces come, checked on the way.
                        let stream = ObjectStream(replica: replica, object: object)
                        let outcome = try await stream.run { bytes, offset in
                            try output.write(bytes, to: descriptor, at: offset, name: name)
                        }
                        switch outcome {
                        case .written(let count): written = count
                        case .sealed(let payload):
                            try output.write(payload, to: descriptor, at: object.start, name: name)
                            written = Int64(payload.count)
                        }
                    }
                } catch let error as ReplicationError where Self.isDamage(error) {
                    damage = DamagedObject(
                        key: replica.fullKey(object.key), file: name, reason: error.message, epochsLost: nil)
                    // Keep what came before the damaged bytes: a checkpoint is dropped whole (replay
                    // falls back to an older one), a segment is cut where the object starts.
                    if !file.isCheckpoint && object.start > 0 {
                        lengths[name] = object.start
                        kept.append(file)
                        try output.truncate(descriptor, to: object.start, name: name)
                        try output.finish(descriptor, name: name)
                    } else {
                        close(descriptor)
                        output.remove(name)
                    }
                    open = false
                    if file.isCheckpoint { continue fileLoop }
                    break fileLoop
                }
                // Validation made the objects of a file follow one another from offset 0.
                downloaded += 1
                bytes += written
            }
            // A staging file an earlier run left may be longer than the file restored.
            if output.isResumable { try output.truncate(descriptor, to: file.objects.last?.end ?? 0, name: name) }
            open = false
            try output.finish(descriptor, name: name)
            kept.append(file)
        }
        // In a staging directory: the files of the plan that damage left out.
        output.removeAllBut(Set(kept.map(\.name)))
        carried.removeFiles(notIn: Set(kept.map(\.name)), from: output)
        try output.sync()
        var restoredFiles = generation
        restoredFiles.files = kept
        // A segment list must not have holes: after a dropped segment nothing can be replayed.
        let set = restoredFiles.fileSet(lengths: lengths)
        guard set.files.contains(where: { $0.kind == .segment }) else {
            throw ReplicationError(
                .damagedObject,
                "Nothing consistent can be restored from generation \(generation.generation) of \(location): "
                    + (damage.map { "\(printable($0.key)) is damaged (\($0.reason))" } ?? "no segment is left") + ".",
                key: damage?.key)
        }
        func notAStore(_ error: JournalError) -> ReplicationError {
            ReplicationError(
                .damagedObject,
                "The files of generation \(generation.generation) do not form a store\(damage.map { " once \(printable($0.key)) is left out" } ?? ""): \(error.message)",
                cause: error, key: damage?.key)
        }
        let directory = output.url
        // Assembling reads every restored file, and a forged segment can make that scan long: it
        // stops at the first read after a cancellation (SIGTERM), as the transfers do.
        @Sendable func cancelled() -> Bool { Task.isCancelled }
        func assemble(through epoch: UInt64? = nil, findingLatest: Bool = true) throws -> EpochInfo? {
            do {
                return try set.assembleStore(
                    in: directory, through: epoch, isCancelled: cancelled, findingLatest: findingLatest)
            } catch is CancellationError {
                throw ReplicationError(
                    .cancelled, "The restore was cancelled while assembling the store in \(directory.path).")
            }
        }
        let epoch: UInt64?
        switch target {
        case .latest: epoch = nil
        case .epoch(let number): epoch = number
        case .time(let time):
            do {
                _ = try assemble()
                epoch = try StoreInspector(at: directory).epoch(at: time)
            } catch let error as JournalError where error.code == .noSuchEpoch {
                throw ReplicationError(.noSuchEpoch, error.message, cause: error)
            } catch let error as JournalError {
                throw notAStore(error)
            }
        }
        try checkCancellation()
        // The latest epoch is found by the verification below, which reads every file once: the
        // store is not read to find it first.
        let findsLatestByVerifying = epoch == nil
        var assembled: EpochInfo?
        do {
            assembled = try assemble(through: epoch, findingLatest: !findsLatestByVerifying)
        } catch let error as JournalError where error.code == .noSuchEpoch && epoch != nil {
            guard damage != nil else { throw ReplicationError(.noSuchEpoch, error.message, cause: error) }
            // The epoch asked for lies beyond the damage: the latest consistent point before it.
            do {
                assembled = try assemble()
            } catch let error as JournalError {
                throw notAStore(error)
            }
        } catch let error as JournalError {
            throw notAStore(error)
        }
        func checkReached(_ reached: EpochInfo?) throws -> EpochInfo {
            guard let reached else {
                throw ReplicationError(
                    .damagedObject, "The restored store holds no epoch\(damage.map { ": \($0)" } ?? ".")")
            }
            if case .latest = target, damage == nil {
                try generation.checkReached(
                    reached.epoch, key: replica.fullKey(ReplicaLayout.generation(generation.generation)))
            }
            return reached
        }
        let reachedByAssembling = try findsLatestByVerifying ? nil : checkReached(assembled)
        try checkCancellation()
        // The verification reads every checkpoint and segment once: seconds to minutes for a large
        // store, during which a cancellation (SIGTERM) used to wait. It only reads, so it is left
        // to finish unobserved when the restore is cancelled.
        let verify = verifier
        let verification = try await Self.cancellably("verifying \(directory.path)") { verify(directory) }
        guard verification.status == .clean else {
            let found = [verification.damage].compactMap { $0 } + verification.damagedCheckpoints
            let what =
                verification.failure
                ?? (found.isEmpty
                    ? "damaged"
                    : found.map { "\(printable($0.file)) at \($0.offset): \(printable($0.reason))" }.joined(
                        separator: "; "))
            // With an object left out, that is why: the error names it, as an assembly that fails does.
            throw ReplicationError(
                .damagedObject,
                "The restored store does not verify clean\(damage.map { " once \(printable($0.key)) is left out" } ?? ""): \(what).",
                key: damage?.key)
        }
        let reached = try reachedByAssembling ?? checkReached(verification.consistentEpochInfo)
        if var found = damage {
            if let last = generation.lastEpoch, last > reached.epoch { found.epochsLost = (reached.epoch + 1)...last }
            damage = found
        }
        return RestoreReport(
            epoch: reached, generation: generation.generation, objectsDownloaded: downloaded, bytesDownloaded: bytes,
            objectsReused: reusedObjects, bytesReused: reusedBytes, damage: damage.map { [$0] } ?? [],
            verification: verification)
    }
}

extension ReplicaRestorer {
    /// The result of `work`, run on a thread of its own, or ``ReplicationError/Code/cancelled`` as
    /// soon as the calling task is cancelled, whether `work` has finished or not: for synchronous
    /// work that only reads, which may then go on unobserved until it returns.
    static func cancellably<Result: Sendable>(_ what: String, _ work: @escaping @Sendable () -> Result) async throws
        -> Result
    {
        let outcome = OneOutcome<Result>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.attach(continuation)
                Thread.detachNewThread { outcome.finish(.success(work())) }
            }
        } onCancel: {
            outcome.finish(.failure(ReplicationError(.cancelled, "The restore was cancelled while \(what).")))
        }
    }

    /// The first outcome given, delivered once to the continuation, whichever comes first.
    private final class OneOutcome<Value: Sendable>: @unchecked Sendable {
        // @unchecked Sendable: both properties are read and written under `lock` only.
        private let lock = NSLock()
        private var continuation: CheckedContinuation<Value, any Error>?
        private var outcome: Swift.Result<Value, any Error>?

        func attach(_ continuation: CheckedContinuation<Value, any Error>) {
            let ready: Swift.Result<Value, any Error>? = lock.withLock {
                if let outcome { return outcome }
                self.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }

        func finish(_ result: Swift.Result<Value, any Error>) {
            let waiting: CheckedContinuation<Value, any Error>? = lock.withLock {
                guard outcome == nil else { return nil }
                outcome = result
                defer { continuation = nil }
                return continuation
            }
            waiting?.resume(with: result)
        }
    }

    /// An object's payload, checked against what its generation recorded; never read past the size
    /// the generation declares.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` when it is missing, larger or differs.
    static func fetch(_ object: ReplicaGeneration.Object, from replica: Replica) async throws -> [UInt8] {
        let size = object.end - object.start
        if object.isInline { return try await fetchInline(object, from: replica) }
        guard let fetched = try await replica.get(object.key, maximumPayload: Int(size)) else {
            throw ReplicationError(
                .damagedObject, "The object \(object.key) is missing.", key: replica.fullKey(object.key))
        }
        guard fetched.count == size, ReplicaLayout.sha256Hex(fetched) == object.sha256 else {
            throw ReplicationError(
                .damagedObject,
                "The object \(object.key) does not hold the bytes its generation recorded (SHA-256 or length differs).",
                key: replica.fullKey(object.key))
        }
        return fetched
    }

    /// Bytes a generation carries inline, checked against what the generation naming them recorded
    /// (``CarrierPass/payload(of:in:from:)``).
    private static func fetchInline(_ object: ReplicaGeneration.Object, from replica: Replica) async throws -> [UInt8] {
        let inline = try await replica.carriers.inline(of: object.key) {
            try await carriedBytes(of: object.key, from: replica)
        }
        return try CarrierPass.payload(of: object, in: inline, from: replica)
    }

    /// The inline bytes of the generation object `name`, read no further than a generation may be.
    static func carriedBytes(of name: String, from replica: Replica) async throws -> ArraySlice<UInt8> {
        let key = replica.fullKey(name)
        guard let payload = try await replica.get(name, maximumPayload: ReplicaLimits.maximumGenerationBytes) else {
            throw ReplicationError(
                .damagedObject, "The generation \(printable(name)) that carries bytes of a file is missing.", key: key)
        }
        return try GenerationContainer.open(payload, key: key).inline
    }
}

extension ReplicaGeneration {
    /// The epochs a restore from this generation reaches.
    var epochRange: ClosedRange<UInt64>? {
        guard let last = lastEpoch, let first = firstEpoch, first <= last else { return nil }
        return first...last
    }
}
