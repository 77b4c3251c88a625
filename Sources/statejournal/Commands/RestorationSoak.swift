import Foundation
import Logging
import StateJournal
import StateRestoration

/// `statejournal soak --restoration`: a simulated app that saves through a `RestorationManager`,
/// which recovers by itself from failed writes and syncs, for the kernel durability tests.
///
/// The app has `objects` objects; change *c* (from 1) sets object `(c - 1) % objects` to *c*, so
/// the app's state after change *c* is a function of *c* alone, recorded in each pass's
/// application coder. The app makes one change after another, saves after each with
/// `preserveState(roots:)`, and prints `acknowledged C T S` (the change, and the Unix times at
/// which the save returned and began) after each save that returned; a save that throws is reported on standard error when the store
/// becomes unavailable and again when it saves again, and the app goes on changing its objects.
struct RestorationSoak {
    let objects: Int
    let seed: UInt64

    /// The key of the change number in the application coder.
    static let changeKey = "soak.change"

    /// An object of the simulated app: a number, and a payload derived from it.
    final class SoakObject: RestorableController {
        let restorationIdentifier: String?
        let seed: UInt64
        var value = 0

        init(index: Int, seed: UInt64) {
            restorationIdentifier = "Object-\(index)"
            self.seed = seed
        }

        func encodeRestorableState(with coder: RestorationCoder) throws {
            coder.encode(value, forKey: "value")
            coder.encode(Self.payload(value, seed: seed), forKey: "payload")
        }

        func decodeRestorableState(with coder: RestorationCoder) throws {
            value = try coder.decodeInt(forKey: "value")
            guard try coder.decodeString(forKey: "payload") == Self.payload(value, seed: seed) else {
                throw RestorationError(.corruptEntry, "The payload does not match the value \(value).")
            }
        }

        static func payload(_ value: Int, seed: UInt64) -> String {
            String(repeating: "\(seed)-\(value);", count: 8 + value % 24)
        }
    }

    /// Saves everything; records the change number, and reads it back at restoration.
    final class SoakDelegate: ApplicationRestorationDelegate {
        var change = 0
        var restoredChange: Int?

        func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func willEncodeRestorableState(_ coder: RestorationCoder) {
            coder.encode(change, forKey: RestorationSoak.changeKey)
        }
        func didDecodeRestorableState(_ coder: RestorationCoder) {
            restoredChange = try? coder.decodeInt(forKey: RestorationSoak.changeKey)
        }
    }

    /// The value of object `index` after change `change`.
    func value(of index: Int, after change: Int) -> Int {
        guard change >= 1 else { return 0 }
        let last = change - ((change - 1 - index) % objects + objects) % objects
        return last >= 1 ? last : 0
    }

    /// A manager over `journal` with the app's objects as roots, restored from it.
    private func restored(_ journal: Journal, logger: Logger) throws -> (
        RestorationManager, SoakDelegate, [SoakObject]
    ) {
        let manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(bundleVersion: "soak", interfaceIdiom: "server", logger: logger))
        let delegate = SoakDelegate()
        manager.delegate = delegate
        let roots = (0..<objects).map { SoakObject(index: $0, seed: seed) }
        try manager.restoreState(roots: roots)
        return (manager, delegate, roots)
    }

    /// Changes and saves until `seconds` have passed, continuing from what the store holds.
    func write(to journal: Journal, seconds: Double, logger: Logger) throws {
        let (manager, delegate, roots) = try restored(journal, logger: logger)
        var change = (delegate.restoredChange ?? 0) + 1
        var unavailableSince: Int?
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            let object = roots[(change - 1) % objects]
            object.value = change
            manager.invalidateRestorableState(for: object)
            delegate.change = change
            let started = Date().timeIntervalSince1970
            let saved = Result { try manager.preserveState(roots: roots) }
            switch saved {
            case .success:
                // Written straight to the descriptor, so a kill right after cannot lose the line.
                try StandardStream.write("acknowledged \(change) \(Date().timeIntervalSince1970) \(started)\n")
                if let since = unavailableSince {
                    printError("saving again from change \(change), after failing from change \(since)")
                    unavailableSince = nil
                }
            case .failure(let error):
                if unavailableSince == nil {
                    printError("saves fail from change \(change): \(error)")
                    unavailableSince = change
                }
                usleep(2_000)
            }
            change += 1
        }
    }

    /// What ``check(_:)`` found.
    enum CheckResult {
        /// The restored objects are the app's state after this change.
        case restored(change: Int)
        /// They are not: what differs.
        case mismatch(String)
    }

    /// Restores the store; returns the change it holds, or a mismatch.
    func check(_ journal: Journal) throws -> CheckResult {
        let (_, delegate, roots) = try restored(
            journal, logger: Logger(label: "soak", factory: { _ in SwiftLogNoOpLogHandler() }))
        let change = delegate.restoredChange ?? 0
        for (index, object) in roots.enumerated() where object.value != value(of: index, after: change) {
            return .mismatch(
                "object \(index) restored as \(object.value), the app had \(value(of: index, after: change)) after change \(change)"
            )
        }
        return .restored(change: change)
    }
}
