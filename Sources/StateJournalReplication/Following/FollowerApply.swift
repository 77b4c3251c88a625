import Foundation
import StateJournal

/// What a follower knows of the files in its directory: their committed lengths, and which of a
/// generation's objects are known to hold the same bytes as the local files.
struct FollowedFiles: Sendable {
    /// One local file.
    struct File: Sendable {
        var length: Int64
        var sealed: Bool
        /// Objects (by key) whose bytes the local file holds at their range.
        var matching: Set<String> = []
    }

    var files: [String: File] = [:]
    /// The fields of the manifest last written, to skip writing an identical one.
    var manifestKey: String?

    /// The files of a local store, none known to match any object yet.
    init(local set: StoreFileSet?) {
        for file in set?.files ?? [] { files[file.name] = File(length: file.length, sealed: file.isSealed) }
        manifestKey = set.map(Self.manifestKey)
    }

    /// The files of a generation now held whole.
    init(applied generation: ReplicaGeneration) {
        for file in generation.files {
            files[file.name] = File(
                length: file.length, sealed: file.sealed, matching: Set(file.objects.map(\.identity)))
        }
        manifestKey = Self.manifestKey(generation.fileSet())
    }

    /// What a manifest for `set` holds.
    static func manifestKey(_ set: StoreFileSet) -> String {
        let files = set.files.map { file in
            file.kind == .checkpoint
                ? "c\(file.sequence):\(file.lastEpoch):\(file.timestampMilliseconds)" : "s\(file.sequence)"
        }
        return "\(set.storeID) \(set.generation) \(set.nextFileSequence) \(set.epochFloor) "
            + files.joined(separator: ",")
    }
}

/// What applying one generation fetched.
struct AppliedCounts: Sendable {
    var objects = 0
    var bytes: Int64 = 0
}

/// Applies one validated generation to a follower's directory, in place, so that readers can read
/// the store all the while:
///
/// 1. Every file the generation names is brought to its bytes: a new file (a checkpoint, a sealed
///    segment, a new live segment) is downloaded under a staged name and synced; the live segment
///    grows by the bytes beyond its local length, appended in place (an object that straddles its
///    local end is compared with the local bytes before the rest is appended); a file whose local
///    bytes differ from the generation's (a segment the shipper shipped again from its start after a
///    power cut) is downloaded whole under a staged name. Every object is checked against the
///    SHA-256 its generation recorded, as a restore checks it, and read no further than its declared
///    size. Bytes generations carry inline are written last, at their offsets, each carrier fetched
///    once for all the pieces it carries (``CarrierPass``), whatever the order the generation names
///    them in: a pass fetches each carrier at most once, but for the one piece per file that may
///    straddle its local end (fetched first, to compare it).
/// 2. The files are checked as a store before anything is renamed into place: the framing, record
///    checksums and commits of every segment after the newest checkpoint (and the newest checkpoint,
///    a window at a time, when it is new), read through the staged names — the scan a shipper runs
///    on every pass, whose cost compaction bounds. The generation's last epoch must be the one the
///    files reach.
/// 3. The staged files are renamed into place, the directory synced, the manifest replaced
///    atomically, and the files the generation no longer names removed.
///
/// When anything fails before step 3, the staged files are removed and the appended files cut back
/// to their length: the store is as it was. Bytes appended to the live segment are visible to
/// readers before the check, as a writer's are: they read only what ends with a valid commit record,
/// and what fails the check is cut back.
struct FollowerApply {
    let replica: Replica
    let directory: FollowerDirectory
    let generation: ReplicaGeneration
    let isCancelled: @Sendable () -> Bool
    /// When set, a local file whose bytes differ from the generation's is not replaced if this
    /// says the file belongs to an intact local store (which then holds a history of its own): the
    /// apply stops with `Diverged` instead, leaving the directory as it was. A damaged local store
    /// is repaired.
    var localStoreIsIntact: ((String) -> Bool)? = nil
    /// Where an apply stops as a crash would stop it, leaving the directory as it is (tests only).
    var interruption: (@Sendable (Step) -> Bool)? = nil

