import Foundation
import StateJournal

/// A deterministic simulated app for crash testing: its state at epoch `E` is a pure function of
/// the seed, `E`, the kind of workload and the number of objects, so a store it wrote can be checked
/// at every retained epoch after any crash.
///
/// The ``Kind/steady`` workload (the default) writes `Soak/Epoch` (the epoch number) and object
/// `E mod N` in epoch `E`: a fresh ~200-byte state, or, on every fifth round through the objects, a
/// removal of it. Every path it ever writes is defined in its first epochs.
///
/// The ``Kind/churn`` workload defines paths all the time: every epoch creates paths no epoch wrote
/// before, removes some, re-creates some it removed earlier and changes others, with about 128 KiB of
/// states, so that the journal splits each epoch into several batch records and a crash between them
/// and the commit leaves a torn tail that defines paths (see ``ChurnPlan``).
public struct SoakWorkload: Sendable {
    /// What the simulated app does in each epoch.
    public enum Kind: String, Sendable, CaseIterable {
        /// One object of a fixed set changes (or is removed) per epoch: small epochs, every path
        /// defined in the first ones.
        case steady
        /// Many paths are created (under names never used before), removed, re-created and changed in
        /// every epoch, in epochs that span several batch records.
        case churn
    }

    /// The metadata key that records the workload's kind in every epoch it commits (the churn
    /// workload only: a store without it was written by the steady one).
    public static let kindKey = "soak.workload"
    /// The metadata key that records the number of objects in every epoch.
    public static let objectsKey = "soak.objects"
    /// The metadata key that records the seed in every epoch.
    public static let seedKey = "soak.seed"

    /// How many objects the simulated app has.
    public let objects: Int
    /// The seed every state derives from.
    public let seed: UInt64
    /// What the simulated app does in each epoch.
    public let kind: Kind

    /// Creates the workload.
    public init(objects: Int, seed: UInt64, kind: Kind = .steady) {
        self.objects = max(1, objects)
        self.seed = seed
        self.kind = kind
    }

    /// The metadata each epoch of the workload carries: the seed, the number of objects and, for the
    /// churn workload, its kind.
    public var metadata: [String: String] {
        var metadata = [Self.seedKey: String(seed), Self.objectsKey: String(objects)]
        if kind != .steady { metadata[Self.kindKey] = kind.rawValue }
        return metadata
    }

    /// The workload that wrote an epoch with `metadata`, or `nil` when the metadata names a kind this
    /// version does not know. `objects` is used when the metadata does not record it.
    public static func recorded(in metadata: [String: String], seed: UInt64, objects: Int) -> SoakWorkload? {
        guard let kind = Kind(rawValue: metadata[kindKey] ?? Kind.steady.rawValue) else { return nil }
        return SoakWorkload(objects: metadata[objectsKey].flatMap { Int($0) } ?? objects, seed: seed, kind: kind)
    }

    /// The segment size limit `statejournal soak` writes with: 32 KiB, a roll every ~100 epochs of
    /// the steady workload; 256 KiB for the churn workload, whose epochs take ~40 KiB on disk, so that
    /// a segment holds several epochs and later epochs refer to paths that earlier ones defined in it.
    public var segmentSizeLimit: Int { kind == .churn ? 256 << 10 : 32 << 10 }

    /// The journal size at which `statejournal soak` compacts automatically: twice
    /// ``segmentSizeLimit``.
    public var compactionThreshold: Int { 2 * segmentSizeLimit }

    static let epochPath = RestorationPath("Soak", "Epoch")

    func itemPath(_ index: Int) -> RestorationPath { RestorationPath("Soak", "Item-\(index)") }

    /// Whether epoch `epoch` removes its object instead of writing it.
    func removes(at epoch: UInt64) -> Bool { (epoch / UInt64(objects)) % 5 == 4 }

