// Port of the state restoration code of Kraftstoff, a fuel-consumption log for iOS.
// Source: https://github.com/IngmarStein/Kraftstoff @ 2ffe89418e9d62a9dd5f4cef534f9102d19177c9
//   Classes/CarViewController.swift (encode/decodeRestorableState, the presented configurator)
//   Classes/CarConfigurationController.swift (UIViewControllerRestoration, delegate reference)
//   Classes/FuelEventController.swift (UIViewControllerRestoration, flags)
//   Classes/FuelEventEditorController.swift (UIViewControllerRestoration, Date, Decimal, IndexPath)
// The restoration members are re-created line by line; Core Data, storyboards and formatters are
// replaced by the small stand-ins at the bottom of the file.
import Foundation
import StateJournal
import Testing
import UIKitRestoration

private let maxEditHelpCounter = 1
private let carViewEditedObject = "CarViewEditedObject"

// MARK: - Classes/CarViewController.swift

final class CarViewController: UITableViewController, CarConfigurationControllerDelegate {
    var editedObject: Car?
    var configurationResults: [CarConfigurationResult] = []

    // MARK: - State Restoration

    override func encodeRestorableState(with coder: NSCoder) {
        if let editedObject = editedObject {
            coder.encode(
                DataManager.modelIdentifierForManagedObject(editedObject) as NSString?, forKey: carViewEditedObject)
        }
        super.encodeRestorableState(with: coder)
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)

        if let modelIdentifier = coder.decodeObject(of: NSString.self, forKey: carViewEditedObject) as String? {
            editedObject = DataManager.managedObjectForModelIdentifier(modelIdentifier)
        }

        // -> openradar #13438788
        tableView.reloadData()
    }

    func carConfigurationController(
        _ controller: CarConfigurationController, didFinishWithResult result: CarConfigurationResult
    ) {
        configurationResults.append(result)
    }

    // From insertNewObject(_:): how the configurator is presented.
    func presentNewCarConfigurator() -> CarConfigurationController? {
        if let configurator = self.storyboard!.instantiateViewController(withIdentifier: "CarConfigurationController")
            as? CarConfigurationController
        {
            configurator.delegate = self
            configurator.editingExistingObject = false

            let navController = UINavigationController(rootViewController: configurator)
            navController.restorationIdentifier = "CarConfigurationNavigationController"
            // PORT EDIT: the package has no navigation bar; the app's line was:
            //     navController.navigationBar.tintColor = self.navigationController!.navigationBar.tintColor

            self.present(navController, animated: true, completion: nil)
            return configurator
        }
        return nil
    }
}

// MARK: - Classes/CarConfigurationController.swift

enum CarConfigurationResult: Int {
    case canceled
    case createSucceeded
    case editSucceeded
    case aborted
}

// PORT EDIT: @MainActor added: a main-actor controller conforms to it, which Swift 6 language mode (the
// app builds in Swift 5 mode) refuses for a nonisolated protocol.
@MainActor
protocol CarConfigurationControllerDelegate: AnyObject {
    func carConfigurationController(
        _ controller: CarConfigurationController, didFinishWithResult: CarConfigurationResult)
}

private let SRConfiguratorDelegate = "FuelConfiguratorDelegate"
private let SRConfiguratorEditMode = "FuelConfiguratorEditMode"
private let SRConfiguratorCancelSheet = "FuelConfiguratorCancelSheet"
private let SRConfiguratorDataChanged = "FuelConfiguratorDataChanged"
private let SRConfiguratorPreviousSelectionIndex = "FuelConfiguratorPreviousSelectionIndex"
private let SRConfiguratorName = "FuelConfiguratorName"
private let SRConfiguratorPlate = "FuelConfiguratorPlate"
private let SRConfiguratorOdometerUnit = "FuelConfiguratorOdometerUnit"
private let SRConfiguratorFuelUnit = "FuelConfiguratorFuelUnit"
private let SRConfiguratorFuelConsumptionUnit = "FuelConfiguratorFuelConsumptionUnit"

