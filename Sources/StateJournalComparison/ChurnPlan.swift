import StateJournal

/// What the ``SoakWorkload/Kind/churn`` workload does in each epoch, as a pure function of the seed,
/// the epoch and the number of objects `N`.
///
/// Every epoch `E` writes `Soak/Epoch` (the epoch number), and:
/// - creates ``freshPerEpoch`` paths `Soak/Fresh-E-k` that no epoch wrote before, each living 1 to
///   ``longestLife`` epochs (`1 + (E + k) mod 3`): changed once in its second epoch when it lives
///   three, and removed in the epoch after its last;
/// - cycles the `N` paths `Soak/Object-i` through ``period`` epochs: in phase `(E + i) mod 6` 0 it is
///   re-created (it was removed the epoch before), in phases 2 and 4 changed, in phase 5 removed,
///   and in phases 1 and 3 left alone.
///
/// Each state is about ``stateSize`` bytes, chosen so that an epoch's states add up to about 128 KiB
/// whatever `N`: the journal cuts an epoch into batch records of about 32 KiB, so each epoch spans
/// several, and the creations are spread over all of them, so that a crash between an epoch's
/// batch records and its commit leaves a torn tail that defines paths.
public struct ChurnPlan: Sendable {
    /// How many epochs a path `Soak/Object-i` takes to go round its cycle.
    public static let period: UInt64 = 6
    /// The most epochs a path `Soak/Fresh-E-k` lives.
    public static let longestLife: UInt64 = 3
    /// About how many bytes of states an epoch writes.
    public static let epochStateBytes = 128 << 10

    /// The workload whose epochs this plans.
    public let workload: SoakWorkload

    /// The plan of `workload`'s epochs.
    public init(_ workload: SoakWorkload) {
        self.workload = workload
    }

    /// How many paths never written before each epoch creates.
    public var freshPerEpoch: Int { max(4, workload.objects / 4) }

    /// The size of each state: an epoch puts about `N / 2` objects, ``freshPerEpoch`` new paths and
    /// a third as many changes of recent ones.
    public var stateSize: Int {
        let puts = workload.objects / 2 + freshPerEpoch + freshPerEpoch / 3
        return min(4096, max(256, Self.epochStateBytes / max(1, puts)))
    }

    /// The path of recurring object `index`.
    public func objectPath(_ index: Int) -> RestorationPath { RestorationPath("Soak", "Object-\(index)") }

    /// The path of the `index`-th path created in epoch `epoch`.
    public func freshPath(createdAt epoch: UInt64, _ index: Int) -> RestorationPath {
        RestorationPath("Soak", "Fresh-\(epoch)-\(index)")
    }

    /// How many epochs the `index`-th path created in epoch `epoch` lives.
    func life(createdAt epoch: UInt64, _ index: Int) -> UInt64 { 1 + (epoch &+ UInt64(index)) % Self.longestLife }

    enum Event {
        case put
        case remove
    }

    /// What epoch `epoch` does to recurring object `index`.
    func objectEvent(_ index: Int, at epoch: UInt64) -> Event? {
        switch (epoch &+ UInt64(index)) % Self.period {
        case Self.period - 1: epoch >= 2 ? .remove : nil  // phase 4 of the epoch before wrote it
        case 0, 2, 4: .put
        default: nil
        }
    }

    /// What epoch `epoch` does to the `index`-th path created in epoch `created`.
    func freshEvent(createdAt created: UInt64, _ index: Int, at epoch: UInt64) -> Event? {
        let life = life(createdAt: created, index)
        if epoch == created || (epoch == created + 1 && life == 3) { return .put }
        if epoch == created + life { return .remove }
        return nil
    }

