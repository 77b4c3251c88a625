import StateJournal

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What a restore writes for one generation, derived from its validated fields alone: each local
/// file's name from its kind and sequence, and the objects that fill it, in order from offset 0.
struct RestorePlan: Sendable {
    /// One file to write.
    struct File: Sendable {
        /// The local name: the store's own name for the kind and sequence.
        var name: String
        var kind: StoreFileSet.Kind
        /// The generation's description of the file.
        var described: ReplicaGeneration.File
        /// The objects to write one after another, the first at offset 0.
        var objects: [ReplicaGeneration.Object] { described.objects }
    }

    var files: [File]

    /// The plan of a generation that passed ``ReplicaGeneration/validated(number:storeID:key:)``.
    init(validated generation: ReplicaGeneration) {
        files = generation.files.map { file in
            let kind: StoreFileSet.Kind = file.isCheckpoint ? .checkpoint : .segment
            return File(
                name: StoreFileSet.fileName(of: kind, sequence: file.sequence), kind: kind, described: file)
        }
    }

    /// Every object of the plan, in the order the restore writes them.
    var objects: [ReplicaGeneration.Object] { files.flatMap(\.objects) }
}

/// What a restore does with the bytes of a bucket, without a bucket: the entry points of the
/// `replica` fuzz target, which feeds them hostile bytes and checks the plan's invariants.
package enum ReplicaInputs {
    /// A planned file: its local name and the byte ranges of its objects, in order.
    package typealias PlannedFile = (name: String, ranges: [Range<Int64>])

    /// Decodes a generation document, validates it as generation `number` of `storeID`, and plans
    /// its restore.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` for anything a restore would refuse.
    package static func plan(generationDocument bytes: [UInt8], number: UInt64, storeID: String) throws
        -> [PlannedFile]
    {
        let key = ReplicaLayout.generation(number)
        let generation = try ReplicaGeneration.decode(bytes, key: key).validated(
            number: number, storeID: storeID, key: key)
        return RestorePlan(validated: generation).files.map { file in
            (file.name, file.objects.map { $0.start..<$0.end })
        }
    }

    /// Plans a generation document against the generation number and store id it states itself:
    /// the binding to a replica is skipped, so that a fuzzer reaches every check after it.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` for anything a restore would refuse.
    package static func plan(selfBoundGenerationDocument bytes: [UInt8]) throws -> [PlannedFile] {
        let stated = try ReplicaGeneration.decode(bytes, key: "generation")
        return try plan(generationDocument: bytes, number: stated.generation, storeID: stated.storeID)
    }

    /// Opens an object's envelope as a restore does, with `keyring` or without, as an object of the
    /// replica of `storeID` when given.
    ///
    /// - Throws: the envelope's typed errors.
    package static func open(
        envelope bytes: [UInt8], name: String, keyring: ReplicationKeyring?, storeID: String? = nil
    ) throws -> [UInt8] {
        try ObjectEnvelope.open(bytes, name: name, keyring: keyring, storeID: storeID)
    }
}

/// The pieces of a restore's files that generations carry inline, written into the files before
/// the restore writes the rest in order (``CarrierPass``): each carrier is fetched once, whatever
/// the order in which the generation names its pieces.
///
/// The restore then goes through each file's objects in order as before; at a carried piece it
/// takes the outcome recorded here instead of fetching it (``written(file:object:)``), so that a
/// piece that could not be written stops the restore at that point, as a damaged object does, and
/// what comes after it is cut away or removed as for any damage.
///
/// The files are created through the restore directory (so that an abandoned restore removes them),
/// and written at each piece's offset; the restore reopens them (``open(_:in:)``) instead of
/// creating them, and removes those it did not keep (``removeFiles(notIn:from:)``).
struct CarriedPieces {
    /// For each file of the plan, for each object, its outcome when it is a carried piece this wrote
    /// (or tried to), `nil` otherwise.
    private var outcomes: [[CarrierPass.Outcome?]]
    /// The files this created in the restore directory.
    private var created: Set<String> = []

