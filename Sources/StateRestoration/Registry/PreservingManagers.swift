import Foundation
import StateJournal

/// Which managers preserve which objects: each manager records the objects its passes place,
/// restore or register, so that ``StateRestoring/invalidateRestorableState()`` reaches them
/// without a reference to a manager.
///
/// Objects and managers are held weakly. Entries of released objects are swept when the table has
/// doubled since the last sweep, so its size stays proportional to the live objects.
final class PreservingManagers: @unchecked Sendable {
    // @unchecked Sendable: `entries` and `sweepThreshold` are only read and written with `lock` held.

    static let shared = PreservingManagers()

    private struct WeakManager {
        weak var manager: RestorationManager?
    }

    private struct Entry {
        weak var object: AnyObject?
        var managers: [WeakManager]
    }

    private let lock = NSLock()
    private var entries: [ObjectIdentifier: Entry] = [:]
    private var sweepThreshold = 1024

    /// Records that `manager` preserves each of `objects`.
    func record(_ objects: some Sequence<AnyObject>, for manager: RestorationManager) {
        lock.withLock {
            for object in objects {
                let id = ObjectIdentifier(object)
                if var entry = entries[id], entry.object === object {
                    guard !entry.managers.contains(where: { $0.manager === manager }) else { continue }
                    entry.managers.removeAll { $0.manager == nil }
                    entry.managers.append(WeakManager(manager: manager))
                    entries[id] = entry
                } else {
                    entries[id] = Entry(object: object, managers: [WeakManager(manager: manager)])
                }
            }
            if entries.count > sweepThreshold {
                entries = entries.filter { $0.value.object != nil && $0.value.managers.contains { $0.manager != nil } }
                sweepThreshold = max(1024, entries.count * 2)
            }
        }
    }

    /// The live managers that recorded `object`.
    func managers(of object: AnyObject) -> [RestorationManager] {
        lock.withLock {
            guard let entry = entries[ObjectIdentifier(object)], entry.object === object else { return [] }
            return entry.managers.compactMap(\.manager)
        }
    }
}