    /// The changes epoch `epoch` makes: creations, changes and removals interleaved, so that every
    /// batch record of the epoch defines new paths.
    func changes(at epoch: UInt64) -> [JournalChange] {
        var created: [JournalChange] = []
        var others: [JournalChange] = []
        for index in 0..<freshPerEpoch {
            created.append(.put(freshPath(createdAt: epoch, index), state(freshPath(createdAt: epoch, index), epoch)))
        }
        for index in 0..<workload.objects {
            switch objectEvent(index, at: epoch) {
            case .put: others.append(.put(objectPath(index), state(objectPath(index), epoch)))
            case .remove: others.append(.remove(objectPath(index)))
            case nil: break
            }
        }
        for age in 1...Self.longestLife where epoch > age {
            for index in 0..<freshPerEpoch {
                let path = freshPath(createdAt: epoch - age, index)
                switch freshEvent(createdAt: epoch - age, index, at: epoch) {
                case .put: others.append(.put(path, state(path, epoch)))
                case .remove: others.append(.remove(path))
                case nil: break
                }
            }
        }
        var changes: [JournalChange] = [.put(SoakWorkload.epochPath, Array(String(epoch).utf8))]
        changes.reserveCapacity(1 + created.count + others.count)
        // One creation after every `stride` other changes.
        let stride = max(1, others.count / max(1, created.count))
        var next = created.makeIterator()
        for (offset, change) in others.enumerated() {
            if offset % stride == 0, let creation = next.next() { changes.append(creation) }
            changes.append(change)
        }
        while let creation = next.next() { changes.append(creation) }
        return changes
    }

    /// The whole state as of `epoch` (at least 1).
    func state(at epoch: UInt64) -> [RestorationPath: [UInt8]] {
        var state: [RestorationPath: [UInt8]] = [SoakWorkload.epochPath: Array(String(epoch).utf8)]
        for index in 0..<workload.objects {
            // The last event at or before `epoch`: there is one within a period once epoch 1 is past.
            var last = epoch
            while last >= 1 && last + Self.period > epoch {
                if let event = objectEvent(index, at: last) {
                    if event == .put { state[objectPath(index)] = self.state(objectPath(index), last) }
                    break
                }
                last -= 1
            }
        }
        for age in 0..<Self.longestLife where epoch > age {
            let created = epoch - age
            for index in 0..<freshPerEpoch where age < life(createdAt: created, index) {
                let path = freshPath(createdAt: created, index)
                state[path] = self.state(path, age >= 1 && life(createdAt: created, index) == 3 ? created + 1 : created)
            }
        }
        return state
    }

    /// The state `path` gets in epoch `epoch`: a JSON object of about ``stateSize`` bytes, rows of
    /// small pseudo-random numbers that compress about as an app's state does.
    func state(_ path: RestorationPath, _ epoch: UInt64) -> [UInt8] {
        // FNV-1a of the path, so that every path's states differ.
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for component in path.components {
            for byte in component.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        }
        var random = SplitMix64(seed: workload.seed ^ (epoch &* 0x9E37_79B9_7F4A_7C15) ^ hash)
        let size = stateSize
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size + 48)
        bytes.append(contentsOf: "{\"path\":\"\(path)\",\"epoch\":\(epoch),\"rows\":[".utf8)
        var row: UInt64 = 0
        while bytes.count < size - 2 {
            bytes.append(contentsOf: "{\"row\":".utf8)
            Self.appendDecimal(row, to: &bytes)
            bytes.append(contentsOf: ",\"offset\":".utf8)
            Self.appendDecimal(random.next() % 1000, to: &bytes)
            bytes.append(contentsOf: ",\"open\":".utf8)
            bytes.append(contentsOf: random.next() % 2 == 0 ? "true}".utf8 : "false}".utf8)
            bytes.append(UInt8(ascii: ","))
            row += 1
        }
        bytes.removeLast()
        bytes.append(contentsOf: "]}".utf8)
        return bytes
    }

    private static func appendDecimal(_ value: UInt64, to bytes: inout [UInt8]) {
        if value >= 10 { appendDecimal(value / 10, to: &bytes) }
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }
}
