import StateJournal
import StateJournalReplication

extension Harness {
    /// The store id and generation number a bound generation input is checked against.
    static let replicaStoreID = String(repeating: "5a", count: 16)
    static let replicaKeyring = ReplicationKeyring(
        current: try! ReplicationKey(id: "fuzz", bytes: Array(repeating: 0x2A, count: 32)))

    /// Mode byte 0: the rest is a generation document, validated as generation 1 of
    /// ``replicaStoreID``; 2: the same, validated against the generation number and store id it
    /// states itself, so that the checks past the binding are reached; odd: the rest is an object's
    /// envelope (version 1, or version 2 sealed in chunks), opened without a key, with one, and with
    /// one as an object of ``replicaStoreID``'s replica; whatever it opens to must be no larger than
    /// the envelope. Whatever plan comes out must hold the
    /// invariants a restore relies on: names of the store's own, objects that follow one another
    /// from offset 0, none larger than the limit.
    static func replica(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        guard mode & 1 == 0 else {
            let name = "generations/0000000000000001.json"
            _ = try? ReplicaInputs.open(envelope: rest, name: name, keyring: nil)
            for storeID in [nil, replicaStoreID] {
                if let opened = try? ReplicaInputs.open(
                    envelope: rest, name: name, keyring: replicaKeyring, storeID: storeID)
                {
                    precondition(opened.count <= rest.count, "a payload larger than its envelope")
                }
            }
            return
        }
        let plan: [ReplicaInputs.PlannedFile]?
        if mode & 2 == 0 {
            plan = try? ReplicaInputs.plan(generationDocument: rest, number: 1, storeID: replicaStoreID)
        } else {
            plan = try? ReplicaInputs.plan(selfBoundGenerationDocument: rest)
        }
        for file in plan ?? [] {
            let sequence =
                file.name.hasPrefix("segment-")
                ? StoreFileSet.fileName(of: .segment, sequence: 0).count
                : StoreFileSet.fileName(of: .checkpoint, sequence: 0).count
            precondition(!file.name.contains("/") && file.name.utf8.count == sequence, "a name not derived")
            var end: Int64 = 0
            for range in file.ranges {
                precondition(range.lowerBound == end && !range.isEmpty, "objects that do not follow one another")
                precondition(Int64(range.count) <= ReplicaLimits.maximumObjectBytes, "an object over the limit")
                end = range.upperBound
            }
        }
    }
}
