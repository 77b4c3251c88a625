import Foundation
import StateJournal

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

    /// The object, the file and the epochs lost, in a sentence.
    public var description: String {
        "\(key)\(file.isEmpty ? "" : " (bytes of \(file))") is damaged: \(reason); "
            + (epochsLost.map { "epochs \($0.lowerBound)…\($0.upperBound) are lost" } ?? "no epoch is lost")
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
    /// Damaged objects the restore stopped before, if any.
    public var damage: [DamagedObject]
    /// The verification of the restored store (clean, or the restore would have failed).
    public var verification: StoreVerification
}

/// Brings a replica back as a local store.
public struct ReplicaRestorer: Sendable {
    /// Where the replica lives.
    public let location: S3Location
    private let replica: Replica

    /// Creates a restorer; `keyring` must hold the keys of encrypted objects.
    public init(from location: S3Location, configuration: S3Configuration, keyring: ReplicationKeyring? = nil) {
        self.location = location
        self.replica = Replica(client: S3Client(configuration: configuration), location: location, keyring: keyring)
    }

    /// The replica's generations, oldest first, each with the epochs it reaches.
    public func generations() async throws -> [(generation: UInt64, epochs: ClosedRange<UInt64>?)] {
        try await requireReplica()
        var result: [(UInt64, ClosedRange<UInt64>?)] = []
        for number in try await replica.generationNumbers() {
            guard let generation = try await replica.generation(number) else { continue }
            result.append((number, generation.epochRange))
        }
        return result
    }

    /// Writes a new store into `directory` (which must be missing or empty) whose latest epoch is
    /// the one `target` asks for, and verifies it with ``StoreInspector/verify(_:)`` before
    /// returning.
    ///
    /// Every object is checked (its envelope's SHA-256, its decryption, the SHA-256 the generation
    /// recorded). When one is damaged, the restore stops before it: the store holds the latest
    /// consistent epoch before the damage, and ``RestoreReport/damage`` says which object and which
    /// epochs.
    ///
    /// - Throws: ``ReplicationError/Code/targetNotEmpty``, ``ReplicationError/Code/nothingShipped``,
    ///   ``ReplicationError/Code/noSuchEpoch``, ``ReplicationError/Code/damagedObject`` when
    ///   nothing consistent is left, ``ReplicationError/Code/wrongKey``,
    ///   ``ReplicationError/Code/missingKey``, or the client's errors.
    public func restore(into directory: URL, target: RestoreTarget = .latest) async throws -> RestoreReport {
        let manager = FileManager.default
        if let names = try? manager.contentsOfDirectory(atPath: directory.path), !names.isEmpty {
            throw ReplicationError(
                .targetNotEmpty,
                "\(directory.path) is not empty; a restore writes a new store, so choose a new directory.")
        }
        try await requireReplica()
        let numbers = try await replica.generationNumbers()
        guard !numbers.isEmpty else {
            throw ReplicationError(
                .nothingShipped, "\(location) holds no generation yet: nothing has been shipped to it.")
        }
        var lastError: ReplicationError?
        var firstDamageError: ReplicationError?
        var earlierDamage: [DamagedObject] = []
        var newestLastEpoch: UInt64?
        // Newest generation first: it reaches every epoch the store retained when it was written;
        // older ones reach epochs that compaction dropped since.
        for number in numbers.reversed() {
            guard let generation = try await replica.generation(number), let range = generation.epochRange else {
                continue
            }
            if case .epoch(let epoch) = target, !range.contains(epoch) {
                lastError = ReplicationError(
                    .noSuchEpoch,
                    "Epoch \(epoch) is not in the replica (the newest generation reaches epochs \(range)).")
                continue
            }
            if case .time(let time) = target, let first = generation.firstEpochMillisecondsHint,
                Double(first) > time.timeIntervalSince1970 * 1000
            {
                continue
            }
            do {
                var report = try await restore(generation, into: directory, target: target)
                // Damage that made a newer generation unusable is reported with what it cost.
                for var found in earlierDamage {
                    if let last = newestLastEpoch, last > report.epoch.epoch {
                        found.epochsLost = (report.epoch.epoch + 1)...last
                    }
                    report.damage.insert(found, at: 0)
                }
                return report
            } catch let error as ReplicationError where error.code == .noSuchEpoch {
                lastError = lastError ?? error
                try? removeContents(of: directory)
            } catch let error as ReplicationError where error.code == .damagedObject {
                // Nothing consistent in this generation (a damaged checkpoint whose earlier
                // segments it no longer names): an older generation may still reach an epoch.
                firstDamageError = firstDamageError ?? error
                earlierDamage.append(
                    DamagedObject(key: error.key ?? "", file: "", reason: error.message, epochsLost: nil))
                newestLastEpoch = newestLastEpoch ?? generation.lastEpoch
                try? removeContents(of: directory)
            }
        }
        if let firstDamageError { throw firstDamageError }
        throw lastError
            ?? ReplicationError(.noSuchEpoch, "No generation of \(location) reaches the requested epoch or time.")
    }