final class CarConfigurationController: PageViewController, UIViewControllerRestoration {
    var isShowingCancelSheet = false
    var dataChanged = false
    var previousSelectionIndex: IndexPath?

    var name: String?
    var plate: String?
    var odometerUnit: NSNumber?
    var odometer: Decimal?
    var fuelUnit: NSNumber?
    var fuelConsumptionUnit: NSNumber?

    var editingExistingObject = false

    weak var delegate: CarConfigurationControllerDelegate?

    var cancelSheetShown = false

    // MARK: - View Lifecycle

    required init?(coder aDecoder: NSCoder) {
        super.init(coder: aDecoder)

        restorationClass = type(of: self)
    }

    // MARK: - State Restoration

    static func viewController(withRestorationIdentifierPath _: [String], coder: NSCoder) -> UIViewController? {
        // PORT EDIT: no UIStoryboard; the storyboard key holds the storyboard's name, made into a stand-in.
        if let storyboard =
            (coder.decodeObject(forKey: UIApplication.stateRestorationViewControllerStoryboardKey)
            as? String).map(KraftstoffStoryboard.init(name:))
        {
            if let controller = storyboard.instantiateViewController(withIdentifier: "CarConfigurationController")
                as? CarConfigurationController
            {
                controller.editingExistingObject = coder.decodeBool(forKey: SRConfiguratorEditMode)

                return controller
            }
        }

        return nil
    }

    override func encodeRestorableState(with coder: NSCoder) {
        let indexPath = isShowingCancelSheet ? previousSelectionIndex : tableView.indexPathForSelectedRow

        coder.encode(delegate, forKey: SRConfiguratorDelegate)
        coder.encode(editingExistingObject, forKey: SRConfiguratorEditMode)
        coder.encode(isShowingCancelSheet, forKey: SRConfiguratorCancelSheet)
        coder.encode(dataChanged, forKey: SRConfiguratorDataChanged)
        coder.encode(indexPath, forKey: SRConfiguratorPreviousSelectionIndex)
        coder.encode(name as NSString?, forKey: SRConfiguratorName)
        coder.encode(plate as NSString?, forKey: SRConfiguratorPlate)
        coder.encode(fuelUnit, forKey: SRConfiguratorFuelUnit)
        coder.encode(fuelConsumptionUnit, forKey: SRConfiguratorFuelConsumptionUnit)

        super.encodeRestorableState(with: coder)
    }

    override func decodeRestorableState(with coder: NSCoder) {
        delegate = coder.decodeObject(forKey: SRConfiguratorDelegate) as? CarConfigurationControllerDelegate
        isShowingCancelSheet = coder.decodeBool(forKey: SRConfiguratorCancelSheet)
        dataChanged = coder.decodeBool(forKey: SRConfiguratorDataChanged)
        previousSelectionIndex =
            coder.decodeObject(of: NSIndexPath.self, forKey: SRConfiguratorPreviousSelectionIndex) as IndexPath?
        name = coder.decodeObject(of: NSString.self, forKey: SRConfiguratorName) as String?
        plate = coder.decodeObject(of: NSString.self, forKey: SRConfiguratorPlate) as String?
        fuelUnit = coder.decodeObject(of: NSNumber.self, forKey: SRConfiguratorFuelUnit)
        fuelConsumptionUnit = coder.decodeObject(of: NSNumber.self, forKey: SRConfiguratorFuelConsumptionUnit)

        tableView.reloadData()

        if isShowingCancelSheet {
            showCancelSheet()
        } else {
            selectRowAtIndexPath(previousSelectionIndex)
        }

        super.decodeRestorableState(with: coder)
    }

    func showCancelSheet() {
        cancelSheetShown = true
    }
}

