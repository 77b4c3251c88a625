import Foundation
import StateJournal

/// A deterministic simulated app for crash testing: its state at epoch `E` is a pure function of
/// the seed and `E`, so a store it wrote can be checked at every retained epoch after any crash.
///
/// Epoch `E` writes `Soak/Epoch` (the epoch number) and object `E mod N`: a fresh ~200-byte state,
/// or, on every fifth round through the objects, a removal of it.
public struct SoakWorkload: Sendable {
    /// How many objects the simulated app has.
    public let objects: Int
    /// The seed every state derives from.
    public let seed: UInt64

    /// Creates the workload.
    public init(objects: Int, seed: UInt64) {
        self.objects = max(1, objects)
        self.seed = seed
    }

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
        let index = Int(epoch % UInt64(objects))
        let item: JournalChange =
            removes(at: epoch) ? .remove(itemPath(index)) : .put(itemPath(index), itemState(index, epoch: epoch))
        return [.put(Self.epochPath, Array(String(epoch).utf8)), item]
    }

    /// The whole state as of `epoch` (epoch 0: empty).
    public func state(at epoch: UInt64) -> [RestorationPath: [UInt8]] {
        guard epoch > 0 else { return [:] }
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

    /// The first difference between the store's state at `epoch` and the workload's, or `nil`.
    public func firstDifference(_ actual: [RestorationPath: [UInt8]], at epoch: UInt64) -> String? {
        let expected = state(at: epoch)
        for path in Set(expected.keys).union(actual.keys).sorted() where expected[path] != actual[path] {
            let show = { (bytes: [UInt8]?) in bytes.map { String(decoding: $0, as: UTF8.self) } ?? "(absent)" }
            return "epoch \(epoch), \(path): expected \(show(expected[path])), found \(show(actual[path]))"
        }
        return nil
    }

    /// Checks the latest consistent state and the state at every retained epoch against the
    /// workload. Returns the epochs checked, or the first difference.
    public func check(_ directory: URL) throws -> Result<Int, SoakMismatch> {
        let reader = try JournalReader(at: directory)
        let latest = try reader.state()
        if let difference = firstDifference(latest.entries, at: latest.epoch?.epoch ?? 0) {
            return .failure(SoakMismatch(description: difference))
        }
        var checked = 0
        var mismatch: SoakMismatch?
        var previous: UInt64?
        var state: [RestorationPath: [UInt8]] = [:]
        try reader.forEachEpoch { info, changes in
            if let previous, info.epoch != previous + 1 {
                mismatch = SoakMismatch(
                    description: "epoch \(info.epoch) follows epoch \(previous): epochs are missing")
                return false
            }
            previous = info.epoch
            for change in changes {
                switch change {
                case .put(let path, let bytes): state[path] = bytes
                case .remove(let path): state[path] = nil
                case .removeAll: state.removeAll()
                }
            }
            if let difference = firstDifference(state, at: info.epoch) {
                mismatch = SoakMismatch(description: difference)
                return false
            }
            checked += 1
            return true
        }
        if let mismatch { return .failure(mismatch) }
        return .success(checked)
    }
}

/// Where a soaked store differs from what the workload wrote.
public struct SoakMismatch: Error, Sendable, CustomStringConvertible {
    /// The first difference.
    public var description: String
}