    /// Writes the carried pieces of `plan` that are not `reused` into their files in `output`.
    ///
    /// - Throws: ``ReplicationError/Code/cancelled``, and ``ReplicationError/Code/store`` when a file
    ///   cannot be created or written; what a carrier's fetch throws is recorded per piece instead.
    static func write(
        _ plan: RestorePlan, skipping reused: [[Bool]], into output: RestoreDirectory, from replica: Replica
    ) async throws -> CarriedPieces {
        var result = CarriedPieces(
            outcomes: plan.files.map { [CarrierPass.Outcome?](repeating: nil, count: $0.objects.count) })
        var places: [(file: Int, object: Int)] = []
        var pieces: [ReplicaGeneration.Object] = []
        for (fileIndex, file) in plan.files.enumerated() {
            for (objectIndex, object) in file.objects.enumerated()
            where object.isInline && !reused[fileIndex][objectIndex] {
                places.append((fileIndex, objectIndex))
                pieces.append(object)
            }
        }
        guard !pieces.isEmpty else { return result }
        // One file open at a time: a carrier's pieces come file by file, in the plan's order.
        var open: (file: Int, descriptor: Int32)?
        func closeOpen() {
            if let open { _ = close(open.descriptor) }
            open = nil
        }
        defer { closeOpen() }
        let outcomes = try await CarrierPass.run(
            pieces, from: replica,
            write: { index, payload in
                let place = places[index]
                let name = plan.files[place.file].name
                if open?.file != place.file {
                    closeOpen()
                    open = (place.file, try result.open(name, in: output))
                    result.created.insert(name)
                }
                try output.write(payload, to: open!.descriptor, at: pieces[index].start, name: name)
            }, done: closeOpen)
        for (place, outcome) in zip(places, outcomes) { result.outcomes[place.file][place.object] = outcome }
        return result
    }

    /// The length of the payload written for object `object` of file `file` when it is a carried
    /// piece, `nil` when it is not (the restore fetches it).
    ///
    /// - Throws: what kept the piece from being written.
    func written(file: Int, object: Int) throws -> Int64? {
        try outcomes[file][object]?.get()
    }

    /// Opens the file `name` of `output` for writing: reopens it when this created it (in a directory
    /// that is not a staging one, creating it again would fail), creates it otherwise.
    func open(_ name: String, in output: RestoreDirectory) throws -> Int32 {
        guard created.contains(name), !output.isResumable else { return try output.create(name) }
        let file = openat(output.descriptor, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { throw FollowerDirectory.failure("open", output.url.path + "/" + name, errno) }
        return file
    }

    /// Removes the files this created that the restore did not keep (those after damage).
    func removeFiles(notIn kept: Set<String>, from output: RestoreDirectory) {
        for name in created where !kept.contains(name) { output.remove(name) }
    }
}

extension ReplicaGeneration {
    /// Checks that a restore of the latest epoch from this generation reached the last epoch the
    /// generation states: files that each hold the bytes their digests say can still stop short of
    /// it (the live segment of an older generation named under a newer one), and a restore that took
    /// them at their word would bring back an earlier epoch as the latest, verified clean.
    ///
    /// Only for a restore of the latest epoch that met no damaged object: damage stops a restore
    /// short on purpose, and reports the epochs it lost.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` naming the generation, the epoch it states
    ///   and the epoch the files reach: the restorer passes over the generation, as over any damaged
    ///   one, for the newest intact one before it.
    func checkReached(_ reached: UInt64, key: String) throws {
        guard let stated = lastEpoch, stated != reached else { return }
        throw ReplicationError(
            .damagedObject,
            "The files of generation \(generation) reach epoch \(reached), but the generation states epoch \(stated): it is damaged (its files are not the ones it was written with), and was not restored from.",
            key: key)
    }
}
