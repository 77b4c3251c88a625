import StateJournal

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
