// Ported apps with several windows: the restoration code of multi-window iPad and Mac apps, written as
// for UIKit's scenes (one `UISceneSession` per window, `application(_:didDiscardSceneSessions:)` when
// the user closes one), moved onto `SceneSession` and the `scene:` forms of the passes. Every launch is
// a fresh journal, manager and set of controllers over the same store directory; "killing" the app
// closes the journal and drops everything without completing what was in progress, as SIGKILL would.
//
// The patterns modelled, each from a public app or sample:
// - A document-based editor with one window per document: AppKit's per-window restoration as TextEdit
//   uses it, and Apple's "Supporting Multiple Windows on iPad" sample (Gallery), where each scene
//   restores what it showed; the document's file path is a natural persistent identifier.
// - A mail app whose compose window is a scene of its own (Mail on iPadOS: a draft dragged into its own
//   window, closed with `requestSceneSessionDestruction` when sent), beside the mailbox window, whose
//   list waits for messages to load with `extendStateRestoration()`.
// - A browser with tabs per window: Firefox for iOS (mozilla-mobile/firefox-ios), whose iPad windows
//   each keep their own tabs keyed by a window UUID, and Safari's windows on iPad.
// - A messages app with one conversation per window (Messages on iPadOS): the same controller class
//   with the same restoration identifier in several windows.
import Foundation
import StateJournal
import StateRestoration
import Testing

extension PortedApps {
    @Suite struct PortedAppMultiWindowTests {}
}

// MARK: - The app's controllers, written as for UIKit

/// The app delegate: opts into both passes, and records the identifier paths it is asked about
/// (UIKit's `application(_:viewControllerWithRestorationIdentifierPath:coder:)`).
private final class MultiWindowAppDelegate: ApplicationRestorationDelegate {
    var askedPaths: [[String]] = []

    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }

    func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        askedPaths.append(identifierComponents)
        return nil
    }
}

/// The editor of one document, embedded in the document window's root (a storyboard's split view).
private final class EditorViewController: RestorableViewController {
    var documentURL: URL?
    var cursor = 0
    var scrollOffset = 0.0

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(documentURL, forKey: "documentURL")
        coder.encode(cursor, forKey: "cursor")
        coder.encode(scrollOffset, forKey: "scrollOffset")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        documentURL = coder.decodeObject(of: NSURL.self, forKey: "documentURL") as URL?
        cursor = coder.decodeInteger(forKey: "cursor")
        scrollOffset = coder.decodeDouble(forKey: "scrollOffset")
    }
}

/// A document window as the storyboard creates it for every scene: a root with the editor inside.
private final class DocumentWindow {
    let root = RestorableViewController(restorationIdentifier: "DocumentWindow")
    let editor = EditorViewController(restorationIdentifier: "Editor")

    init() { root.children = [editor] }
}

/// A document's undo history, a custom object registered under the window's editor
/// (`registerObjectForStateRestoration(_:restorationIdentifier:)`, scoped by its `restorationParent`).
private final class UndoHistory: StateRestoring {
    weak var editor: EditorViewController?
    var steps: [String] = []

    init(editor: EditorViewController) { self.editor = editor }

    var restorationParent: (any StateRestoring)? { editor }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(steps, forKey: "steps")
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        steps = coder.decodeObject(forKey: "steps") as? [String] ?? []
    }
}

/// The mailbox list of the main window; it extends the restoration until the messages are loaded.
private final class MailboxViewController: RestorableViewController {
    var selectedMessageID: String?
    var extendWhileLoading: (() -> Void)?

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(selectedMessageID, forKey: "selectedMessageID")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        selectedMessageID = coder.decodeObject(forKey: "selectedMessageID") as? String
        extendWhileLoading?()
    }
}

/// A compose window's draft; the attachment picker it presents is saved with it.
private final class ComposeViewController: RestorableViewController {
    var to: [String] = []
    var subject = ""
    var body = ""
    var onDecode: (() -> Void)?

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(to, forKey: "to")
        coder.encode(subject, forKey: "subject")
        coder.encode(body, forKey: "body")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        to = coder.decodeObject(forKey: "to") as? [String] ?? []
        subject = coder.decodeObject(forKey: "subject") as? String ?? ""
        body = coder.decodeObject(forKey: "body") as? String ?? ""
        onDecode?()
    }
}

/// One browser window: its tabs' URLs and the selected tab (Firefox for iOS keeps them per window).
private final class BrowserViewController: RestorableViewController {
    var tabs: [String] = []
    var selectedTab = 0
    var onDecode: (() -> Void)?

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(tabs, forKey: "tabs")
        coder.encode(selectedTab, forKey: "selectedTab")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        tabs = coder.decodeObject(forKey: "tabs") as? [String] ?? []
        selectedTab = coder.decodeInteger(forKey: "selectedTab")
        onDecode?()
    }
}

/// One conversation; every window's is created with the same identifier, "Conversation".
private final class ConversationViewController: RestorableViewController {
    var conversationID = ""
    var unsentText = ""
    var onDecode: (() -> Void)?

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(conversationID, forKey: "conversationID")
        coder.encode(unsentText, forKey: "unsentText")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        conversationID = coder.decodeObject(forKey: "conversationID") as? String ?? ""
        unsentText = coder.decodeObject(forKey: "unsentText") as? String ?? ""
        onDecode?()
    }
}

/// One run of the app over the store: opened at launch, killed by closing the journal and dropping
/// the manager with whatever was in progress.
private final class AppProcess {
    let journal: Journal
    let manager: RestorationManager
    let delegate = MultiWindowAppDelegate()

    init(_ store: TestStore) throws {
        journal = try store.open()
        manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "17.2", interfaceIdiom: "pad"))
        manager.delegate = delegate
    }

    func kill() throws { try journal.close() }
}

private func session(_ identifier: String) -> SceneSession {
    SceneSession(persistentIdentifier: identifier)!
}

private func isCrashLoopFallback(_ reason: RestorationReason?) -> Bool {
    if case .crashLoopFallback = reason { return true }
    return false
}

