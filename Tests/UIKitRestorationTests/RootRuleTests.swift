import StateJournal
import Testing
import UIKitRestoration

/// A root controller whose restoration class makes a new one, as WeatherFrog's did.
final class ForecastController: UIViewController, UIViewControllerRestoration {
    var city = ""
    var storyboardName: String?

    nonisolated(unsafe) static var made: [ForecastController] = []
    nonisolated(unsafe) static var storyboardsSeen: [String?] = []

    init() {
        super.init(nibName: nil, bundle: nil)
        restorationIdentifier = "Forecast"
        restorationClass = ForecastController.self
    }

    required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    static func viewController(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIViewController?
    {
        storyboardsSeen.append(
            coder.decodeObject(forKey: UIApplication.stateRestorationViewControllerStoryboardKey) as? String)
        let controller = ForecastController()
        made.append(controller)
        return controller
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(city, forKey: "city")
        if let storyboardName {
            coder.encode(storyboardName, forKey: UIApplication.stateRestorationViewControllerStoryboardKey)
        }
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        city = coder.decodeObject(forKey: "city") as? String ?? ""
    }
}

@MainActor @Suite(.serialized) struct RootRuleTests {
    private func saveAndRestore(storyboard: String?) throws -> (existing: ForecastController, report: RestorationReport)
    {
        ForecastController.made = []
        ForecastController.storyboardsSeen = []
        let store = TestStore()
        let delegate = AlwaysRestore()
        do {
            let journal = try store.open()
            let manager = RestorationManager(
                journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop")
            )
            manager.delegate = delegate
            let root = ForecastController()
            root.city = "Brno"
            root.storyboardName = storyboard
            try manager.preserveState(roots: [root])
            try journal.close()
        }
        let journal = try store.open()
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop"))
        manager.delegate = delegate
        manager.register(restorationClass: ForecastController.self)
        let existing = ForecastController()
        let report = try manager.restoreState(roots: [existing])
        try journal.close()
        return (existing, report)
    }

    @Test func aNewRootFromARestorationClassGivesWayToTheAppsRootWhenTheStateHadNoStoryboard() throws {
        let (existing, report) = try saveAndRestore(storyboard: nil)
        #expect(ForecastController.made.count == 1)
        #expect(ForecastController.storyboardsSeen == [nil])
        #expect(existing.city == "Brno")
        #expect(ForecastController.made.first?.city == "")
        #expect(report.restored.map(\.source) == [.existing])
        #expect(report.diagnostics.isEmpty)
    }

    @Test func aNewRootFromARestorationClassReplacesTheAppsRootWhenTheStateCameFromAStoryboard() throws {
        let (existing, report) = try saveAndRestore(storyboard: "Main")
        #expect(ForecastController.storyboardsSeen == ["Main"])
        #expect(existing.city == "")
        #expect(ForecastController.made.first?.city == "Brno")
        #expect(report.restored.map(\.source) == [.restorationClass])
    }
}
