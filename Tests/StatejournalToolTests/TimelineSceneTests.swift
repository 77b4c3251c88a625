import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// `statejournal timeline` over a store with several windows (scenes).
@Suite(.serialized, .timeLimit(.minutes(10)))
struct TimelineSceneTests {
    final class Window: RestorableController {
        var value: Int
        init(_ value: Int) { self.value = value }
        var restorationIdentifier: String? { "Main" }
        func encodeRestorableState(with coder: RestorationCoder) { coder.encode(value, forKey: "value") }
        func decodeRestorableState(with coder: RestorationCoder) { value = coder.decodeInteger(forKey: "value") }
    }

    final class Delegate: ApplicationRestorationDelegate {
        weak var manager: RestorationManager?
        var extendsNext = false
        func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func didDecodeRestorableState(_ coder: RestorationCoder) {
            guard extendsNext else { return }
            extendsNext = false
            manager?.extendStateRestoration()
        }
    }

    @Test func eachWindowsLaunchIsLabelledAndAClosedWindowIsMarked() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("windows")
        let a = try #require(SceneSession(persistentIdentifier: "A"))
        let b = try #require(SceneSession(persistentIdentifier: "B"))
        let delegate = Delegate()
        func manager(_ journal: Journal) -> RestorationManager {
            let manager = RestorationManager(
                journal: journal,
                configuration: RestorationConfiguration(
                    bundleVersion: "1", interfaceIdiom: "desktop", systemVersion: "6.8"))
            manager.delegate = delegate
            delegate.manager = manager
            return manager
        }
        do {
            let journal = try Journal.open(at: URL(fileURLWithPath: store), options: JournalOptions(durability: .none))
            let first = manager(journal)
            try first.preserveState(roots: [Window(1)], scene: a)
            try first.preserveState(roots: [Window(2)], scene: b)
            try journal.close()
            let reopened = try Journal.open(at: URL(fileURLWithPath: store), options: JournalOptions(durability: .none))
            let second = manager(reopened)
            // Window A's restoration is held open while window B restores and completes.
            delegate.extendsNext = true
            try second.restoreState(roots: [Window(0)], scene: a)
            try second.restoreState(roots: [Window(0)], scene: b)
            try second.completeStateRestoration(scene: a)
            try second.discardSceneSessions([b])
            try reopened.close()
        }
        let (_, model) = try TimelineTests().timeline(store)
        let launches = model["launches"] as! [[String: Any]]
        #expect(launches.map { $0["scene"] as? String } == ["A", "B"])
        #expect(launches.allSatisfy { $0["completed"] as? Int != nil })
        // Rows: A began 2, A held open 3 (a `restorationHeld` marker), B began 4, B completed 5, A
        // completed 6, B discarded 7.
        #expect(launches.map { $0["began"] as? Int } == [2, 4])
        #expect(launches.map { $0["completed"] as? Int } == [6, 5])
        let markers = model["markers"] as! [[String: Any]]
        let closed = try #require(markers.first { $0["type"] as? String == "sceneDiscarded" })
        #expect(closed["row"] as? Int == 7)
        #expect((closed["text"] as? String)?.contains("Window B closed") == true)
        let metadata = (model["epochs"] as! [String: Any])["metadata"] as! [[String: String]]
        #expect(metadata.contains { $0[EpochMetadataKey.scene] == "A" })
    }
}
