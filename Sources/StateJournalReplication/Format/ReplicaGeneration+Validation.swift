import StateJournal

extension ReplicaGeneration {
    /// Checks everything a generation read from the bucket says before any of it is used: that it
    /// is generation `number` of the store `storeID`, that every number is within
    /// ``ReplicaLimits``, that every file is named as the store names a file of its kind and
    /// sequence, and that every object is named as the shipper names it and covers its file's bytes
    /// exactly once, in order, from the first byte to the last.
    ///
    /// A generation that passes can be restored without taking a single name, offset or length on
    /// trust: local file names are derived from the kind and sequence, objects are written one after
    /// another from offset 0, and no object is larger than ``ReplicaLimits/maximumObjectBytes``.
    ///
    /// - Throws: ``ReplicationError/Code/damagedObject`` naming the generation and what is wrong.
    func validated(number: UInt64, storeID expectedStoreID: String, key: String) throws -> ReplicaGeneration {
        func damaged(_ reason: String) -> ReplicationError {
            ReplicationError(
                .damagedObject, "The generation \(printable(key)) is not a valid generation: \(reason).", key: key)
        }
        guard format == "statejournal-replica-generation" else { throw damaged("its format is not a generation's") }
        guard (1...Self.newestReadableVersion).contains(version) else {
            throw damaged(
                "it is of version \(version), which this StateJournal does not read; a newer one may (it reads versions up to \(Self.newestReadableVersion))"
            )
        }
        guard storeID == expectedStoreID else {
            throw damaged(
                "it belongs to the store \(printable(storeID)), not to \(expectedStoreID), whose replica this is")
        }
        guard generation == number else {
            throw damaged("it says it is generation \(generation), but it is stored as generation \(number)")
        }
        let limit = ReplicaLimits.maximumCounter
        guard storeGeneration <= limit, nextFileSequence <= limit, epochFloor <= limit, (lastEpoch ?? 0) <= limit
        else { throw damaged("a number in it is beyond \(limit)") }
        try validateTerms(damaged)
        // A store always has a segment: a generation that names no file reaches no epoch, whatever
        // it says, and a restore would pass over it without a word.
        guard lastEpoch == nil || !files.isEmpty else {
            throw damaged("it says it reaches epoch \(lastEpoch ?? 0) but names no file")
        }
        guard files.count <= ReplicaLimits.maximumFiles else { throw damaged("it names \(files.count) files") }
        var previousCheckpoint: UInt64?
        var previousSegment: ReplicaGeneration.File?
        for (index, file) in files.enumerated() {
            let what = "file \(index) (\(printable(file.name)))"
            let kind: StoreFileSet.Kind
            switch file.kind {
            case "checkpoint": kind = .checkpoint
            case "segment": kind = .segment
            default: throw damaged("\(what) is of no kind a store has")
            }
            guard file.sequence < nextFileSequence else {
                throw damaged("\(what) has sequence \(file.sequence), not below the next, \(nextFileSequence)")
            }
            guard file.name == StoreFileSet.fileName(of: kind, sequence: file.sequence) else {
                throw damaged("\(what) is not named as the store names its \(file.kind) \(file.sequence)")
            }
            guard file.baseEpoch <= file.lastEpoch, file.lastEpoch <= limit else {
                throw damaged("\(what) has the epochs \(file.baseEpoch) and \(file.lastEpoch)")
            }
            guard (0...ReplicaLimits.maximumFileBytes).contains(file.length) else {
                throw damaged("\(what) is \(file.length) bytes long")
            }
            switch kind {
            case .checkpoint:
                guard previousSegment == nil, previousCheckpoint.map({ $0 < file.sequence }) ?? true,
                    file.baseEpoch == file.lastEpoch, file.sealed
                else { throw damaged("\(what) is not in order as a checkpoint") }
                previousCheckpoint = file.sequence
            case .segment:
                if let previous = previousSegment {
                    guard previous.sealed, previous.sequence < file.sequence, previous.lastEpoch <= file.baseEpoch
                    else { throw damaged("\(what) does not follow the segment before it") }
                }
                previousSegment = file
            }
            try validateObjects(of: file, kind: kind, what: what, damaged: damaged)
        }
        return self
    }

