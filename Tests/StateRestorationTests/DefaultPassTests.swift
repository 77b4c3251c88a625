import Foundation
import StateJournal
import StateRestoration
import Testing

/// The pass an app gets by default keeps every change of every reachable object, as UIKit's walk
/// does, whether or not anything was invalidated.
@Suite struct DefaultPassTests {
    /// A controller written as on iOS: it never invalidates anything.
    final class Editor: RestorableController {
        var draft = ""
        var cursor = 0
        var restorationIdentifier: String? { "Editor" }

        func encodeRestorableState(with coder: RestorationCoder) throws {
            coder.encode(draft, forKey: "draft")
            coder.encode(cursor, forKey: "cursor")
        }

        func decodeRestorableState(with coder: RestorationCoder) throws {
            draft = coder.decodeObject(forKey: "draft") as? String ?? ""
            cursor = coder.decodeInteger(forKey: "cursor")
        }
    }

    @Test func anAppThatNeverInvalidatesKeepsAChangeMadeAfterTheFirstSaveThroughAKill() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let editor = Editor()
            editor.draft = "Dear"
            try manager.preserveState(roots: [editor])
            editor.draft = "Dear Ada,"
            editor.cursor = 9
            let second = try manager.preserveState(roots: [editor])
            #expect(second.writtenPaths == [RestorationPath("Editor")])
            withExtendedLifetime(delegate) {}
            // No close: the process is killed, and only what the journal made durable counts.
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let editor = Editor()
        let report = try manager.restoreState(roots: [editor])
        #expect(report.restored.map(\.path) == [RestorationPath("Editor")])
        #expect(editor.draft == "Dear Ada,")
        #expect(editor.cursor == 9)
    }

    @Test func theDefaultPassWritesOnlyTheEntriesWhoseBytesChanged() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let roots = [Node("Main", children: [Node("A", value: 1), Node("B", value: 2)])]
        try manager.preserveState(roots: roots)
        roots[0].children[1].value = 3
        let report = try manager.preserveState(roots: roots)
        #expect(report.mode == .full)
        #expect(report.encodedObjects == 3)
        #expect(report.writtenPaths == [RestorationPath(["Main", "B"])])
        let unchanged = try manager.preserveState(roots: roots)
        #expect(unchanged.outcome == .unchanged)
    }

    @Test func anIncrementalPassMissesAChangeNobodyInvalidatedWhichTheDefaultPassSaves() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let node = Node("Main", value: 1)
        try manager.preserveState(roots: [node])
        node.value = 2
        try manager.preserveState(roots: [node], mode: .incremental)
        #expect(try decodedEntries(journal)[RestorationPath("Main")]?.values["value"] == .int(1))
        try manager.preserveState(roots: [node])
        #expect(try decodedEntries(journal)[RestorationPath("Main")]?.values["value"] == .int(2))
    }
}