    /// The points between the steps of an apply.
    enum Step: Sendable, Hashable {
        /// Every file fetched (staged, or appended in place) and synced; nothing checked.
        case fetched
        /// The files checked as a store; nothing renamed.
        case checked
        /// That many staged files renamed into place; the manifest not replaced.
        case published(Int)
        /// The manifest replaced; the files the generation no longer names not removed.
        case manifestReplaced
    }

    /// An apply stopped by ``interruption``.
    struct Interrupted: Error {
        var step: Step
    }

    /// A local file differs from the generation's bytes.
    private struct LocalDiffers: Error {}

    /// The intact local file `name` holds bytes that differ from the generation's.
    struct Diverged: Error {
        var name: String
    }

    /// Applies the generation to the files `current` describes; returns what the directory then holds.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` (an object, or the files as a store),
    ///   ``ReplicationError/Code/cancelled``, ``ReplicationError/Code/store``, the client's errors;
    ///   the directory is then as it was.
    func run(over current: FollowedFiles, counts: inout AppliedCounts) async throws -> FollowedFiles {
        var staged: [String] = []
        var appended: [(name: String, length: Int64)] = []
        // Carried pieces, written once every file has been through, a carrier at a time.
        var carried = Carried()
        do {
            for file in RestorePlan(validated: generation).files {
                try checkCancellation()
                let name = file.name
                if let local = current.files[name], directory.size(of: name) != nil,
                    local.length <= file.described.length
                {
                    do {
                        if try await extend(name, from: local, to: file.described, carried: &carried, counts: &counts) {
                            appended.append((name, local.length))
                        }
                        continue
                    } catch is LocalDiffers {
                        // Nothing was written: the file is downloaded whole and replaces it, unless
                        // it is the intact store's own history.
                        if let localStoreIsIntact, localStoreIsIntact(name) { throw Diverged(name: name) }
                    }
                }
                staged.append(name)
                try await download(name, file.described, carried: &carried, counts: &counts)
            }
            try await write(carried, counts: &counts)
            try directory.sync()
            try interrupt(at: .fetched)
            try await check(staged: staged, newCheckpoint: isNewCheckpoint(current: current, staged: staged))
            try interrupt(at: .checked)
        } catch {
            if error is Interrupted { throw error }
            for name in staged { directory.removeStaged(name) }
            for (name, length) in appended {
                if let file = try? directory.openExisting(name) {
                    try? directory.truncate(file, to: length, name: name)
                    try? directory.sync(file, name: name)
                    close(file)
                }
            }
            if let replication = error as? ReplicationError { throw replication }
            if let diverged = error as? Diverged { throw diverged }
            if isCancelled() || error is CancellationError {
                throw ReplicationError(.cancelled, "Applying generation \(generation.generation) was cancelled.")
            }
            throw ReplicationError(
                .store, "Could not apply generation \(generation.generation) to \(directory.url.path): \(error)",
                cause: error)
        }
        for (index, name) in staged.enumerated() {
            try directory.publish(name)
            try interrupt(at: .published(index + 1))
        }
        try directory.sync()
        var next = FollowedFiles(applied: generation)
        if next.manifestKey != current.manifestKey || !staged.isEmpty {
            do {
                try generation.fileSet().writeManifest(in: directory.url)
            } catch let error as JournalError {
                throw ReplicationError(
                    .store, "Could not write the manifest in \(directory.url.path): \(error.message)", cause: error)
            }
        } else {
            next.manifestKey = current.manifestKey
        }
        try interrupt(at: .manifestReplaced)
        let named = Set(generation.files.map(\.name))
        for name in current.files.keys where !named.contains(name) { directory.remove(name) }
        try directory.sync()
        return next
    }

    /// Whether the newest checkpoint of the generation is one this apply brings in.
    private func isNewCheckpoint(current: FollowedFiles, staged: [String]) -> Bool {
        guard let newest = generation.files.last(where: \.isCheckpoint) else { return false }
        return staged.contains(newest.name) || current.files[newest.name] == nil
    }