    private func validateObjects(
        of file: File, kind: StoreFileSet.Kind, what: String, damaged: (String) -> ReplicationError
    ) throws {
        guard file.objects.count <= ReplicaLimits.maximumObjectsPerFile else {
            throw damaged("\(what) is made of \(file.objects.count) objects")
        }
        var end: Int64 = 0
        for (index, object) in file.objects.enumerated() {
            let which = "object \(index) of \(what)"
            guard object.start == end, object.start < object.end, object.end <= file.length,
                object.end - object.start <= ReplicaLimits.maximumObjectBytes
            else {
                throw damaged("\(which) covers the bytes \(object.start)..<\(object.end) where \(end) comes next")
            }
            guard object.sha256.utf8.count == 64,
                object.sha256.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            else { throw damaged("\(which) has no SHA-256") }
            guard (0...64).contains(object.level) else { throw damaged("\(which) has the level \(object.level)") }
            // A checkpoint, and before version 3 any sealed file, is one object.
            let whole = file.sealed && (version < 3 || kind == .checkpoint)
            if whole && file.objects.count != 1 { throw damaged("\(what) is sealed but made of pieces") }
            if let offset = object.offset {
                // Bytes a generation carries inline: this one or an earlier one, within what a
                // generation object may hold.
                guard version >= 3, let carrier = ReplicaLayout.generationNumber(object.key), carrier <= generation
                else { throw damaged("\(which) is carried by no generation it may name") }
                guard offset >= 0, offset <= Int64(ReplicaLimits.maximumGenerationBytes),
                    object.end - object.start <= Int64(ReplicaLimits.maximumGenerationBytes) - offset
                else { throw damaged("\(which) lies beyond what a generation carries") }
            } else {
                let sealedName =
                    kind == .checkpoint
                    ? ReplicaLayout.checkpoint(epoch: file.lastEpoch, sequence: file.sequence, sha256: object.sha256)
                    : ReplicaLayout.segment(baseEpoch: file.baseEpoch, sequence: file.sequence, sha256: object.sha256)
                let pieceName = ReplicaLayout.piece(
                    sequence: file.sequence, start: object.start, end: object.end, sha256: object.sha256)
                // From version 3 a sealed segment may stay made of the pieces shipped while it was
                // live, or be one object if it was first shipped sealed.
                let named =
                    whole
                    ? object.key == sealedName
                    : object.key == pieceName || (file.sealed && file.objects.count == 1 && object.key == sealedName)
                guard named else { throw damaged("\(which) is not named as the shipper names it") }
            }
            end = object.end
        }
        guard end == file.length else {
            throw damaged("the objects of \(what) cover \(end) of its \(file.length) bytes")
        }
    }
}

extension ReplicaGeneration {
    /// Checks the term, the holder and the term starts: the holder is a holder id, the term starts
    /// rise in both term and number, none is after this generation, and the last is this
    /// generation's own term.
    fileprivate func validateTerms(_ damaged: (String) -> ReplicationError) throws {
        guard let term else {
            guard holder == nil, terms == nil, predecessor == nil else {
                throw damaged("it names a holder, term starts or a predecessor but no term")
            }
            return
        }
        guard term >= 1, term <= ReplicaLimits.maximumCounter else { throw damaged("its term \(term) is out of range") }
        guard let holder, ReplicaIdentity.isStoreID(holder) else { throw damaged("its holder is not a holder id") }
        guard let terms, !terms.isEmpty, terms.count <= Self.rememberedTerms else {
            throw damaged("it has a term but not the term starts before it")
        }
        for (earlier, later) in zip(terms, terms.dropFirst())
        where !(earlier.term < later.term && earlier.generation < later.generation) {
            throw damaged("its term starts do not rise (term \(later.term) at generation \(later.generation))")
        }
        guard let own = terms.last, own.term == term, own.generation <= generation else {
            throw damaged("its own term \(term) does not start at or before it")
        }
        for start in terms {
            if let basis = start.basis, basis >= start.generation {
                throw damaged(
                    "term \(start.term) is said to begin at generation \(start.generation) from \(basis), not before it"
                )
            }
        }
        if let predecessor {
            guard version >= 4 else {
                throw damaged("it names a predecessor, which a version \(version) generation does not")
            }
            guard predecessor.generation < generation, predecessor.term <= term,
                predecessor.sha256.utf8.count == 64,
                predecessor.sha256.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            else { throw damaged("its predecessor is not a generation before it") }
            // A term's first generation builds on the generation its term start names.
            if own.generation == generation, own.basis != predecessor.generation {
                throw damaged(
                    "it begins term \(term) from generation \(own.basis.map(String.init) ?? "none"), but builds on \(predecessor.generation)"
                )
            }
            if own.generation < generation, predecessor.term != term {
                throw damaged("it builds on a generation of term \(predecessor.term), not of its own term \(term)")
            }
        }
    }
}
