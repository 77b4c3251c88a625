// Ported app: the restoration pattern of Simplenote for iOS (Automattic/simplenote-ios): the note
// list keeps its search, and the note editor pushed on the navigation stack saves only the note's
// Simperium key, which it reads back with `decodeObject(forKey:) as? String` and looks up in the
// bucket. The app never invalidates anything: it relies on the default pass saving every change.
//
// Method bodies: 7 of 8 compiled unchanged (the list's and the editor's
// encode/decode, the editor's restoration class, the delegate's should-save and should-restore, whose
// signatures only were mapped). Edited: 1, the editor's init, `super.init(nibName: nil, bundle: nil)`
// then setting `restorationIdentifier` became `super.init(restorationIdentifier:)`.
import Foundation
import StateJournal
import StateRestoration
import Testing

extension PortedApps {
    @Suite struct PortedAppSimplenoteTests {}
}

/// Simplenote's notes, which live in Simperium's store, not in the restoration archive.
private final class SimplenoteNote {
    let simperiumKey: String
    var content: String

    init(simperiumKey: String, content: String) {
        self.simperiumKey = simperiumKey
        self.content = content
    }
}

/// The notes bucket, which a relaunched process opens again from its own database.
private final class NotesBucket {
    private var notes: [String: SimplenoteNote] = [:]

    init(_ notes: [SimplenoteNote]) { for note in notes { self.notes[note.simperiumKey] = note } }

    func object(forKey key: String) -> SimplenoteNote? { notes[key] }
}

private final class SPNoteListViewController: RestorableViewController {
    var searchText: String?
    var isSearching = false
    var scrollOffset = 0.0

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(searchText, forKey: "SPNoteListSearchText")
        coder.encode(isSearching, forKey: "SPNoteListIsSearching")
        coder.encode(scrollOffset, forKey: "SPNoteListScrollOffset")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        searchText = coder.decodeObject(forKey: "SPNoteListSearchText") as? String
        isSearching = coder.decodeBool(forKey: "SPNoteListIsSearching")
        scrollOffset = coder.decodeDouble(forKey: "SPNoteListScrollOffset")
    }
}

private final class SPNoteEditorViewController: RestorableViewController, ControllerRestoration {
    /// The bucket of the running process, as `SPAppDelegate.shared.simperium` is.
    nonisolated(unsafe) static var bucket = NotesBucket([])

    var currentNote: SimplenoteNote?
    var isPreviewing = false

    init(note: SimplenoteNote?) {
        currentNote = note
        super.init(restorationIdentifier: "SPNoteEditorViewController")
        restorationClass = SPNoteEditorViewController.self
    }

    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        SPNoteEditorViewController(note: nil)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(currentNote?.simperiumKey, forKey: "SPNoteEditorCurrentNoteKey")
        coder.encode(isPreviewing, forKey: "SPNoteEditorIsPreviewing")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        guard let simperiumKey = coder.decodeObject(forKey: "SPNoteEditorCurrentNoteKey") as? String,
            let note = Self.bucket.object(forKey: simperiumKey)
        else {
            return
        }
        currentNote = note
        isPreviewing = coder.decodeBool(forKey: "SPNoteEditorIsPreviewing")
    }
}

private final class SimplenoteAppDelegate: ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }

    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }
}

/// One process of the app: it opens the store, as a relaunched process does.
private struct SimplenoteProcess {
    let journal: Journal
    let manager: RestorationManager
    let delegate = SimplenoteAppDelegate()

    init(_ store: TestStore) throws {
        journal = try Journal.open(at: store.url)
        manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "4.50", interfaceIdiom: "phone"))
        manager.delegate = delegate
        manager.register(restorationClass: SPNoteEditorViewController.self)
    }
}

extension PortedApps.PortedAppSimplenoteTests {
    private static func notes() -> [SimplenoteNote] {
        [
            SimplenoteNote(simperiumKey: "a1b2c3", content: "Groceries"),
            SimplenoteNote(simperiumKey: "d4e5f6", content: "Trip to Lisbon"),
        ]
    }

    @Test func theOpenNoteTheSearchAndTheStackComeBackAfterChangesThatWereNeverInvalidated() throws {
        let store = TestStore()
        do {
            SPNoteEditorViewController.bucket = NotesBucket(Self.notes())
            let process = try SimplenoteProcess(store)
            let navigation = RestorableNavigationController(restorationIdentifier: "SPNavigationController")
            let list = SPNoteListViewController(restorationIdentifier: "SPNoteListViewController")
            navigation.viewControllers = [list]
            try process.manager.preserveState(roots: [navigation])

            // The user searches and opens a note; nothing tells the manager.
            list.searchText = "Lisbon"
            list.isSearching = true
            list.scrollOffset = 312.5
            let editor = SPNoteEditorViewController(note: SPNoteEditorViewController.bucket.object(forKey: "a1b2c3"))
            navigation.viewControllers = [list, editor]
            try process.manager.preserveState(roots: [navigation])

            // Then switches to another note in preview mode, and saves again.
            editor.currentNote = SPNoteEditorViewController.bucket.object(forKey: "d4e5f6")
            editor.isPreviewing = true
            try process.manager.preserveState(roots: [navigation])
            try process.journal.close()
        }

        // A new process: a new bucket from its database, a new storyboard's controllers.
        SPNoteEditorViewController.bucket = NotesBucket(Self.notes())
        let process = try SimplenoteProcess(store)
        let navigation = RestorableNavigationController(restorationIdentifier: "SPNavigationController")
        let list = SPNoteListViewController(restorationIdentifier: "SPNoteListViewController")
        navigation.viewControllers = [list]
        let report = try process.manager.restoreState(roots: [navigation])

        #expect(report.diagnostics.isEmpty)
        #expect(
            navigation.viewControllers.map(\.restorationIdentifier) == [
                "SPNoteListViewController", "SPNoteEditorViewController",
            ])
        #expect(navigation.viewControllers.first === list)
        #expect(list.searchText == "Lisbon")
        #expect(list.isSearching)
        #expect(list.scrollOffset == 312.5)
        let editor = navigation.topViewController as? SPNoteEditorViewController
        #expect(editor?.currentNote?.simperiumKey == "d4e5f6")
        #expect(editor?.currentNote?.content == "Trip to Lisbon")
        #expect(editor?.isPreviewing == true)
    }
}