private func isCommitted(_ report: PreservationReport) -> Bool {
    if case .committed = report.outcome { return true }
    return false
}

// MARK: - A document-based editor, one window per document

extension PortedApps.PortedAppMultiWindowTests {
    // UIKit: each scene's session comes back in `openSessions`, in no promised order, and each scene
    // restores its own state whichever connects first; the restoration identifier paths the delegate
    // sees start at the window's root view controller.
    @Test func eachDocumentWindowComesBackWithItsOwnDocumentWhicheverOrderTheWindowsReconnectIn() throws {
        let store = TestStore()
        let documents = ["Report.txt", "Notes.md", "Budget.csv"]
        let sessions = documents.map { _ in SceneSession() }
        do {
            let app = try AppProcess(store)
            for (index, scene) in sessions.enumerated() {
                let window = DocumentWindow()
                window.editor.documentURL = URL(fileURLWithPath: "/home/me/Documents/\(documents[index])")
                window.editor.cursor = 100 * (index + 1)
                window.editor.scrollOffset = Double(index) + 0.5
                let report = try app.manager.preserveState(roots: [window.root], scene: scene)
                #expect(isCommitted(report))
                #expect(report.scene == scene)
            }
            try app.kill()
        }

        let app = try AppProcess(store)
        #expect(app.manager.openSessions == Set(sessions))
        for index in [2, 0, 1] {
            let window = DocumentWindow()
            let report = try app.manager.restoreState(roots: [window.root], scene: sessions[index])
            #expect(report.outcome == .restored)
            #expect(report.scene == sessions[index])
            #expect(report.reason == .launch)
            #expect(report.diagnostics.isEmpty)
            #expect(window.editor.documentURL == URL(fileURLWithPath: "/home/me/Documents/\(documents[index])"))
            #expect(window.editor.cursor == 100 * (index + 1))
            #expect(window.editor.scrollOffset == Double(index) + 0.5)
        }
        #expect(!app.delegate.askedPaths.isEmpty)
        #expect(app.delegate.askedPaths.allSatisfy { $0.first == "DocumentWindow" })
        #expect(!app.delegate.askedPaths.joined().contains { $0.hasPrefix("@scene:") })
        try app.kill()
    }

    // UIKit: a session the system does not reconnect at launch (the user left it in the app switcher)
    // keeps its state until it is connected or discarded; saving the other windows does not touch it.
    @Test func windowsNotRestoredAtThisLaunchKeepTheirStateWhileTheRestorationOfOthersIsSaved() throws {
        let store = TestStore()
        let sessions = [SceneSession(), SceneSession(), SceneSession()]
        do {
            let app = try AppProcess(store)
            for (index, scene) in sessions.enumerated() {
                let window = DocumentWindow()
                window.editor.cursor = index + 1
                try app.manager.preserveState(roots: [window.root], scene: scene)
            }
            try app.kill()
        }
        do {
            let app = try AppProcess(store)
            let window = DocumentWindow()
            try app.manager.restoreState(roots: [window.root], scene: sessions[1])
            #expect(window.editor.cursor == 2)
            window.editor.cursor = 22
            let report = try app.manager.preserveState(roots: [window.root], scene: sessions[1])
            #expect(report.removedPaths.isEmpty)
            #expect(report.writtenPaths.allSatisfy { $0.components.first == "@scene:\(sessions[1])" })
            try app.kill()
        }

        let app = try AppProcess(store)
        #expect(app.manager.openSessions == Set(sessions))
        for (index, expected) in [1, 22, 3].enumerated() {
            let window = DocumentWindow()
            try app.manager.restoreState(roots: [window.root], scene: sessions[index])
            #expect(window.editor.cursor == expected)
        }
        try app.kill()
    }

    // AppKit and UIKit take the identifier as an opaque string. A document app may well use the
    // document's path (slashes, dots) as a window's identifier; other apps use a bundle-like name,
    // emoji or text in the user's language, or a long encoded bookmark.
    @Test func windowIdentifiersWithSlashesDotsTheSceneMarkerAndUnicodeComeBackExactly() throws {
        let store = TestStore()
        let identifiers = [
            "/home/me/Documents/Report.txt",
            "/",
            "..",
            "../../etc/passwd",
            "@scene:Other",
            "A/@scene:B",
            "@scene:",
            "trailing\\",
            "back\\/slash",
            "with space and\ttab",
            "日本語のメモ 📄",
            "cafe\u{301}",
            String(repeating: "very-long/", count: 101) + "1234567",  // 1,017 bytes: the longest that fits
        ]
        do {
            let app = try AppProcess(store)
            for (index, identifier) in identifiers.enumerated() {
                let window = DocumentWindow()
                window.editor.cursor = index
                let report = try app.manager.preserveState(roots: [window.root], scene: session(identifier))
                #expect(isCommitted(report), "\(identifier)")
                #expect(
                    report.writtenPaths.allSatisfy {
                        $0 == RestorationManager.applicationPath || $0.components.first == "@scene:\(identifier)"
                    })
            }
            try app.kill()
        }

