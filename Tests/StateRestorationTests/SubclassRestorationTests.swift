import Foundation
import StateJournal
import StateRestoration
import Testing

/// A base class that adopts the protocol the supported way: it declares its identifier and both
/// coding methods, so that subclasses override them.
class BasePane: RestorableController {
    var restorationIdentifier: String? { nil }
    @Preserved("title") var title = ""

    func encodeRestorableState(with coder: RestorationCoder) throws {
        try encodePreservedProperties(with: coder)
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        try decodePreservedProperties(with: coder)
    }
}

/// A subclass that overrides the identifier and the coding methods, calling `super`.
final class EditorPane: BasePane {
    override var restorationIdentifier: String? { "Editor" }
    var cursor = 0

    override func encodeRestorableState(with coder: RestorationCoder) throws {
        try super.encodeRestorableState(with: coder)
        coder.encode(cursor, forKey: "cursor")
    }

    override func decodeRestorableState(with coder: RestorationCoder) throws {
        try super.decodeRestorableState(with: coder)
        cursor = try coder.decode(forKey: "cursor", default: 0)
    }
}

/// A base class that leaves its coding methods to the defaults, and a subclass that adds state
/// only through `@Preserved`: the defaults see the subclass's properties.
class PlainPane: RestorableController {
    var restorationIdentifier: String? { "Plain" }
    @Preserved("zoom") var zoom = 1.0
}

final class FindPane: PlainPane {
    override var restorationIdentifier: String? { "Find" }
    @Preserved("query") var query = ""
}

/// The unsupported pattern the documentation warns about: the adopting class leaves the coding
/// methods to the defaults, and a subclass declares its own, which cannot override anything.
class SilentBase: RestorableController {
    var restorationIdentifier: String? { "Silent" }
}

final class SilentSub: SilentBase {
    var encodeCalls = 0

    func encodeRestorableState(with coder: RestorationCoder) throws {
        encodeCalls += 1
        coder.encode(1, forKey: "never")
    }
}

/// Restorable class hierarchies: what a subclass declares is what the passes see.
@Suite struct SubclassRestorationTests {
    /// Saves `roots` in a fresh store, then restores into `restored` from a reopened one.
    private func saveAndRestore(_ roots: [any RestorableController], into restored: [any RestorableController]) throws
        -> (PreservationReport, RestorationReport, [RestorationPath: RestorableEntry])
    {
        let store = TestStore()
        let preservation: PreservationReport
        let entries: [RestorationPath: RestorableEntry]
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            preservation = try store.manager(journal, delegate: delegate).preserveState(roots: roots)
            entries = try decodedEntries(journal)
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let restoration = try store.manager(journal, delegate: delegate).restoreState(roots: restored)
        return (preservation, restoration, entries)
    }

    @Test func aSubclassOverridingTheIdentifierAndEncodeOfItsBaseIsPreservedAndRestored() throws {
        let pane = EditorPane()
        pane.title = "notes.txt"
        pane.cursor = 42
        let restored = EditorPane()
        let (preservation, restoration, entries) = try saveAndRestore([pane], into: [restored])

        #expect(preservation.writtenPaths.contains(RestorationPath("Editor")))
        #expect(entries[RestorationPath("Editor")]?.values == ["title": .string("notes.txt"), "cursor": .int(42)])
        #expect(entries[RestorationPath("Editor")]?.typeName == "StateRestorationTests.EditorPane")
        #expect(restoration.restored.map(\.path) == [RestorationPath("Editor")])
        #expect(restored.title == "notes.txt")
        #expect(restored.cursor == 42)
    }

    @Test func theBaseClassWithoutAnIdentifierOfItsOwnIsNotPreserved() throws {
        let (preservation, _, entries) = try saveAndRestore([BasePane()], into: [])
        #expect(preservation.writtenPaths == [RestorationManager.applicationPath])
        #expect(entries.keys.sorted() == [RestorationManager.applicationPath])
    }

    @Test func aSubclassMethodThatOverridesNoDeclarationOfTheAdoptingClassIsNeverCalledAsDocumented() throws {
        let sub = SilentSub()
        let (_, _, entries) = try saveAndRestore([sub], into: [])
        #expect(sub.encodeCalls == 0)
        #expect(entries[RestorationPath("Silent")]?.values == [:])
    }

    @Test func theDefaultCodingMethodsOfABaseClassEncodeTheSubclassesPreservedProperties() throws {
        let pane = FindPane()
        pane.zoom = 2
        pane.query = "swift"
        let restored = FindPane()
        let (_, restoration, entries) = try saveAndRestore([pane], into: [restored])

        #expect(entries[RestorationPath("Find")]?.values == ["zoom": .double(2), "query": .string("swift")])
        #expect(restoration.restored.map(\.path) == [RestorationPath("Find")])
        #expect(restored.zoom == 2)
        #expect(restored.query == "swift")
    }
}