    /// Carried pieces an apply writes after the rest (``CarrierPass``), and the files they go to.
    ///
    /// A file that has pieces here is synced once they are written, not before.
    private struct Carried {
        /// The pieces, in the order the files name them.
        var pieces: [ReplicaGeneration.Object] = []
        /// For each piece, the name of the file it is written to (a staged name for a download).
        var files: [String] = []
        /// The files to sync once the pieces are written, in order.
        var toSync: [String] = []

        mutating func add(_ object: ReplicaGeneration.Object, to file: String) {
            pieces.append(object)
            files.append(file)
            if toSync.last != file { toSync.append(file) }
        }
    }

    /// Brings the local file `name` (which holds `local`) to `file`'s bytes in place: checks the
    /// objects within its local length, appends those beyond it (or leaves the carried ones beyond
    /// it to `carried`). Returns whether it appended or left a piece to `carried`.
    ///
    /// A carried piece that straddles the local length is fetched here, as any other object, so that
    /// the local bytes it covers are compared before anything is written: at most one per file.
    ///
    /// - Throws: `LocalDiffers` before writing anything when the local bytes are not the
    ///   generation's.
    private func extend(
        _ name: String, from local: FollowedFiles.File, to file: ReplicaGeneration.File, carried: inout Carried,
        counts: inout AppliedCounts
    ) async throws -> Bool {
        let descriptor = try directory.openExisting(name)
        defer { close(descriptor) }
        let localLength = local.length
        var wrote = false
        var left: [ReplicaGeneration.Object] = []
        for object in file.objects {
            try checkCancellation()
            if object.end <= localLength {
                if local.matching.contains(object.identity) { continue }
                // Read locally, not downloaded: the local bytes must be the object's.
                guard try directory.sha256Hex(of: descriptor, object.start..<object.end, name: name) == object.sha256
                else { throw LocalDiffers() }
                continue
            }
            if object.isInline && object.start >= localLength {
                left.append(object)
                continue
            }
            let fetched = try await fetch(object) { bytes, offset in
                let end = offset + Int64(bytes.count)
                if offset < localLength {
                    // Bytes the local file has: they must be the same.
                    let overlap = Int(min(end, localLength) - offset)
                    let have = try directory.read(descriptor, offset..<(offset + Int64(overlap)), name: name)
                    guard have.elementsEqual(bytes.prefix(overlap)) else { throw LocalDiffers() }
                    if overlap < bytes.count {
                        try directory.write(
                            Array(bytes[overlap...]), to: descriptor, at: offset + Int64(overlap), name: name)
                        wrote = true
                    }
                } else {
                    try directory.write(bytes, to: descriptor, at: offset, name: name)
                    wrote = true
                }
            }
            counts.objects += 1
            counts.bytes += fetched
        }
        if let size = directory.size(of: name), size != file.length {
            try directory.truncate(descriptor, to: file.length, name: name)
            wrote = true
        }
        // The local bytes are the generation's: from here the file only grows beyond them.
        for object in left { carried.add(object, to: name) }
        if left.isEmpty && wrote { try directory.sync(descriptor, name: name) }
        return wrote || !left.isEmpty
    }

    /// Downloads all of `file` under its staged name, synced, but for its carried pieces, left to
    /// `carried` (which syncs it once they are written).
    private func download(
        _ name: String, _ file: ReplicaGeneration.File, carried: inout Carried, counts: inout AppliedCounts
    ) async throws {
        let descriptor = try directory.createStaged(name)
        defer { close(descriptor) }
        let stagedName = FollowerDirectory.staged(name)
        var left = false
        for object in file.objects {
            try checkCancellation()
            if object.isInline {
                carried.add(object, to: stagedName)
                left = true
                continue
            }
            counts.bytes += try await fetch(object) { bytes, offset in
                try directory.write(bytes, to: descriptor, at: offset, name: stagedName)
            }
            counts.objects += 1
        }
        if !left { try directory.sync(descriptor, name: stagedName) }
    }