        let app = try AppProcess(store)
        let open = app.manager.openSessions
        #expect(open.count == identifiers.count)
        #expect(Set(open.map { Array($0.persistentIdentifier.utf8) }) == Set(identifiers.map { Array($0.utf8) }))
        for (index, identifier) in identifiers.enumerated() {
            let window = DocumentWindow()
            let report = try app.manager.restoreState(roots: [window.root], scene: session(identifier))
            #expect(report.outcome == .restored, "\(identifier)")
            #expect(window.editor.cursor == index, "\(identifier)")
        }
        try app.manager.discardSceneSessions([session("A/@scene:B"), session("/")])
        #expect(app.manager.openSessions.count == identifiers.count - 2)
        let other = DocumentWindow()
        try app.manager.restoreState(roots: [other.root], scene: session("@scene:Other"))
        #expect(other.editor.cursor == identifiers.firstIndex(of: "@scene:Other"))
        try app.kill()
    }

    // UIKit scopes a registered object by its restoration parent, so every document window can register
    // its undo history under the same identifier. Each window's history is saved with that window,
    // comes back into the object registered again before the window restores, and goes with the window.
    @Test func eachWindowsRegisteredUndoHistoryUnderTheSameIdentifierStaysWithItsWindow() throws {
        let store = TestStore()
        let first = session("first-document")
        let second = session("second-document")
        do {
            let app = try AppProcess(store)
            for (scene, steps) in [(first, ["typing"]), (second, ["paste", "bold"])] {
                let window = DocumentWindow()
                let history = UndoHistory(editor: window.editor)
                history.steps = steps
                app.manager.registerObject(forStateRestoration: history, restorationIdentifier: "UndoHistory")
                let report = try app.manager.preserveState(roots: [window.root], scene: scene)
                #expect(
                    report.writtenPaths.contains(
                        RestorationPath("@scene:\(scene)", "DocumentWindow", "Editor", "UndoHistory")))
                #expect(report.problems.isEmpty)
            }
            try app.kill()
        }
        do {
            let app = try AppProcess(store)
            var histories: [SceneSession: UndoHistory] = [:]
            for scene in [second, first] {
                let window = DocumentWindow()
                let history = UndoHistory(editor: window.editor)
                app.manager.registerObject(forStateRestoration: history, restorationIdentifier: "UndoHistory")
                histories[scene] = history
                let report = try app.manager.restoreState(roots: [window.root], scene: scene)
                #expect(report.skipped.isEmpty)
                #expect(report.diagnostics.isEmpty)
            }
            #expect(histories[first]?.steps == ["typing"])
            #expect(histories[second]?.steps == ["paste", "bold"])
            try app.manager.discardSceneSessions([first])
            app.manager.unregisterObject(histories[first]!)
            try app.kill()
        }
        let app = try AppProcess(store)
        #expect(app.manager.openSessions == [second])
        #expect(
            try app.journal.state().paths.allSatisfy { !$0.components[0].hasPrefix("@scene:first-document") })
        try app.kill()
    }

    // UIKit's persistent identifiers have no documented length limit, and AppKit apps that name a window
    // after a document's security-scoped bookmark get long ones. Here a scene's identifier becomes one
    // path component, `@scene:` and the identifier, which holds at most 1,024 UTF-8 bytes: a session with
    // a longer identifier is refused when it is created (`nil`, as for an empty one), as documented,
    // rather than accepted and then never saved, which its passes once did, saying so only in their
    // problems.
    @Test func aWindowIdentifierLongerThanAPathComponentAllowsIsRefusedWhenTheSessionIsCreated() throws {
        #expect(SceneSession.maximumIdentifierLength == 1_017)
        #expect(SceneSession(persistentIdentifier: String(repeating: "bookmark/", count: 200)) == nil)
        #expect(SceneSession(persistentIdentifier: String(repeating: "x", count: 1_018)) == nil)
        // Four bytes of UTF-8 per character: 255 fit, 255 × 4 = 1,020 do not.
        #expect(SceneSession(persistentIdentifier: String(repeating: "📄", count: 254)) != nil)
        #expect(SceneSession(persistentIdentifier: String(repeating: "📄", count: 255)) == nil)

        // The longest identifier there is saves and restores.
        let store = TestStore()
        let longest = session(String(repeating: "x", count: 1_017))
        do {
            let app = try AppProcess(store)
            let window = DocumentWindow()
            window.editor.cursor = 5
            let report = try app.manager.preserveState(roots: [window.root], scene: longest)
            #expect(report.problems.isEmpty)
            try app.kill()
        }
        let app = try AppProcess(store)
        #expect(app.manager.openSessions.contains(longest))
        let window = DocumentWindow()
        #expect(try app.manager.restoreState(roots: [window.root], scene: longest).outcome == .restored)
        #expect(window.editor.cursor == 5)
        try app.kill()
    }

    // UIKit reserves no restoration identifier. Here identifiers of roots starting with `@` are reserved
    // (documented on `RestorationManager.applicationPath`): a main-window root named like a scene's
    // component must not overwrite, or remove, that scene's saved window.
    @Test func aMainWindowRootNamedLikeASceneComponentLeavesThatScenesWindowAlone() throws {
        let store = TestStore()
        let inspector = session("Inspector")
        do {
            let app = try AppProcess(store)
            let window = DocumentWindow()
            window.editor.cursor = 7
            try app.manager.preserveState(roots: [window.root], scene: inspector)
            let oddRoot = EditorViewController(restorationIdentifier: "@scene:Inspector")
            oddRoot.cursor = 99
            let report = try app.manager.preserveState(roots: [oddRoot])
            #expect(!report.removedPaths.contains { $0.components.first == "@scene:Inspector" })
            #expect(!report.writtenPaths.contains { $0.components.first == "@scene:Inspector" })
            #expect(!report.problems.isEmpty, "the reserved identifier is refused without a word: \(report)")
            try app.kill()
        }

        let app = try AppProcess(store)
        #expect(app.manager.openSessions == [inspector])
        let window = DocumentWindow()
        let report = try app.manager.restoreState(roots: [window.root], scene: inspector)
        #expect(report.outcome == .restored)
        #expect(window.editor.cursor == 7)
        try app.kill()
    }
}

// MARK: - A mail app with a compose window