// MARK: - Classes/FuelEventController.swift

private let fuelEventSelectedCarID = "FuelEventSelectedCarID"
private let fuelEventExportSheet = "FuelEventExportSheet"
private let fuelEventShowOpenIn = "FuelEventShowOpenIn"
private let fuelEventShowComposer = "FuelEventShowMailComposer"

final class FuelEventController: UITableViewController, UIViewControllerRestoration {
    var selectedCar: Car!

    private var isShowingExportSheet = false
    private var restoreExportSheet = false
    private var restoreOpenIn = false
    private var restoreMailComposer = false

    var openInController: AnyObject?
    var mailComposeController: AnyObject?

    // MARK: - View Lifecycle

    required init?(coder aDecoder: NSCoder) {
        super.init(coder: aDecoder)

        restorationClass = type(of: self)
    }

    var wantsMailComposer: Bool { restoreMailComposer }

    // MARK: - State Restoration

    static func viewController(withRestorationIdentifierPath _: [String], coder: NSCoder) -> UIViewController? {
        // PORT EDIT: no UIStoryboard; the storyboard key holds the storyboard's name, made into a stand-in.
        if let storyboard =
            (coder.decodeObject(forKey: UIApplication.stateRestorationViewControllerStoryboardKey)
            as? String).map(KraftstoffStoryboard.init(name:)),
            let controller = storyboard.instantiateViewController(withIdentifier: "FuelEventController")
                as? FuelEventController,
            let modelIdentifier = coder.decodeObject(of: NSString.self, forKey: fuelEventSelectedCarID) as String?
        {
            controller.selectedCar = DataManager.managedObjectForModelIdentifier(modelIdentifier)

            if controller.selectedCar == nil {
                return nil
            }

            return controller
        }
        return nil
    }

    override func encodeRestorableState(with coder: NSCoder) {
        coder.encode(
            DataManager.modelIdentifierForManagedObject(selectedCar) as NSString?, forKey: fuelEventSelectedCarID)
        coder.encode(restoreExportSheet || isShowingExportSheet, forKey: fuelEventExportSheet)
        coder.encode(restoreOpenIn || (openInController != nil), forKey: fuelEventShowOpenIn)
        coder.encode(restoreMailComposer || (mailComposeController != nil), forKey: fuelEventShowComposer)

        // don't use a snapshot image for next launch when graph is currently visible
        if presentedViewController != nil {
            UIApplication.shared.ignoreSnapshotOnNextApplicationLaunch()
        }
        // PORT EDIT: UIKit saves the storyboard that made a controller by itself; the package does not
        // (there is no UIStoryboard), so the controller saves its stand-in's name.
        coder.encode(storyboard?.name, forKey: UIApplication.stateRestorationViewControllerStoryboardKey)

        super.encodeRestorableState(with: coder)
    }

    override func decodeRestorableState(with coder: NSCoder) {
        restoreExportSheet = coder.decodeBool(forKey: fuelEventExportSheet)
        restoreOpenIn = coder.decodeBool(forKey: fuelEventShowOpenIn)
        restoreMailComposer = coder.decodeBool(forKey: fuelEventShowComposer)

        super.decodeRestorableState(with: coder)

        // -> openradar #13438788
        tableView.reloadData()
    }
}

// MARK: - Classes/FuelEventEditorController.swift

private let SRFuelEventCancelSheet = "FuelEventCancelSheet"
private let SRFuelEventDataChanged = "FuelEventDataChanged"
private let SRFuelEventSelectionIndex = "FuelEventMostSelectionIndex"
private let SRFuelEventEventID = "FuelEventEventID"
private let SRFuelEventCarID = "FuelEventCarID"
private let SRFuelEventDate = "FuelEventDate"
private let SRFuelEventDistance = "FuelEventDistance"
private let SRFuelEventPrice = "FuelEventPrice"
private let SRFuelEventVolume = "FuelEventVolume "
private let SRFuelEventFilledUp = "FuelEventFilledUp"
private let SRFuelEventEditing = "FuelEventEditing"
private let SRFuelEventComment = "FuelEventComment"

