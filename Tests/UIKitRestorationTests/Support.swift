import StateJournal
import StateJournalTestSupport
import UIKitRestoration

/// A store in a temporary directory, opened afresh for each simulated launch.
final class TestStore {
    let directory = TemporaryDirectory()
    var url: URL { URL(fileURLWithPath: directory.appending("store")) }

    func open() throws -> Journal {
        try Journal.open(at: url, options: JournalOptions(durability: .none))
    }
}

/// An application delegate that saves and restores, as every test app opts in.
final class AlwaysRestore: ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
}

/// A manager over `journal` for a desktop app of version 1, with `delegate`, as every launch of
/// these tests makes one.
func makeManager(_ journal: Journal, delegate: some ApplicationRestorationDelegate) -> RestorationManager {
    let manager = RestorationManager(
        journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop"))
    manager.delegate = delegate
    return manager
}