    /// Writes the carried pieces, each carrier fetched once (``CarrierPass``), at their offsets in
    /// their files, and syncs those files.
    ///
    /// - Throws: the error of the first piece, in the order the files name them, that could not be
    ///   written (its carrier missing or damaged, its bytes not the ones recorded).
    private func write(_ carried: Carried, counts: inout AppliedCounts) async throws {
        guard !carried.pieces.isEmpty else { return }
        var open: (name: String, descriptor: Int32)?
        func closeOpen() {
            if let open { close(open.descriptor) }
            open = nil
        }
        defer { closeOpen() }
        let directory = self.directory
        let outcomes = try await CarrierPass.run(
            carried.pieces, from: replica,
            write: { index, payload in
                let name = carried.files[index]
                if open?.name != name {
                    closeOpen()
                    open = (name, try directory.openExisting(name))
                }
                try directory.write(payload, to: open!.descriptor, at: carried.pieces[index].start, name: name)
            }, done: closeOpen)
        for outcome in outcomes {
            counts.bytes += try outcome.get()
            counts.objects += 1
        }
        for name in carried.toSync {
            try checkCancellation()
            let descriptor = try directory.openExisting(name)
            defer { close(descriptor) }
            try directory.sync(descriptor, name: name)
        }
    }

    /// Fetches an object, checked against its generation, and hands its payload to `sink` in order
    /// (a piece at a time for a large one); returns the payload's length.
    private func fetch(
        _ object: ReplicaGeneration.Object, into sink: ([UInt8], Int64) throws -> Void
    ) async throws -> Int64 {
        if object.end - object.start > Int64(ReplicaLimits.streamingPieceBytes), !object.isInline {
            switch try await ObjectStream(replica: replica, object: object).run(writing: sink) {
            case .written(let count): return count
            case .sealed(let payload):
                try sink(payload, object.start)
                return Int64(payload.count)
            }
        }
        let payload = try await ReplicaRestorer.fetch(object, from: replica)
        try sink(payload, object.start)
        return Int64(payload.count)
    }

    /// Checks the files as the store the generation describes, reading staged files where they are.
    private func check(staged: [String], newCheckpoint: Bool) async throws {
        let set = generation.fileSet()
        let url = directory.url
        let names = Dictionary(uniqueKeysWithValues: staged.map { ($0, FollowerDirectory.staged($0)) })
        let cancelled = isCancelled
        let outcome: Result<StoreFileSetCheck, JournalError> = try await ReplicaRestorer.cancellably(
            "checking generation \(generation.generation)"
        ) {
            do {
                return .success(
                    try set.checkFiles(
                        in: url, stagedNames: names, checksNewestCheckpoint: newCheckpoint, isCancelled: cancelled))
            } catch let error as JournalError {
                return .failure(error)
            } catch {
                return .failure(JournalError(.damaged, "The check was cancelled."))
            }
        }
        let key = replica.fullKey(ReplicaLayout.generation(generation.generation))
        switch outcome {
        case .failure(let error):
            if isCancelled() { throw ReplicationError(.cancelled, "The follower was cancelled while checking.") }
            throw ReplicationError(
                .damagedObject,
                "The files of generation \(generation.generation) do not form a store: \(error.message) It was not applied.",
                cause: error, key: key)
        case .success(let found):
            let last = generation.files.last { !$0.isCheckpoint && !$0.sealed }
            if found.lastEpoch != generation.lastEpoch && generation.lastEpoch != nil
                || last.map({ found.lastSegmentEnd != $0.length }) ?? false
            {
                throw ReplicationError(
                    .damagedObject,
                    """
                    The files of generation \(generation.generation) reach epoch \(found.lastEpoch.map(String.init) ?? "none") \
                    (the last segment is consistent up to byte \(found.lastSegmentEnd.map(String.init) ?? "none")), but \
                    the generation says epoch \(generation.lastEpoch.map(String.init) ?? "none") and \
                    \(last.map { String($0.length) } ?? "none") bytes: it was not applied.
                    """,
                    key: key)
            }
        }
    }

    private func interrupt(at step: Step) throws {
        if let interruption, interruption(step) { throw Interrupted(step: step) }
    }

    private func checkCancellation() throws {
        if isCancelled() { throw ReplicationError(.cancelled, "The follower was cancelled.") }
    }
}