final class FuelEventEditorController: PageViewController, UIViewControllerRestoration {
    var event: FuelEvent!

    var car: Car!
    var date: Date!
    var distance: Decimal!
    var price: Decimal!
    var fuelVolume: Decimal!
    var filledUp = false
    var comment: String?

    private var isShowingCancelSheet = false
    private var dataChanged = false
    private var restoredSelectionIndex: IndexPath?

    var revertSheetShown = false

    // MARK: - View Lifecycle

    required init?(coder aDecoder: NSCoder) {
        super.init(coder: aDecoder)

        restorationClass = type(of: self)
    }

    // MARK: - State Restoration

    static func viewController(withRestorationIdentifierPath _: [String], coder: NSCoder) -> UIViewController? {
        // PORT EDIT: no UIStoryboard; the storyboard key holds the storyboard's name, made into a stand-in.
        if let storyboard =
            (coder.decodeObject(forKey: UIApplication.stateRestorationViewControllerStoryboardKey)
            as? String).map(KraftstoffStoryboard.init(name:)),
            let controller = storyboard.instantiateViewController(withIdentifier: "FuelEventEditor")
                as? FuelEventEditorController,
            let modelIdentifier = coder.decodeObject(of: NSString.self, forKey: SRFuelEventEventID) as String?
        {
            controller.event = DataManager.managedObjectForModelIdentifier(modelIdentifier)

            if controller.event == nil {
                return nil
            }

            return controller
        }

        return nil
    }

    override func encodeRestorableState(with coder: NSCoder) {
        let indexPath = isShowingCancelSheet ? restoredSelectionIndex : tableView.indexPathForSelectedRow

        coder.encode(isShowingCancelSheet, forKey: SRFuelEventCancelSheet)
        coder.encode(dataChanged, forKey: SRFuelEventDataChanged)
        coder.encode(indexPath, forKey: SRFuelEventSelectionIndex)
        coder.encode(DataManager.modelIdentifierForManagedObject(event) as NSString?, forKey: SRFuelEventEventID)
        coder.encode(DataManager.modelIdentifierForManagedObject(car) as NSString?, forKey: SRFuelEventCarID)
        coder.encode(date, forKey: SRFuelEventDate)
        coder.encode(distance, forKey: SRFuelEventDistance)
        coder.encode(price, forKey: SRFuelEventPrice)
        coder.encode(fuelVolume, forKey: SRFuelEventVolume)
        coder.encode(filledUp, forKey: SRFuelEventFilledUp)
        coder.encode(comment as NSString?, forKey: SRFuelEventComment)
        coder.encode(isEditing, forKey: SRFuelEventEditing)

        super.encodeRestorableState(with: coder)
    }

    override func decodeRestorableState(with coder: NSCoder) {
        isShowingCancelSheet = coder.decodeBool(forKey: SRFuelEventCancelSheet)
        dataChanged = coder.decodeBool(forKey: SRFuelEventDataChanged)
        restoredSelectionIndex =
            coder.decodeObject(of: NSIndexPath.self, forKey: SRFuelEventSelectionIndex) as IndexPath?
        date = coder.decodeObject(of: NSDate.self, forKey: SRFuelEventDate) as Date?
        distance = coder.decodeObject(of: NSDecimalNumber.self, forKey: SRFuelEventDistance) as Decimal?
        price = coder.decodeObject(of: NSDecimalNumber.self, forKey: SRFuelEventPrice) as Decimal?
        fuelVolume = coder.decodeObject(of: NSDecimalNumber.self, forKey: SRFuelEventVolume) as Decimal?
        filledUp = coder.decodeBool(forKey: SRFuelEventFilledUp)
        comment = coder.decodeObject(of: NSString.self, forKey: SRFuelEventComment) as String?

        if let carId = coder.decodeObject(of: NSString.self, forKey: SRFuelEventCarID) as String? {
            car = DataManager.managedObjectForModelIdentifier(carId)
        }

        if coder.decodeBool(forKey: SRFuelEventEditing) {
            setEditing(true, animated: false)

            if isShowingCancelSheet {
                showRevertActionSheet()
            } else {
                selectRowAtIndexPath(restoredSelectionIndex)
                restoredSelectionIndex = nil
            }
        }

        super.decodeRestorableState(with: coder)
    }