extension PortedApps.PortedAppMultiWindowTests {
    // UIKit: a scene the user closed is discarded (`application(_:didDiscardSceneSessions:)`); it is not
    // in `openSessions` at the next launch and its state is gone, while the main window restores.
    @Test func aComposeWindowClosedBeforeTheAppIsKilledDoesNotComeBackButTheMailboxDoes() throws {
        let store = TestStore()
        let compose = SceneSession()
        do {
            let app = try AppProcess(store)
            let mailbox = MailboxViewController(restorationIdentifier: "Mailbox")
            mailbox.selectedMessageID = "<42@example.org>"
            try app.manager.preserveState(roots: [mailbox])
            let draft = ComposeViewController(restorationIdentifier: "Compose")
            draft.to = ["ana@example.org"]
            draft.subject = "Lunch"
            try app.manager.preserveState(roots: [draft], scene: compose)
            #expect(app.manager.openSessions == [compose])
            let discard = try app.manager.discardSceneSessions([compose])
            #expect(discard?.metadata[EpochMetadataKey.discardedScenes] == "[\"\(compose)\"]")
            #expect(app.manager.openSessions.isEmpty)
            try app.kill()
        }

        let app = try AppProcess(store)
        #expect(app.manager.openSessions.isEmpty)
        let mailbox = MailboxViewController(restorationIdentifier: "Mailbox")
        #expect(try app.manager.restoreState(roots: [mailbox]).outcome == .restored)
        #expect(mailbox.selectedMessageID == "<42@example.org>")
        let draft = ComposeViewController(restorationIdentifier: "Compose")
        let report = try app.manager.restoreState(roots: [draft], scene: compose)
        #expect(report.outcome == .nothingToRestore)
        #expect(draft.subject.isEmpty)
        #expect(try app.journal.state().paths.allSatisfy { !$0.components[0].hasPrefix("@scene:") })
        try app.kill()
    }

    // UIKit restores scenes independently: while the mailbox window holds its restoration open
    // (`extendStateRestoration()` until the messages load), the user can restore, save and close a compose
    // window; the mailbox then completes and its next launch is an ordinary one, not a crash.
    @Test func aComposeWindowClosedWhileTheMailboxWindowIsStillRestoringLeavesTheMailboxAlone() throws {
        let store = TestStore()
        let mailboxScene = SceneSession()
        let compose = SceneSession()
        do {
            let app = try AppProcess(store)
            let mailbox = MailboxViewController(restorationIdentifier: "Mailbox")
            mailbox.selectedMessageID = "<1@example.org>"
            try app.manager.preserveState(roots: [mailbox], scene: mailboxScene)
            let draft = ComposeViewController(restorationIdentifier: "Compose")
            draft.subject = "Re: minutes"
            try app.manager.preserveState(roots: [draft], scene: compose)
            try app.kill()
        }
        do {
            let app = try AppProcess(store)
            let mailbox = MailboxViewController(restorationIdentifier: "Mailbox")
            let manager = app.manager
            mailbox.extendWhileLoading = { manager.extendStateRestoration() }
            try app.manager.restoreState(roots: [mailbox], scene: mailboxScene)
            #expect(app.manager.isRestoring(scene: mailboxScene))

            let draft = ComposeViewController(restorationIdentifier: "Compose")
            let draftReport = try app.manager.restoreState(roots: [draft], scene: compose)
            #expect(draftReport.outcome == .restored)
            #expect(draft.subject == "Re: minutes")
            #expect(!app.manager.isRestoring(scene: compose))
            draft.body = "See attached."
            #expect(isCommitted(try app.manager.preserveState(roots: [draft], scene: compose)))
            mailbox.selectedMessageID = "<2@example.org>"
            #expect(
                try app.manager.preserveState(roots: [mailbox], scene: mailboxScene).outcome == .restorationInProgress)
            try app.manager.discardSceneSessions([compose])
            #expect(app.manager.isRestoring(scene: mailboxScene))
            #expect(app.manager.openSessions == [mailboxScene])

            try app.manager.completeStateRestoration(scene: mailboxScene)
            #expect(!app.manager.isRestoring)
            #expect(isCommitted(try app.manager.preserveState(roots: [mailbox], scene: mailboxScene)))
            try app.kill()
        }

