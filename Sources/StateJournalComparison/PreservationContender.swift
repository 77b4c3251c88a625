import Foundation
import StateJournal

/// One way of preserving the app's state that the benchmark puts side by side with the others.
///
/// The runner gives every contender the same passes of the same ``AppStateWorkload`` one after
/// another, timing ``save(_:of:)`` and ``restore()``. Each contender starts from the app's model in
/// memory and ends with its bytes handed to the operating system (and synced, where its policy says).
protocol PreservationContender: AnyObject {
    /// The stable name in tables and JSON.
    var name: String { get }
    /// Whether a pass rewrites the whole state, so that the runner times fewer of its passes.
    var rewritesWholeState: Bool { get }
    /// Whether ``restore()`` means anything for this contender.
    var restores: Bool { get }
    /// Creates the contender's files in `directory` and saves the whole first state, untimed.
    func start(in directory: URL, with workload: AppStateWorkload) throws
    /// Saves one pass that changed the objects `changed`: the timed operation.
    func save(_ changed: [Int], of workload: AppStateWorkload) throws
    /// Takes in a pass without saving it, for whole-state contenders on the passes that are not timed.
    func skip(_ changed: [Int], of workload: AppStateWorkload)
    /// Lets work the contender started in the background finish (untimed), so that it does not run
    /// beside the next timed operation, its own or another contender's.
    func settle()
    /// Gets ready for a timed ``restore()`` (untimed).
    func prepareRestore(with workload: AppStateWorkload) throws
    /// Reads the whole state back as a relaunched app does and returns how many objects it holds.
    func restore() throws -> Int
    /// The contender's files, in bytes, or `nil` when it keeps none.
    var bytesOnDisk: Int? { get }
    /// Compacts the files, returning `false` when the contender has no such step.
    func compact() throws -> Bool
    /// What a child process restores to measure the peak memory of restoring.
    var probe: RestoreProbe.Target? { get }
    /// Closes the contender's files.
    func finish()
}

extension PreservationContender {
    var rewritesWholeState: Bool { false }
    var restores: Bool { true }
    func skip(_ changed: [Int], of workload: AppStateWorkload) {}
    func settle() {}
    func prepareRestore(with workload: AppStateWorkload) throws {}
    func compact() throws -> Bool { false }
    var probe: RestoreProbe.Target? { nil }
}

/// The journal under one durability policy: one epoch per pass, one put per changed object.
///
/// Automatic compaction is off unless asked for, so that the store keeps every pass and compaction
/// is measured on its own at the end; checkpoints are still written by themselves (deleting
/// nothing), as they are for an app that turns compaction off, unless `checkpoints` is `false`, so
/// that a restore replays every pass. With compaction on (the default policy), restores read what
/// an app's store holds after running that long.
final class JournalContender: PreservationContender {
    let name: String
    private let durability: Durability
    private let compaction: CompactionPolicy
    private var journal: Journal?
    private var store: URL?

    init(durability: Durability, compactsAutomatically: Bool = false, checkpoints: Bool = true) {
        self.durability = durability
        compaction =
            compactsAutomatically ? CompactionPolicy() : checkpoints ? CompactionPolicy(isAutomatic: false) : .manual
        switch durability {
        case .everyCommit: name = "journal-everyCommit"
        case .interval:
            name =
                compactsAutomatically
                ? "journal-autocompact" : checkpoints ? "journal-interval" : "journal-nocheckpoint"
        case .none: name = "journal-none"
        }
    }

    func start(in directory: URL, with workload: AppStateWorkload) throws {
        let store = directory.appendingPathComponent(name)
        self.store = store
        journal = try Journal.open(
            at: store,
            options: JournalOptions(durability: durability, compaction: compaction))
        try save(Array(0..<workload.objectCount), of: workload)
    }

    func save(_ changed: [Int], of workload: AppStateWorkload) throws {
        let epoch = try journal!.beginEpoch()
        for index in changed { try epoch.put(workload.path(index), workload.state(index)) }
        _ = try epoch.commit(metadata: ["bundleVersion": "1.0 (42)", "idiom": "desktop"])
    }

    func settle() { journal?.waitForCompactions() }

    func restore() throws -> Int {
        try JournalReader(at: store!).state().visitEveryEntry()
    }

    var bytesOnDisk: Int? { store.map { FileSizes.directorySize($0.path) } }

    func compact() throws -> Bool {
        try journal!.compact()
        return true
    }

    var probe: RestoreProbe.Target? { store.map { RestoreProbe.Target(kind: .journal, path: $0.path) } }

    func finish() {
        try? journal?.close()
        journal = nil
    }
}

extension JournalState {
    /// Hands every path and its state bytes to the caller, as a restoring app's pass over the state
    /// does, and returns how many objects there were: what a timed restore of the journal includes.
    func visitEveryEntry() -> Int {
        var objects = 0
        var bytes = 0
        forEachEntry { path, state in
            if !path.components.isEmpty { objects += 1 }
            bytes &+= state.count
        }
        return bytes >= 0 ? objects : 0
    }
}