    func showRevertActionSheet() {
        revertSheetShown = true
    }

    var restoredSelection: IndexPath? { restoredSelectionIndex }
    var restoredDataChanged: Bool { dataChanged }
}

// MARK: - The app's own base class (Classes/PageViewController.swift), reduced

class PageViewController: UITableViewController {
    // PORT EDIT: UIKit saves the storyboard that made a controller by itself; the package does not (there
    // is no UIStoryboard), so the app's base class saves its stand-in's name.
    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(storyboard?.name, forKey: UIApplication.stateRestorationViewControllerStoryboardKey)
    }

    func selectRowAtIndexPath(_ indexPath: IndexPath?) {
        if let path = indexPath {
            tableView.selectRow(at: path, animated: false, scrollPosition: .none)
            // PORT EDIT: the package's UITableViewController has no table view delegate methods; the
            // app's line was:
            //     tableView(tableView, didSelectRowAt: path)
        }
    }
}

// MARK: - Stand-ins for Core Data (Classes/DataManager.swift) and UIKit's storyboards

class KraftstoffManagedObject: NSObject {
    let objectID: String
    init(objectID: String) { self.objectID = objectID }
}

final class Car: KraftstoffManagedObject {}
final class FuelEvent: KraftstoffManagedObject {}

enum DataManager {
    nonisolated(unsafe) static var objects: [String: KraftstoffManagedObject] = [:]

    static func modelIdentifierForManagedObject(_ object: KraftstoffManagedObject?) -> String? {
        object?.objectID
    }

    static func managedObjectForModelIdentifier<ResultType: KraftstoffManagedObject>(_ identifier: String)
        -> ResultType?
    {
        objects[identifier] as? ResultType
    }
}

/// Stands in for UIStoryboard (main-actor, as UIKit's): Main.storyboard's scenes by storyboard identifier,
/// made as a storyboard makes them, through init(coder:).
@MainActor
struct KraftstoffStoryboard {
    let name: String

    func instantiateViewController(withIdentifier identifier: String) -> UIViewController {
        let coder = Self.sceneCoder()
        let controller: UIViewController?
        switch identifier {
        case "CarConfigurationController": controller = CarConfigurationController(coder: coder)
        case "FuelEventController": controller = FuelEventController(coder: coder)
        case "FuelEventEditor": controller = FuelEventEditorController(coder: coder)
        default: controller = CarViewController(coder: coder)
        }
        controller!.restorationIdentifier = identifier
        controller!.storyboard = self
        return controller!
    }

    /// A scene's archive (empty here: the scenes hold nothing the restoration code reads).
    private static func sceneCoder() -> NSCoder {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.finishEncoding()
        return try! NSKeyedUnarchiver(forReadingFrom: archiver.encodedData)
    }

    fileprivate static var made: [ObjectIdentifier: Made] = [:]

    fileprivate final class Made {
        weak var controller: UIViewController?
        let storyboard: KraftstoffStoryboard
        init(_ controller: UIViewController, _ storyboard: KraftstoffStoryboard) {
            self.controller = controller
            self.storyboard = storyboard
        }
    }
}