    private func requireReplica() async throws {
        guard try await replica.identity() != nil else {
            throw ReplicationError(.nothingShipped, "\(location) holds no StateJournal replica.")
        }
    }

    private func removeContents(of directory: URL) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    private func restore(_ generation: ReplicaGeneration, into directory: URL, target: RestoreTarget) async throws
        -> RestoreReport
    {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Objects are fetched up to eight at a time ahead of the one being written, and used in order.
        let replica = self.replica
        let objects = generation.files.flatMap(\.objects)
        var fetches: [Int: Task<[UInt8], any Error>] = [:]
        var nextToFetch = 0
        var nextToUse = 0
        defer { for task in fetches.values { task.cancel() } }
        func fetched() async throws -> [UInt8] {
            while nextToFetch < objects.count && nextToFetch < nextToUse + 8 {
                let object = objects[nextToFetch]
                fetches[nextToFetch] = Task { try await Self.fetch(object, from: replica) }
                nextToFetch += 1
            }
            defer {
                fetches[nextToUse] = nil
                nextToUse += 1
            }
            return try await fetches[nextToUse]!.value
        }
        var downloaded = 0
        var bytes: Int64 = 0
        var damage: DamagedObject?
        var kept: [ReplicaGeneration.File] = []
        var lengths: [String: Int64] = [:]
        fileLoop: for file in generation.files {
            let path = directory.appendingPathComponent(file.name).path
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
                let handle = FileHandle(forWritingAtPath: path)
            else {
                throw ReplicationError(.invalidArgument, "Could not create \(path).")
            }
            defer { try? handle.close() }
            for object in file.objects {
                let payload: [UInt8]
                do {
                    payload = try await fetched()
                } catch let error as ReplicationError where error.code == .damagedObject {
                    damage = DamagedObject(
                        key: replica.fullKey(object.key), file: file.name, reason: error.message, epochsLost: nil)
                    // Keep what came before the damaged bytes: a checkpoint is dropped whole (replay
                    // falls back to an older one), a segment is cut where the object starts.
                    if !file.isCheckpoint && object.start > 0 {
                        lengths[file.name] = object.start
                        kept.append(file)
                    } else {
                        try? FileManager.default.removeItem(atPath: path)
                    }
                    if file.isCheckpoint {
                        continue fileLoop
                    }
                    break fileLoop
                }
                try handle.seek(toOffset: UInt64(object.start))
                try handle.write(contentsOf: payload)
                downloaded += 1
                bytes += Int64(payload.count)
            }
            try handle.synchronize()
            kept.append(file)
        }
        var restoredFiles = generation
        restoredFiles.files = kept
        // A segment list must not have holes: after a dropped segment nothing can be replayed.
        let set = restoredFiles.fileSet(lengths: lengths)
        guard set.files.contains(where: { $0.kind == .segment }) else {
            throw ReplicationError(
                .damagedObject,
                "Nothing consistent can be restored from \(location): \(damage.map { "\($0)" } ?? "no segment is left")."
            )
        }
        let epoch: UInt64?
        switch target {
        case .latest: epoch = damage == nil ? nil : nil
        case .epoch(let number): epoch = number
        case .time(let time):
            do {
                try set.assembleStore(in: directory)
                epoch = try StoreInspector(at: directory).epoch(at: time)
            } catch let error as JournalError where error.code == .noSuchEpoch {
                throw ReplicationError(.noSuchEpoch, error.message, cause: error)
            } catch let error as JournalError {
                throw ReplicationError(
                    .damagedObject,
                    "The files of generation \(generation.generation) do not form a store\(damage.map { " once \($0.key) is left out" } ?? ""): \(error.message)",
                    cause: error, key: damage?.key)
            }
        }
        func notAStore(_ error: JournalError) -> ReplicationError {
            ReplicationError(
                .damagedObject,
                "The files of generation \(generation.generation) do not form a store\(damage.map { " once \($0.key) is left out" } ?? ""): \(error.message)",
                cause: error, key: damage?.key)
        }
        let reached: EpochInfo?
        do {
            reached = try set.assembleStore(in: directory, through: epoch)
        } catch let error as JournalError where error.code == .noSuchEpoch && epoch != nil {
            guard damage != nil else { throw ReplicationError(.noSuchEpoch, error.message, cause: error) }
            // The epoch asked for lies beyond the damage: the latest consistent point before it.
            do {
                reached = try set.assembleStore(in: directory)
            } catch let error as JournalError {
                throw notAStore(error)
            }
        } catch let error as JournalError {
            throw notAStore(error)
        }
        guard let reached else {
            throw ReplicationError(
                .damagedObject, "The restored store holds no epoch\(damage.map { ": \($0)" } ?? ".")")
        }
        let verification = StoreInspector.verify(directory)
        guard verification.status == .clean else {
            throw ReplicationError(
                .damagedObject,
                "The restored store does not verify clean: \(verification.failure ?? verification.damage.map { "\($0.file) at \($0.offset): \($0.reason)" } ?? "damaged")."
            )
        }
        if var found = damage {
            if let last = generation.lastEpoch, last > reached.epoch { found.epochsLost = (reached.epoch + 1)...last }
            damage = found
        }
        return RestoreReport(
            epoch: reached, generation: generation.generation, objectsDownloaded: downloaded, bytesDownloaded: bytes,
            damage: damage.map { [$0] } ?? [], verification: verification)
    }
}

extension ReplicaRestorer {
    /// An object's payload, checked against what its generation recorded.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` when it is missing or differs.
    fileprivate static func fetch(_ object: ReplicaGeneration.Object, from replica: Replica) async throws -> [UInt8] {
        guard let fetched = try await replica.get(object.key) else {
            throw ReplicationError(
                .damagedObject, "The object \(object.key) is missing.", key: replica.fullKey(object.key))
        }
        guard fetched.count == object.end - object.start, ReplicaLayout.sha256Hex(fetched) == object.sha256 else {
            throw ReplicationError(
                .damagedObject,
                "The object \(object.key) does not hold the bytes its generation recorded (SHA-256 or length differs).",
                key: replica.fullKey(object.key))
        }
        return fetched
    }
}

extension ReplicaGeneration {
    /// The epochs a restore from this generation reaches.
    var epochRange: ClosedRange<UInt64>? {
        guard let last = lastEpoch, let first = firstEpoch, first <= last else { return nil }
        return first...last
    }

    /// Not known without reading the files: a generation is tried for any time.
    var firstEpochMillisecondsHint: UInt64? { nil }
}