        let app = try AppProcess(store)
        #expect(app.manager.openSessions == [mailboxScene])
        let mailbox = MailboxViewController(restorationIdentifier: "Mailbox")
        let report = try app.manager.restoreState(roots: [mailbox], scene: mailboxScene)
        #expect(report.reason == .launch)
        #expect(report.diagnostics.isEmpty)
        #expect(mailbox.selectedMessageID == "<2@example.org>")
        try app.kill()
    }

    // UIKit: closing a window ends its scene, whatever it was doing; nothing of that scene counts as a
    // crash later. Here the discard stops the restoration without a completion marker, and the window
    // reopened under the same identifier must not be taken for a crash loop.
    @Test func aWindowClosedInTheMiddleOfItsOwnRestorationIsNotTakenForACrashWhenReopened() throws {
        let store = TestStore()
        let compose = session("compose-1")
        do {
            let app = try AppProcess(store)
            let draft = ComposeViewController(restorationIdentifier: "Compose")
            draft.subject = "v1"
            try app.manager.preserveState(roots: [draft], scene: compose)
            try app.kill()
        }
        for launch in 1...3 {
            let app = try AppProcess(store)
            let restoring = ComposeViewController(restorationIdentifier: "Compose")
            let manager = app.manager
            restoring.onDecode = { manager.extendStateRestoration() }  // loads the draft's attachments
            let report = try app.manager.restoreState(roots: [restoring], scene: compose)
            #expect(report.reason == .launch, "launch \(launch)")
            #expect(report.diagnostics.isEmpty, "launch \(launch)")
            #expect(app.manager.isRestoring(scene: compose))
            try app.manager.discardSceneSessions([compose])
            #expect(!app.manager.isRestoring(scene: compose))
            #expect(!app.manager.isRestoring)
            let draft = ComposeViewController(restorationIdentifier: "Compose")
            draft.subject = "v\(launch + 1)"
            let reopened = try app.manager.preserveState(roots: [draft], scene: compose)
            #expect(isCommitted(reopened), "launch \(launch)")
            try app.kill()
        }
        let app = try AppProcess(store)
        let draft = ComposeViewController(restorationIdentifier: "Compose")
        let report = try app.manager.restoreState(roots: [draft], scene: compose)
        #expect(report.reason == .launch)
        #expect(draft.subject == "v4")
        try app.kill()
    }

    // UIKit gives a new window a new session, but an app that keys windows by its own identifier (a
    // draft's UUID) can request the same one again. After a discard, the window starts empty: what the
    // closed window presented does not come back, and saving the same objects again writes them again.
    @Test func aComposeWindowReopenedUnderTheSameIdentifierAfterBeingClosedStartsAFreshTree() throws {
        let store = TestStore()
        let compose = session("draft-6F1C")
        do {
            let app = try AppProcess(store)
            let draft = ComposeViewController(restorationIdentifier: "Compose")
            draft.subject = "Holiday photos"
            let picker = ComposeViewController(restorationIdentifier: "AttachmentPicker")
            picker.body = "~/Pictures"
            draft.presentedViewController = picker
            try app.manager.preserveState(roots: [draft], scene: compose)

            try app.manager.discardSceneSessions([compose])
            #expect(!app.manager.openSessions.contains(compose))
            let empty = ComposeViewController(restorationIdentifier: "Compose")
            #expect(try app.manager.restoreState(roots: [empty], scene: compose).outcome == .nothingToRestore)
            #expect(empty.subject.isEmpty)

            draft.presentedViewController = nil
            let again = try app.manager.preserveState(roots: [draft], scene: compose, mode: .incremental)
            #expect(again.mode == .full)
            #expect(again.writtenPaths == [RestorationPath("@scene:draft-6F1C", "Compose")])
            try app.kill()
        }

        let app = try AppProcess(store)
        #expect(app.manager.openSessions == [compose])
        let draft = ComposeViewController(restorationIdentifier: "Compose")
        let report = try app.manager.restoreState(roots: [draft], scene: compose)
        #expect(draft.subject == "Holiday photos")
        #expect(report.restored.map(\.path) == [RestorationPath("@scene:draft-6F1C", "Compose")])
        #expect(report.skipped.isEmpty)
        try app.kill()
    }

    // UIKit's `extendStateRestoration()` and `completeStateRestoration()` are app-wide, so UIKit code
    // calls the completion later without naming a window. Here that call is documented to release the
    // default scene's restoration, not the window's that extended it: the window stays held (its passes
    // are skipped) until the scene's completion. This test shows the documented behaviour.
    @Test func completingWithoutNamingTheWindowLaterReleasesTheMainWindowNotTheWindowThatExtended() throws {
        let store = TestStore()
        let mailboxScene = SceneSession()
        do {
            let app = try AppProcess(store)
            try app.manager.preserveState(
                roots: [MailboxViewController(restorationIdentifier: "Mailbox")], scene: mailboxScene)
            try app.kill()
        }
        let app = try AppProcess(store)
        let mailbox = MailboxViewController(restorationIdentifier: "Mailbox")
        let manager = app.manager
        mailbox.extendWhileLoading = { manager.extendStateRestoration() }
        try app.manager.restoreState(roots: [mailbox], scene: mailboxScene)
        #expect(app.manager.isRestoring(scene: mailboxScene))

        try app.manager.completeStateRestoration()  // as UIKit code calls it once the messages loaded
        #expect(app.manager.isRestoring(scene: mailboxScene))
        mailbox.selectedMessageID = "<7@example.org>"
        #expect(try app.manager.preserveState(roots: [mailbox], scene: mailboxScene).outcome == .restorationInProgress)

        try app.manager.completeStateRestoration(scene: mailboxScene)
        #expect(!app.manager.isRestoring)
        #expect(isCommitted(try app.manager.preserveState(roots: [mailbox], scene: mailboxScene)))
        try app.kill()
    }
}

// MARK: - A browser with tabs per window

extension PortedApps.PortedAppMultiWindowTests {
    // Firefox for iOS on iPad: every window has its own tabs. Fifty windows are saved, the app is
    // killed, every window is restored in a shuffled order, then every other window is closed.
    @Test func fiftyBrowserWindowsComeBackWithTheirOwnTabsAndClosingHalfOfThemKeepsTheRest() throws {
        let store = TestStore()
        let sessions = (0..<50).map { session(String(format: "window-%02d-", $0) + UUID().uuidString) }
        func tabs(_ index: Int) -> [String] { (0...index % 5).map { "https://example.org/\(index)/\($0)" } }
        do {
            let app = try AppProcess(store)
            for (index, scene) in sessions.enumerated() {
                let browser = BrowserViewController(restorationIdentifier: "Browser")
                browser.tabs = tabs(index)
                browser.selectedTab = index % 5
                try app.manager.preserveState(roots: [browser], scene: scene)
            }
            try app.kill()
        }
        do {
            let app = try AppProcess(store)
            #expect(app.manager.openSessions == Set(sessions))
            var generator = SystemRandomNumberGenerator()
            for index in sessions.indices.shuffled(using: &generator) {
                let browser = BrowserViewController(restorationIdentifier: "Browser")
                let report = try app.manager.restoreState(roots: [browser], scene: sessions[index])
                #expect(report.outcome == .restored)
                #expect(browser.tabs == tabs(index))
                #expect(browser.selectedTab == index % 5)
            }
            #expect(!app.manager.isRestoring)
            let closed = Set(sessions.enumerated().filter { $0.offset % 2 == 1 }.map(\.element))
            try app.manager.discardSceneSessions(closed)
            #expect(app.manager.openSessions == Set(sessions).subtracting(closed))
            try app.kill()
        }

        let app = try AppProcess(store)
        #expect(app.manager.openSessions.count == 25)
        for index in stride(from: 0, to: 50, by: 2) {
            let browser = BrowserViewController(restorationIdentifier: "Browser")
            try app.manager.restoreState(roots: [browser], scene: sessions[index])
            #expect(browser.tabs == tabs(index))
        }
        let closedBrowser = BrowserViewController(restorationIdentifier: "Browser")
        #expect(try app.manager.restoreState(roots: [closedBrowser], scene: sessions[1]).outcome == .nothingToRestore)
        try app.kill()
    }