/// Stands in for UIViewController.storyboard: the storyboard that made the controller.
extension UIViewController {
    var storyboard: KraftstoffStoryboard? {
        get {
            KraftstoffStoryboard.made[ObjectIdentifier(self)].flatMap { $0.controller === self ? $0.storyboard : nil }
        }
        set { KraftstoffStoryboard.made[ObjectIdentifier(self)] = newValue.map { .init(self, $0) } }
    }
}

// MARK: - Tests

@MainActor @Suite(.serialized) struct KraftstoffPortTests {
    private func launch(_ store: TestStore, delegate: AlwaysRestore) throws -> (Journal, RestorationManager) {
        let journal = try store.open()
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "2.1", interfaceIdiom: "phone"))
        manager.delegate = delegate
        manager.register(restorationClass: CarConfigurationController.self)
        manager.register(restorationClass: FuelEventController.self)
        manager.register(restorationClass: FuelEventEditorController.self)
        return (journal, manager)
    }

    @Test func aHalfEditedFuelEventComesBackWithItsDecimalsDateAndSelectedRow() throws {
        let car = Car(objectID: "x-coredata://car/p1")
        let event = FuelEvent(objectID: "x-coredata://event/p7")
        DataManager.objects = [car.objectID: car, event.objectID: event]
        let store = TestStore()
        let delegate = AlwaysRestore()
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        do {
            let (journal, manager) = try launch(store, delegate: delegate)
            let tabs = UITabBarController()
            tabs.restorationIdentifier = "TabBarController"
            let cars = CarViewController()
            cars.restorationIdentifier = "CarViewController"
            let nav = UINavigationController()
            nav.viewControllers = [cars]
            nav.restorationIdentifier = "CarNavigationController"
            tabs.viewControllers = [nav]
            let events =
                KraftstoffStoryboard(name: "Main").instantiateViewController(withIdentifier: "FuelEventController")
                as! FuelEventController
            events.restorationIdentifier = "FuelEventController"
            events.selectedCar = car
            events.mailComposeController = NSObject()
            let editor =
                KraftstoffStoryboard(name: "Main").instantiateViewController(withIdentifier: "FuelEventEditor")
                as! FuelEventEditorController
            editor.restorationIdentifier = "FuelEventEditor"
            editor.event = event
            editor.car = car
            editor.date = date
            editor.distance = Decimal(string: "512.3")
            editor.price = Decimal(string: "1.799")
            editor.fuelVolume = Decimal(string: "41.07")
            editor.filledUp = true
            editor.comment = "Autobahn"
            editor.setEditing(true, animated: false)
            editor.tableView.selectRow(at: IndexPath(row: 2, section: 0), animated: false, scrollPosition: .none)
            nav.viewControllers += [events, editor]
            let report = try manager.preserveState(roots: [tabs])
            #expect(report.problems.isEmpty)
            try journal.close()
        }

        let (journal, manager) = try launch(store, delegate: delegate)
        let tabs = UITabBarController()
        tabs.restorationIdentifier = "TabBarController"
        let cars = CarViewController()
        cars.restorationIdentifier = "CarViewController"
        let nav = UINavigationController()
        nav.viewControllers = [cars]
        nav.restorationIdentifier = "CarNavigationController"
        tabs.viewControllers = [nav]
        let report = try manager.restoreState(roots: [tabs])
        #expect(report.diagnostics.isEmpty)
        #expect(nav.viewControllers.count == 3)
        let events = try #require(nav.viewControllers.dropFirst().first as? FuelEventController)
        #expect(events.selectedCar === car)
        #expect(events.wantsMailComposer)
        let editor = try #require(nav.viewControllers.last as? FuelEventEditorController)
        #expect(editor.event === event)
        #expect(editor.car === car)
        #expect(editor.date == date)
        #expect(editor.distance == Decimal(string: "512.3"))
        #expect(editor.price == Decimal(string: "1.799"))
        #expect(editor.fuelVolume == Decimal(string: "41.07"))
        #expect(editor.filledUp)
        #expect(editor.comment == "Autobahn")
        #expect(editor.isEditing)
        #expect(editor.tableView.indexPathForSelectedRow == IndexPath(row: 2, section: 0))
        try journal.close()
    }

    @Test func thePresentedConfiguratorIsPresentedAgainAndTheNextPassKeepsIt() throws {
        let store = TestStore()
        let delegate = AlwaysRestore()
        do {
            let (journal, manager) = try launch(store, delegate: delegate)
            let cars = CarViewController()
            cars.restorationIdentifier = "CarViewController"
            cars.storyboard = KraftstoffStoryboard(name: "Main")
            let configurator = try #require(cars.presentNewCarConfigurator())
            configurator.name = "Golf"
            #expect(configurator.navigationController?.presentingViewController === cars)
            try manager.preserveState(roots: [cars])
            try journal.close()
        }

        for _ in 0..<2 {
            let (journal, manager) = try launch(store, delegate: delegate)
            manager.registerController(forRestorationIdentifier: "CarConfigurationNavigationController") {
                let navController = UINavigationController()
                navController.restorationIdentifier = "CarConfigurationNavigationController"
                return navController
            }
            let cars = CarViewController()
            cars.restorationIdentifier = "CarViewController"
            let report = try manager.restoreState(roots: [cars])
            #expect(report.diagnostics.isEmpty)
            let nav = try #require(cars.presentedViewController as? UINavigationController)
            #expect(nav.presentingViewController === cars)
            let configurator = try #require(nav.viewControllers.first as? CarConfigurationController)
            #expect(configurator.name == "Golf")
            // The next pass finds the presented controller where the restoration put it.
            #expect(try manager.preserveState(roots: [cars]).problems.isEmpty)
            try journal.close()
        }
    }

    @Test func thePresentedCarConfiguratorComesBackWithItsFieldsAndItsDelegate() throws {
        let store = TestStore()
        let delegate = AlwaysRestore()
        do {
            let (journal, manager) = try launch(store, delegate: delegate)
            let cars = CarViewController()
            cars.restorationIdentifier = "CarViewController"
            cars.storyboard = KraftstoffStoryboard(name: "Main")
            let configurator = try #require(cars.presentNewCarConfigurator())
            configurator.restorationIdentifier = "CarConfigurationController"
            configurator.name = "Golf"
            configurator.plate = "B-KS 2015"
            configurator.fuelUnit = NSNumber(value: 3)
            configurator.fuelConsumptionUnit = NSNumber(value: 1)
            configurator.dataChanged = true
            configurator.tableView.selectRow(at: IndexPath(row: 1, section: 0), animated: false, scrollPosition: .none)
            let report = try manager.preserveState(roots: [cars])
            #expect(report.problems.isEmpty)
            try journal.close()
        }

        let (journal, manager) = try launch(store, delegate: delegate)
        manager.registerController(forRestorationIdentifier: "CarConfigurationNavigationController") {
            let navController = UINavigationController()
            navController.restorationIdentifier = "CarConfigurationNavigationController"
            return navController
        }
        let cars = CarViewController()
        cars.restorationIdentifier = "CarViewController"
        let report = try manager.restoreState(roots: [cars])
        #expect(report.diagnostics.isEmpty)
        let nav = try #require(cars.presentedViewController as? UINavigationController)
        let configurator = try #require(nav.viewControllers.first as? CarConfigurationController)
        #expect(configurator.name == "Golf")
        #expect(configurator.plate == "B-KS 2015")
        #expect(configurator.fuelUnit == NSNumber(value: 3))
        #expect(configurator.fuelConsumptionUnit == NSNumber(value: 1))
        #expect(configurator.dataChanged)
        #expect(configurator.editingExistingObject == false)
        #expect(configurator.previousSelectionIndex == IndexPath(row: 1, section: 0))
        #expect(configurator.delegate === cars)
        try journal.close()
    }
}
