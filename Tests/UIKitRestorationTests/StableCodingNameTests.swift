import StateJournal
import Testing
import UIKitRestoration

// Declared `private`: their runtime names hold "(unknown context at $…)", which changes between
// builds and processes. UIKit code gives such classes @objc(Name); here they get a coding name.
private final class PinnedPlace: NSObject, UIStateRestoring {
    var title = ""
    var objectRestorationClass: UIObjectRestoration.Type? { PinnedPlaceRestoration.self }

    func encodeRestorableState(with coder: NSCoder) {
        coder.encode(title, forKey: "title")
    }

    func decodeRestorableState(with coder: NSCoder) {
        title = coder.decodeObject(forKey: "title") as? String ?? ""
    }
}

private enum PinnedPlaceRestoration: UIObjectRestoration {
    nonisolated(unsafe) static var made: [PinnedPlace] = []

    static func object(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIStateRestoring?
    {
        let place = PinnedPlace()
        made.append(place)
        return place
    }
}

@MainActor @Suite struct StableCodingNameTests {
    @Test func aPrivateClassWithACodingNameIsRecordedAndRestoredUnderThatName() throws {
        #expect(String(reflecting: PinnedPlace.self).contains("(unknown context"))
        RestorationManager.register(codingName: "Maps.PinnedPlace", for: PinnedPlace.self)
        RestorationManager.register(codingName: "Maps.PinnedPlaceRestoration", for: PinnedPlaceRestoration.self)
        #expect(RestorationManager.codingName(for: PinnedPlace.self) == "Maps.PinnedPlace")

        let store = TestStore()
        let delegate = AlwaysRestore()
        do {
            let journal = try store.open()
            let manager = RestorationManager(
                journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop")
            )
            manager.delegate = delegate
            let place = PinnedPlace()
            place.title = "Špilberk"
            manager.registerObject(forStateRestoration: place, restorationIdentifier: "Pinned")
            try manager.preserveState(roots: [])
            let entry = try RestorableEntry(decoding: try journal.state().entries[RestorationPath("Pinned")]!)
            #expect(entry.typeName == "Maps.PinnedPlace")
            #expect(entry.restorationClassName == "Maps.PinnedPlaceRestoration")
            #expect(!entry.jsonText().contains("unknown context"))
            try journal.close()
        }

        PinnedPlaceRestoration.made = []
        let journal = try store.open()
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop"))
        manager.delegate = delegate
        manager.register(objectRestorationClass: PinnedPlaceRestoration.self)
        let report = try manager.restoreState(roots: [])
        #expect(report.skipped.isEmpty)
        #expect(report.restored.map(\.decoded) == [true])
        #expect(PinnedPlaceRestoration.made.map(\.title) == ["Špilberk"])
        try journal.close()
    }
}