    /// Two browser windows saved twice; then two launches in which the healthy window restores and saves
    /// and the crashing window's restoration begins and the process dies before it completes (the
    /// controller extends the restoration, as UIKit code waiting for a web view does); then a third
    /// launch, whose reports and windows are returned.
    private func crashTwiceInOneWindow(compactingBetweenLaunches: Bool) throws -> (
        crashing: BrowserViewController, crashingReport: RestorationReport,
        healthy: BrowserViewController, healthyReport: RestorationReport
    ) {
        let store = TestStore()
        let crashing = session("crashing")
        let healthy = session("healthy")
        do {
            let app = try AppProcess(store)
            let a = BrowserViewController(restorationIdentifier: "Browser")
            let b = BrowserViewController(restorationIdentifier: "Browser")
            for version in 1...2 {
                a.tabs = ["https://a.example/\(version)"]
                b.tabs = ["https://b.example/\(version)"]
                try app.manager.preserveState(roots: [a], scene: crashing)
                try app.manager.preserveState(roots: [b], scene: healthy)
            }
            try app.kill()
        }
        for crash in 1...2 {
            let app = try AppProcess(store)
            let b = BrowserViewController(restorationIdentifier: "Browser")
            let bReport = try app.manager.restoreState(roots: [b], scene: healthy)
            #expect(bReport.reason == .launch, "crash \(crash)")
            #expect(b.tabs == ["https://b.example/2"])
            let a = BrowserViewController(restorationIdentifier: "Browser")
            let manager = app.manager
            a.onDecode = { manager.extendStateRestoration() }  // the process dies before it completes
            let aReport = try app.manager.restoreState(roots: [a], scene: crashing)
            #expect(aReport.reason == .launch, "crash \(crash)")
            #expect(a.tabs == ["https://a.example/2"])
            #expect(app.manager.isRestoring(scene: crashing))
            try app.manager.preserveState(roots: [b], scene: healthy)
            if compactingBetweenLaunches { try app.journal.compact() }
            try app.kill()
        }

        let app = try AppProcess(store)
        let b = BrowserViewController(restorationIdentifier: "Browser")
        let bReport = try app.manager.restoreState(roots: [b], scene: healthy)
        let a = BrowserViewController(restorationIdentifier: "Browser")
        let aReport = try app.manager.restoreState(roots: [a], scene: crashing)
        try app.kill()
        return (a, aReport, b, bReport)
    }

