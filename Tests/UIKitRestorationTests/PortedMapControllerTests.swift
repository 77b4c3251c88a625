// Ported code: restoration written as Apple's UIKit documentation and its state restoration sample
// code write it (a controller that is its own UIViewControllerRestoration class, a geometry value
// through UIKit's NSCoder additions, a model object registered with
// UIApplication.registerObject(forStateRestoration:restorationIdentifier:) under its controller,
// a bundle-version check in the application delegate), with only `import UIKitRestoration`.
//
// Everything from `MapViewController` to `RecentSearchesRestoration` is written as for UIKit; the
// delegate uses the package's method names (UIApplicationDelegate's are not provided).
import StateJournal
import Testing
import UIKitRestoration

final class MapViewController: UIViewController, UIViewControllerRestoration {
    var center = CGPoint.zero
    var visibleSize = CGSize.zero
    var region = CGRect.zero
    var searches: RecentSearches?

    init() {
        super.init(nibName: nil, bundle: nil)
        self.restorationIdentifier = "MapViewController"
        self.restorationClass = MapViewController.self
    }

    required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    static func viewController(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIViewController?
    {
        let controller = MapViewController()
        return controller
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(center, forKey: "center")
        coder.encode(visibleSize, forKey: "visibleSize")
        coder.encode(region, forKey: "region")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        center = coder.decodeCGPoint(forKey: "center")
        visibleSize = coder.decodeCGSize(forKey: "visibleSize")
        region = coder.decodeCGRect(forKey: "region")
    }
}

final class RecentSearches: NSObject, UIStateRestoring {
    weak var controller: MapViewController?
    var queries: [String] = []

    var restorationParent: UIStateRestoring? { controller }
    var objectRestorationClass: UIObjectRestoration.Type? { RecentSearchesRestoration.self }

    func encodeRestorableState(with coder: NSCoder) {
        coder.encode(queries, forKey: "queries")
    }

    func decodeRestorableState(with coder: NSCoder) {
        queries = coder.decodeObject(forKey: "queries") as? [String] ?? []
    }
}

final class RecentSearchesRestoration: UIObjectRestoration {
    nonisolated(unsafe) static var created: [RecentSearches] = []

    static func object(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIStateRestoring?
    {
        let searches = RecentSearches()
        created.append(searches)
        return searches
    }
}

final class MapAppDelegate: ApplicationRestorationDelegate {
    var savedVersion: String?

    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }

    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool {
        savedVersion = coder.decodeObject(forKey: UIApplication.stateRestorationBundleVersionKey) as? String
        let idiom = coder.decodeObject(forKey: UIApplicationStateRestorationUserInterfaceIdiomKey) as? NSNumber
        return savedVersion == "2.1" && idiom?.intValue == 0
    }
}

@MainActor @Suite struct PortedMapControllerTests {
    private func launch(_ store: TestStore) throws -> (Journal, RestorationManager, MapAppDelegate) {
        let journal = try store.open()
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "2.1", interfaceIdiom: "phone"))
        let delegate = MapAppDelegate()
        manager.delegate = delegate
        manager.register(restorationClass: MapViewController.self)
        manager.register(objectRestorationClass: RecentSearchesRestoration.self)
        return (journal, manager, delegate)
    }

    @Test func theMapsGeometryAndItsRecentSearchesComeBackInANewProcess() throws {
        let store = TestStore()
        do {
            let (journal, manager, delegate) = try launch(store)
            let map = MapViewController()
            map.center = CGPoint(x: 48.85, y: 2.35)
            map.visibleSize = CGSize(width: 0.5, height: 0.25)
            map.region = CGRect(x: 1, y: 2, width: 3, height: 4)
            let searches = RecentSearches()
            searches.controller = map
            searches.queries = ["Louvre", "Orsay"]
            map.searches = searches
            UIApplication.restorationManager = manager
            UIApplication.registerObject(forStateRestoration: searches, restorationIdentifier: "RecentSearches")
            let report = try manager.preserveState(roots: [map])
            #expect(report.problems.isEmpty)
            let entry = try RestorableEntry(
                decoding: try journal.state().entries[RestorationPath(["MapViewController", "RecentSearches"])]!)
            #expect(entry.values["queries"] != nil)
            UIApplication.restorationManager = nil
            withExtendedLifetime(delegate) {}
            try journal.close()
        }

        RecentSearchesRestoration.created = []
        let (journal, manager, delegate) = try launch(store)
        // The window's root, created at launch as UIKit creates it: the restoration class is asked,
        // and its new controller gives way to this one, which UIKit keeps.
        let map = MapViewController()
        let report = try manager.restoreState(roots: [map])
        #expect(delegate.savedVersion == "2.1")
        #expect(report.diagnostics.isEmpty)
        #expect(report.restored.first { $0.path == RestorationPath("MapViewController") }?.source == .existing)
        #expect(map.center == CGPoint(x: 48.85, y: 2.35))
        #expect(map.visibleSize == CGSize(width: 0.5, height: 0.25))
        #expect(map.region == CGRect(x: 1, y: 2, width: 3, height: 4))
        #expect(RecentSearchesRestoration.created.map(\.queries) == [["Louvre", "Orsay"]])
        try journal.close()
    }
}
