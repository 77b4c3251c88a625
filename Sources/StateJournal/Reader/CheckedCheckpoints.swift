import Foundation

/// The checkpoints a journal has checked, loaded or written itself, by store and sequence: a scan
/// that lists epochs without their state (``Journal/history()``) starts from one of them without
/// reading its file again, so that its cost follows the segments after it, not the state.
///
/// A checkpoint file is never changed once a manifest names it, and its name is never used again,
/// so a check holds for as long as the store keeps the file. Damage that comes later is found by
/// every read of the state it holds and by ``StoreInspector/verify(_:)``.
///
/// Thread-safe: one lock guards the table.
final class CheckedCheckpoints: @unchecked Sendable {
    private let lock = NSLock()
    /// By sequence: the checkpoint's store, sequence and epoch, with no entries.
    private var contents: [UInt64: CheckpointContent] = [:]

    /// What was recorded of the checkpoint `reference` names in the store `storeID`, with no entries.
    func content(of reference: Manifest.CheckpointReference, storeID: StoreID) -> CheckpointContent? {
        lock.withLock {
            guard let content = contents[reference.sequence], content.storeID == storeID,
                content.info.epoch == reference.epoch
            else { return nil }
            return content
        }
    }

    /// Records a checkpoint that was checked, loaded or written whole, keeping none of its entries.
    func record(_ content: CheckpointContent) {
        var header = content
        header.entries = StateTable()
        lock.withLock { contents[content.sequence] = header }
    }

    /// Forgets the checkpoints a manifest no longer names.
    func keepOnly(_ references: [Manifest.CheckpointReference]) {
        lock.withLock {
            guard contents.count > 0 else { return }
            let named = Set(references.map(\.sequence))
            contents = contents.filter { named.contains($0.key) }
        }
    }
}
