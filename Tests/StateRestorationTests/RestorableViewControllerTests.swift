import Foundation
import StateJournal
import StateRestoration
import Testing

/// UIKit's shape for controllers: an open base class whose `NSCoder` methods subclasses override
/// and call `super` on, as a UIKit controller's methods are written.
@Suite struct RestorableViewControllerTests {
    class ListController: RestorableViewController {
        var scrollOffset = 0.0

        override func encodeRestorableState(with coder: NSCoder) {
            super.encodeRestorableState(with: coder)
            coder.encode(scrollOffset, forKey: "scrollOffset")
        }

        override func decodeRestorableState(with coder: NSCoder) {
            super.decodeRestorableState(with: coder)
            scrollOffset = coder.decodeDouble(forKey: "scrollOffset")
        }
    }

    final class InboxController: ListController {
        var selectedMessage: String?
        var finished = false

        override func encodeRestorableState(with coder: NSCoder) {
            super.encodeRestorableState(with: coder)
            coder.encode(selectedMessage, forKey: "selectedMessage")
        }

        override func decodeRestorableState(with coder: NSCoder) {
            super.decodeRestorableState(with: coder)
            selectedMessage = coder.decodeObject(forKey: "selectedMessage") as? String
        }

        override func applicationFinishedRestoringState() { finished = true }
    }

    @Test func aSubclassAndItsBaseClassBothRestoreThroughSuperCalls() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let root = RestorableViewController(restorationIdentifier: "Root")
            let inbox = InboxController(restorationIdentifier: "Inbox")
            inbox.scrollOffset = 240
            inbox.selectedMessage = "Message-42"
            root.children = [inbox]
            try manager.preserveState(roots: [root])
            withExtendedLifetime(delegate) {}
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let root = RestorableViewController(restorationIdentifier: "Root")
        let inbox = InboxController(restorationIdentifier: "Inbox")
        root.children = [inbox]
        let report = try manager.restoreState(roots: [root])
        #expect(report.restored.map(\.path) == [RestorationPath("Root"), RestorationPath(["Root", "Inbox"])])
        #expect(inbox.scrollOffset == 240)
        #expect(inbox.selectedMessage == "Message-42")
        #expect(inbox.finished)
    }

    @Test func aControllerWithoutAnIdentifierIsNotSavedNorAreItsChildren() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let anonymous = RestorableViewController()
        anonymous.children = [InboxController(restorationIdentifier: "Inbox")]
        let report = try manager.preserveState(roots: [
            RestorableViewController(restorationIdentifier: "Root"), anonymous,
        ])
        #expect(report.writtenPaths.contains(RestorationPath("Root")))
        #expect(!report.writtenPaths.contains(RestorationPath("Inbox")))
    }

    final class MailController: RestorableViewController {
        override func encodeRestorableState(with coder: NSCoder) {
            super.encodeRestorableState(with: coder)
            coder.encode(presentedViewController, forKey: "presented")
        }

        override func decodeRestorableState(with coder: NSCoder) {
            super.decodeRestorableState(with: coder)
            presentedViewController = coder.decodeObject(forKey: "presented") as? RestorableViewController
        }
    }

    @Test func aControllerWithoutARestorationClassIsCreatedByTheFactoryRegisteredForItsIdentifier() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let mail = MailController(restorationIdentifier: "Mail")
            let compose = ListController(restorationIdentifier: "Compose")
            compose.scrollOffset = 12
            mail.presentedViewController = compose
            try manager.preserveState(roots: [mail])
            withExtendedLifetime(delegate) {}
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        manager.registerController(forRestorationIdentifier: "Compose") {
            ListController(restorationIdentifier: "Compose")
        }
        let mail = MailController(restorationIdentifier: "Mail")
        let report = try manager.restoreState(roots: [mail])
        let compose = mail.presentedViewController as? ListController
        #expect(compose?.scrollOffset == 12)
        #expect(report.restored.last?.source == .registeredFactory)
        #expect(report.diagnostics.isEmpty)
    }
}