    // UIKit deletes the restoration archive when the app crashes during restoration, so the next launch
    // starts fresh. Here a window whose restoration began and never completed twice restores the state its
    // previous pass saved, while the other window, which saved between the crashes, restores its latest.
    @Test func aWindowThatCrashesTwiceWhileRestoringFallsBackWhileTheOtherWindowRestoresItsLatest() throws {
        let launch = try crashTwiceInOneWindow(compactingBetweenLaunches: false)
        #expect(launch.healthyReport.reason == .launch)
        #expect(launch.healthy.tabs == ["https://b.example/2"])
        #expect(launch.crashingReport.reason != .launch)
        #expect(isCrashLoopFallback(launch.crashingReport.reason))
        #expect(launch.crashing.tabs == ["https://a.example/1"])
        #expect(
            launch.crashingReport.diagnostics.contains {
                if case .unfinishedRestoration(_, attempts: 2) = $0 { true } else { false }
            })
    }

    // The same, with compaction between the crashes: compaction folds the crashing window's markers, and
    // the attempts entry at the window's own path still shows the crash loop. The state the window's
    // previous pass saved was folded away too, so the window starts empty, as UIKit's would, rather than
    // restoring the state it crashed on.
    @Test func aWindowsCrashLoopIsStillSeenAfterCompactionFoldedItsMarkersAndTheWindowStartsEmpty() throws {
        let launch = try crashTwiceInOneWindow(compactingBetweenLaunches: true)
        #expect(launch.healthyReport.reason == .launch)
        #expect(launch.healthy.tabs == ["https://b.example/2"])
        #expect(isCrashLoopFallback(launch.crashingReport.reason))
        #expect(launch.crashing.tabs != ["https://a.example/2"])
        #expect(launch.crashing.tabs.isEmpty)
        #expect(launch.crashingReport.outcome == .nothingToRestore)
    }

    // The documentation says a pass that changed nothing commits nothing, and so it is for a window saved
    // twice in one run, and for the first pass after a restoration: of a window, and of the main window in
    // a store whose last epoch was another window's pass.
    @Test func theFirstSaveAfterRestoringCommitsNothingWhenNothingChanged() throws {
        let store = TestStore()
        let window = session("unchanged")
        do {
            let app = try AppProcess(store)
            let main = BrowserViewController(restorationIdentifier: "Main")
            main.tabs = ["https://main.example/"]
            try app.manager.preserveState(roots: [main])
            let browser = BrowserViewController(restorationIdentifier: "Browser")
            browser.tabs = ["https://window.example/"]
            try app.manager.preserveState(roots: [browser], scene: window)
            #expect(try app.manager.preserveState(roots: [browser], scene: window).outcome == .unchanged)
            try app.kill()
        }
        let app = try AppProcess(store)
        let main = BrowserViewController(restorationIdentifier: "Main")
        try app.manager.restoreState(roots: [main])
        let mainReport = try app.manager.preserveState(roots: [main])
        let browser = BrowserViewController(restorationIdentifier: "Browser")
        try app.manager.restoreState(roots: [browser], scene: window)
        let windowReport = try app.manager.preserveState(roots: [browser], scene: window)
        for report in [mainReport, windowReport] {
            #expect(report.writtenPaths.isEmpty)
            #expect(report.removedPaths.isEmpty)
        }
        #expect(mainReport.outcome == .unchanged)
        #expect(windowReport.outcome == .unchanged)
        #expect(try app.manager.preserveState(roots: [main]).outcome == .unchanged)
        #expect(try app.manager.preserveState(roots: [browser], scene: window).outcome == .unchanged)
        try app.kill()
    }

    // Firefox for iOS saves each window's tabs off the main thread. Passes of two windows submitted to the
    // background committer, then the first window closed before either pass finished: the discard waits
    // for the submitted passes, so the closed window does not come back at the next launch.
    @Test func aWindowClosedWhileItsBackgroundSaveIsStillBeingWrittenDoesNotComeBack() async throws {
        let store = TestStore()
        let closing = session("closing")
        let staying = session("staying")
        do {
            let app = try AppProcess(store)
            let a = BrowserViewController(restorationIdentifier: "Browser")
            a.tabs = ["https://closing.example/"]
            let b = BrowserViewController(restorationIdentifier: "Browser")
            b.tabs = ["https://staying.example/"]
            let pendingA = try app.manager.submitPreservation(roots: [a], scene: closing)
            let pendingB = try app.manager.submitPreservation(roots: [b], scene: staying)
            try app.manager.discardSceneSessions([closing])
            #expect(app.manager.openSessions == [staying])
            _ = try await pendingA.report()
            _ = try await pendingB.report()
            try app.kill()
        }
        let app = try AppProcess(store)
        #expect(app.manager.openSessions == [staying])
        let b = BrowserViewController(restorationIdentifier: "Browser")
        try app.manager.restoreState(roots: [b], scene: staying)
        #expect(b.tabs == ["https://staying.example/"])
        let a = BrowserViewController(restorationIdentifier: "Browser")
        #expect(try app.manager.restoreState(roots: [a], scene: closing).outcome == .nothingToRestore)
        try app.kill()
    }

    // UIKit: after a crash during restoration the window starts fresh. A window with a single saved
    // state has nothing older to fall back to, so it must start empty rather than crash a third time.
    @Test func aWindowWithOneSavedStateThatCrashesTwiceWhileRestoringStartsEmpty() throws {
        let store = TestStore()
        let window = session("only-once")
        do {
            let app = try AppProcess(store)
            let browser = BrowserViewController(restorationIdentifier: "Browser")
            browser.tabs = ["https://crash.example/"]
            try app.manager.preserveState(roots: [browser], scene: window)
            try app.kill()
        }
        for _ in 1...2 {
            let app = try AppProcess(store)
            let browser = BrowserViewController(restorationIdentifier: "Browser")
            let manager = app.manager
            browser.onDecode = { manager.extendStateRestoration() }
            try app.manager.restoreState(roots: [browser], scene: window)
            try app.kill()
        }
        let app = try AppProcess(store)
        let browser = BrowserViewController(restorationIdentifier: "Browser")
        let report = try app.manager.restoreState(roots: [browser], scene: window)
        #expect(browser.tabs.isEmpty)
        #expect(report.outcome != .restored || report.restored.isEmpty)
        #expect(isCrashLoopFallback(report.reason), "reason: \(String(describing: report.reason))")
        try app.kill()
    }

    // A crash-loop fallback restores "the state before": for a window that was closed and reopened under
    // the same identifier, the state before its new tree is the closed window's discard, never the
    // closed window's old tabs (UIKit would have deleted them with the session).
    @Test func aCrashLoopInAReopenedWindowNeverBringsBackTheTabsOfTheWindowThatWasClosed() throws {
        let store = TestStore()
        let window = session("reused")
        do {
            let app = try AppProcess(store)
            let browser = BrowserViewController(restorationIdentifier: "Browser")
            browser.tabs = ["https://private.example/closed-window"]
            try app.manager.preserveState(roots: [browser], scene: window)
            try app.manager.discardSceneSessions([window])
            let reopened = BrowserViewController(restorationIdentifier: "Browser")
            reopened.tabs = ["https://new.example/"]
            try app.manager.preserveState(roots: [reopened], scene: window)
            try app.kill()
        }
        for _ in 1...2 {
            let app = try AppProcess(store)
            let browser = BrowserViewController(restorationIdentifier: "Browser")
            let manager = app.manager
            browser.onDecode = { manager.extendStateRestoration() }
            try app.manager.restoreState(roots: [browser], scene: window)
            #expect(browser.tabs == ["https://new.example/"])
            try app.kill()
        }
        let app = try AppProcess(store)
        let browser = BrowserViewController(restorationIdentifier: "Browser")
        try app.manager.restoreState(roots: [browser], scene: window)
        #expect(!browser.tabs.contains("https://private.example/closed-window"))
        try app.kill()
    }
}

// MARK: - Messages: one controller class, one identifier, several windows

extension PortedApps.PortedAppMultiWindowTests {
    // UIKit: restoration identifier paths are per scene, so two windows may each have a view controller
    // "Conversation" of the same class, with a restoration class that creates one per window.
    @Test func theSameConversationControllerWithTheSameIdentifierInTwoWindowsKeepsTwoStates() throws {
        let store = TestStore()
        let first = SceneSession()
        let second = SceneSession()
        do {
            let app = try AppProcess(store)
            let one = ConversationViewController(restorationIdentifier: "Conversation")
            one.conversationID = "chat-ana"
            one.unsentText = "On my way"
            let two = ConversationViewController(restorationIdentifier: "Conversation")
            two.conversationID = "chat-bo"
            two.unsentText = "Which platform?"
            try app.manager.preserveState(roots: [one], scene: first)
            try app.manager.preserveState(roots: [two], scene: second)
            one.unsentText = "On my way!"
            let report = try app.manager.preserveState(roots: [one], scene: first)
            #expect(report.writtenPaths == [RestorationPath("@scene:\(first)", "Conversation")])
            #expect(report.removedPaths.isEmpty)
            try app.kill()
        }

        let app = try AppProcess(store)
        let two = ConversationViewController(restorationIdentifier: "Conversation")
        try app.manager.restoreState(roots: [two], scene: second)
        let one = ConversationViewController(restorationIdentifier: "Conversation")
        try app.manager.restoreState(roots: [one], scene: first)
        #expect(one.conversationID == "chat-ana")
        #expect(one.unsentText == "On my way!")
        #expect(two.conversationID == "chat-bo")
        #expect(two.unsentText == "Which platform?")
        try app.kill()
    }

