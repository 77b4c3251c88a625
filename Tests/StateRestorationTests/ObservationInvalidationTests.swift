import Foundation
import Observation
import StateJournal
import StateRestoration
import Testing

/// An `@Observable` controller whose state is read in its encode: changing it needs no call to
/// invalidate it.
@Observable
final class ObservedNotes: RestorableController {
    @ObservationIgnored let identifier: String
    var text = ""
    var cursor = 0
    /// Not read by the encode: changing it must not invalidate the controller.
    var hover = false
    @ObservationIgnored var children: [any RestorableController] = []

    init(_ identifier: String) { self.identifier = identifier }

    var restorationIdentifier: String? { identifier }
    var embeddedRestorationChildren: [any RestorableController] { children }

    func encodeRestorableState(with coder: RestorationCoder) throws {
        coder.encode(text, forKey: "text")
        coder.encode(cursor, forKey: "cursor")
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        text = try coder.decodeString(forKey: "text")
        cursor = try coder.decodeInt(forKey: "cursor")
    }
}

@Suite struct ObservationInvalidationTests {
    @Test func changingAnObservedPropertyThatTheEncodeReadsMarksTheObjectChanged() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let root = ObservedNotes("Main")
        let editor = ObservedNotes("Editor")
        root.children = [editor]
        try manager.preserveState(roots: [root], mode: .full)

        editor.text = "Hello"  // no invalidateRestorableState call
        let first = try manager.preserveState(roots: [root], mode: .incremental)
        #expect(first.mode == .incremental)
        #expect(first.writtenPaths == [RestorationPath("Main", "Editor")])

        // Each encode watches again: a second change is seen too.
        editor.cursor = 5
        editor.text = "Hello, world"
        let second = try manager.preserveState(roots: [root], mode: .incremental)
        #expect(second.writtenPaths == [RestorationPath("Main", "Editor")])
        let entry = try decodedEntries(journal)[RestorationPath("Main", "Editor")]
        #expect(entry?.values["text"] == .string("Hello, world"))
        #expect(entry?.values["cursor"] == .int(5))
    }

    @Test func changingAPropertyTheEncodeDoesNotReadEncodesNothing() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let root = ObservedNotes("Main")
        try manager.preserveState(roots: [root], mode: .full)

        root.hover = true
        let report = try manager.preserveState(roots: [root], mode: .incremental)
        #expect(report.encodedObjects == 0)
        #expect(report.outcome == .unchanged)
    }

    @Test func anObservedObjectRestoredAtLaunchIsWatchedAfterTheNextPass() throws {
        let store = TestStore()
        let delegate = TestDelegate()
        do {
            let journal = try store.open()
            let manager = store.manager(journal, delegate: delegate)
            let root = ObservedNotes("Main")
            root.text = "draft"
            try manager.preserveState(roots: [root], mode: .full)
            try journal.close()
        }
        let journal = try store.open()
        let manager = store.manager(journal, delegate: delegate)
        let root = ObservedNotes("Main")
        try manager.restoreState(roots: [root])
        #expect(root.text == "draft")
        try manager.preserveState(roots: [root], mode: .incremental)
        root.text = "draft, edited"
        let report = try manager.preserveState(roots: [root], mode: .incremental)
        #expect(report.writtenPaths == [RestorationPath("Main")])
        #expect(try decodedEntries(journal)[RestorationPath("Main")]?.values["text"] == .string("draft, edited"))
    }
}