    /// The state object `index` gets at `epoch`.
    func itemState(_ index: Int, epoch: UInt64) -> [UInt8] {
        var random = SplitMix64(seed: seed ^ (epoch &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(index))
        let scroll = random.next() % 100_000
        let selection = random.next() % 1000
        let text =
            "{\"item\":\(index),\"epoch\":\(epoch),\"scrollOffset\":\(scroll),\"selectedRow\":\(selection),"
            + "\"title\":\"Soak item \(index)\",\"flags\":\"\(String(random.next() % 4096, radix: 2))\"}"
        return Array(text.utf8)
    }

    /// The changes epoch `epoch` makes.
    public func changes(at epoch: UInt64) -> [JournalChange] {
        if kind == .churn { return ChurnPlan(self).changes(at: epoch) }
        let index = Int(epoch % UInt64(objects))
        let item: JournalChange =
            removes(at: epoch) ? .remove(itemPath(index)) : .put(itemPath(index), itemState(index, epoch: epoch))
        return [.put(Self.epochPath, Array(String(epoch).utf8)), item]
    }

    /// The whole state as of `epoch` (epoch 0: empty).
    public func state(at epoch: UInt64) -> [RestorationPath: [UInt8]] {
        guard epoch > 0 else { return [:] }
        if kind == .churn { return ChurnPlan(self).state(at: epoch) }
        var state: [RestorationPath: [UInt8]] = [Self.epochPath: Array(String(epoch).utf8)]
        for index in 0..<objects {
            // The last epoch at or before `epoch` that touched object `index`.
            let offset = (epoch + UInt64(objects) - UInt64(index)) % UInt64(objects)
            guard epoch >= offset, epoch - offset >= 1 else { continue }
            let last = epoch - offset
            if !removes(at: last) { state[itemPath(index)] = itemState(index, epoch: last) }
        }
        return state
    }

    /// The first difference between `actual` and `expected`, the workload's state at `epoch`, or `nil`.
    static func firstDifference(
        _ actual: [RestorationPath: [UInt8]], _ expected: [RestorationPath: [UInt8]], at epoch: UInt64
    ) -> String? {
        guard actual != expected else { return nil }
        for path in Set(expected.keys).union(actual.keys).sorted() where expected[path] != actual[path] {
            let show = { (bytes: [UInt8]?) in
                guard let bytes else { return "(absent)" }
                let text = String(decoding: bytes.prefix(160), as: UTF8.self)
                return bytes.count > 160 ? "\(text)… (\(bytes.count) bytes)" : text
            }
            return "epoch \(epoch), \(path): expected \(show(expected[path])), found \(show(actual[path]))"
        }
        return nil
    }

    /// The first difference between the store's state at `epoch` and the workload's, or `nil`.
    public func firstDifference(_ actual: [RestorationPath: [UInt8]], at epoch: UInt64) -> String? {
        Self.firstDifference(actual, state(at: epoch), at: epoch)
    }

    /// Checks the latest consistent state and the state at every retained epoch against the
    /// workload. Returns the epochs checked, or the first difference.
    ///
    /// The state expected at the first retained epoch is computed whole; each later one from the one
    /// before and the epoch's ``changes(at:)``, so that a long history checks in time proportional
    /// to what its epochs changed.
    ///
    /// An event marker (``EpochInfo/isEventMarker``: the start of a replication term, after a
    /// failover) changes nothing: its state is the epoch's before it, and the soak run that writes
    /// after it writes the whole state in its first epoch (``firstChanges(at:)``).
    public func check(_ directory: URL) throws -> Result<Int, SoakMismatch> {
        let reader = try JournalReader(at: directory)
        let latest = try reader.state()
        if latest.epoch?.isEventMarker != true,
            let difference = firstDifference(latest.entries, at: latest.epoch?.epoch ?? 0)
        {
            return .failure(SoakMismatch(description: difference))
        }
        var afterMarker = false
        var checked = 0
        var mismatch: SoakMismatch?
        var previous: UInt64?
        var state: [RestorationPath: [UInt8]] = [:]
        var expected: [RestorationPath: [UInt8]] = [:]
        try reader.forEachEpoch { info, changes in
            if let previous, info.epoch != previous + 1 {
                mismatch = SoakMismatch(
                    description: "epoch \(info.epoch) follows epoch \(previous): epochs are missing")
                return false
            }
            Self.apply(changes, to: &state)
            if info.isEventMarker {
                if previous == nil { expected = self.state(at: info.epoch - 1) }
                afterMarker = true
            } else if previous == nil || afterMarker {
                expected = self.state(at: info.epoch)
                afterMarker = false
            } else {
                Self.apply(self.changes(at: info.epoch), to: &expected)
            }
            previous = info.epoch
            if let difference = Self.firstDifference(state, expected, at: info.epoch) {
                mismatch = SoakMismatch(description: difference)
                return false
            }
            checked += 1
            return true
        }
        if let mismatch { return .failure(mismatch) }
        return .success(checked)
    }

    /// The changes of the first epoch a run commits, `epoch`, after `previous`, the store's last
    /// epoch: the epoch's changes, or, after an event marker (a failover's term start, which
    /// changed nothing), the whole state at `epoch`, so that every epoch the workload writes holds
    /// its state.
    public func firstChanges(at epoch: UInt64, after previous: EpochInfo?) -> [JournalChange] {
        guard previous?.isEventMarker == true else { return changes(at: epoch) }
        return [.removeAll] + state(at: epoch).sorted { "\($0.key)" < "\($1.key)" }.map { .put($0.key, $0.value) }
    }

    /// Applies `changes` to `state`, as replay does.
    static func apply(_ changes: [JournalChange], to state: inout [RestorationPath: [UInt8]]) {
        for change in changes {
            switch change {
            case .put(let path, let bytes): state[path] = bytes
            case .remove(let path): state[path] = nil
            case .removeAll: state.removeAll()
            }
        }
    }
}

/// Where a soaked store differs from what the workload wrote.
public struct SoakMismatch: Error, Sendable, CustomStringConvertible {
    /// The first difference.
    public var description: String
}