    // UIKit: restoring one scene twice cannot happen; restoring a scene again before its restoration
    // completed is refused here, while the other windows restore as usual.
    @Test func restoringAWindowAgainBeforeItCompletedIsRefusedWhileAnotherWindowRestores() throws {
        let store = TestStore()
        let first = SceneSession()
        let second = SceneSession()
        do {
            let app = try AppProcess(store)
            for (scene, id) in [(first, "chat-1"), (second, "chat-2")] {
                let conversation = ConversationViewController(restorationIdentifier: "Conversation")
                conversation.conversationID = id
                try app.manager.preserveState(roots: [conversation], scene: scene)
            }
            try app.kill()
        }
        let app = try AppProcess(store)
        let loading = ConversationViewController(restorationIdentifier: "Conversation")
        let manager = app.manager
        loading.onDecode = { manager.extendStateRestoration() }  // waits for the message history
        try app.manager.restoreState(roots: [loading], scene: first)
        #expect(throws: RestorationError.self) {
            try app.manager.restoreState(
                roots: [ConversationViewController(restorationIdentifier: "Conversation")], scene: first)
        }
        let other = ConversationViewController(restorationIdentifier: "Conversation")
        #expect(try app.manager.restoreState(roots: [other], scene: second).outcome == .restored)
        #expect(other.conversationID == "chat-2")
        try app.manager.completeStateRestoration(scene: first)
        try app.kill()
    }
}

// MARK: - Windows without state

extension PortedApps.PortedAppMultiWindowTests {
    // UIKit: a window whose scene has nothing to restore (no restoration identifiers, or a
    // `stateRestorationActivity` of nil) still has a session, listed in `openSessions` and reconnected
    // at the next launch. Here too: the window's first pass records its session, and nothing else.
    @Test func aWindowSavedWithNoRootsKeepsItsSessionAndLeavesOtherWindowsAlone() throws {
        let store = TestStore()
        let empty = session("empty-window")
        let full = session("full-window")
        do {
            let app = try AppProcess(store)
            let browser = BrowserViewController(restorationIdentifier: "Browser")
            browser.tabs = ["https://kept.example/"]
            try app.manager.preserveState(roots: [browser], scene: full)
            let report = try app.manager.preserveState(roots: [], scene: empty)
            #expect(report.scene == empty)
            #expect(report.writtenPaths.isEmpty)
            #expect(report.removedPaths.isEmpty)
            // The epoch holds the session alone; the window's next pass that saves nothing commits nothing.
            #expect(report.epoch?.entryCount == 1)
            #expect(app.manager.openSessions == [empty, full])
            #expect(try app.manager.preserveState(roots: [], scene: empty).outcome == .unchanged)
            let unidentified = try app.manager.preserveState(
                roots: [BrowserViewController(restorationIdentifier: nil)], scene: empty)
            #expect(unidentified.writtenPaths.isEmpty)
            #expect(unidentified.outcome == .unchanged)
            try app.kill()
        }
        let app = try AppProcess(store)
        #expect(app.manager.openSessions == [empty, full])
        let browser = BrowserViewController(restorationIdentifier: "Browser")
        try app.manager.restoreState(roots: [browser], scene: full)
        #expect(browser.tabs == ["https://kept.example/"])
        // The empty window reconnects with nothing to restore, and closing it discards its session.
        let reconnected = try app.manager.restoreState(
            roots: [BrowserViewController(restorationIdentifier: "Browser")], scene: empty)
        #expect(reconnected.outcome == .nothingToRestore)
        try app.manager.discardSceneSessions([empty])
        #expect(app.manager.openSessions == [full])
        try app.kill()
        #expect(try AppProcess(store).manager.openSessions == [full])
    }

    // UIKit: a window whose root lost its restoration identifier saves nothing, and the window still
    // exists. Here too: the window's pass with no reachable roots removes the window's paths and keeps
    // its session.
    @Test func aWindowWhoseRootsAreGoneAtTheNextPassLosesItsStateButNoOtherWindowDoes() throws {
        let store = TestStore()
        let first = session("first")
        let second = session("second")
        let app = try AppProcess(store)
        let a = BrowserViewController(restorationIdentifier: "Browser")
        a.tabs = ["https://a.example/"]
        let b = BrowserViewController(restorationIdentifier: "Browser")
        b.tabs = ["https://b.example/"]
        try app.manager.preserveState(roots: [a], scene: first)
        try app.manager.preserveState(roots: [b], scene: second)
        let report = try app.manager.preserveState(roots: [], scene: first)
        #expect(report.removedPaths == [RestorationPath("@scene:first", "Browser")])
        #expect(try app.journal.state()[RestorationPath("@scene:second", "Browser")] != nil)
        #expect(app.manager.openSessions == [first, second])
        try app.kill()
        #expect(try AppProcess(store).manager.openSessions == [first, second])
    }

    // UIKit: connecting a scene that has no saved state gives it nothing to restore. Here the
    // restoration reports nothing to restore, writes no marker that would list the window in
    // `openSessions`, and leaves the window free to save.
    @Test func restoringAWindowThatWasNeverSavedRestoresNothingAndOpensNoSession() throws {
        let store = TestStore()
        let saved = session("saved")
        let never = session("never-saved")
        do {
            let app = try AppProcess(store)
            let browser = BrowserViewController(restorationIdentifier: "Browser")
            browser.tabs = ["https://saved.example/"]
            try app.manager.preserveState(roots: [browser], scene: saved)
            try app.kill()
        }
        do {
            let app = try AppProcess(store)
            let browser = BrowserViewController(restorationIdentifier: "Browser")
            let historyBefore = try app.journal.history().count
            let report = try app.manager.restoreState(roots: [browser], scene: never)
            #expect(report.outcome == .nothingToRestore)
            #expect(report.scene == never)
            #expect(browser.tabs.isEmpty)
            #expect(!app.manager.isRestoring)
            #expect(app.manager.openSessions == [saved])
            #expect(try app.journal.history().count == historyBefore)
            #expect(try app.manager.restoreState(roots: [browser], scene: never).outcome == .nothingToRestore)
            try app.kill()
        }
        let app = try AppProcess(store)
        #expect(app.manager.openSessions == [saved])
        try app.kill()
    }
}
