// Ported app: the restoration pattern of ResearchKit (ResearchKit/ResearchKit): a task view
// controller saves its task (an `NSCoding` model object), its run's UUID, the current step, the
// results collected so far, when it was presented, its output directory and its options; an app
// either keeps its `restorationData` to resume the task later, or lets state restoration re-create
// it with its restoration class while it is presented.
//
// Method bodies: 8 of 12 compiled unchanged (the task's `encode(with:)` and
// `init?(coder:)`, the task view controller's restoration class, encode, decode and
// `applicationFinishedRestoringState()`, should-save, should-restore). Edited: 4: `restorationData`
// (an `NSKeyedArchiver` that the controller encodes into became `RestorableStateArchive(archiving:)`),
// `init(task:restorationData:)` (the `NSKeyedUnarchiver` became `RestorableStateArchive.restore`,
// and `super.init(nibName:bundle:)` became `super.init(restorationIdentifier:)`), and the presenting
// controller's encode and decode, which a UIKit app does not have: UIKit presents the restored task
// view controller again by itself, here the presenter must. The task class had to be internal, not
// private: Foundation's `NSStringFromClass` stops the process for a private class.
import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

extension PortedApps {
    @Suite struct PortedAppResearchKitTests {}
}

final class ORKOrderedTask: NSObject, NSCoding {
    let identifier: String
    let stepIdentifiers: [String]

    init(identifier: String, stepIdentifiers: [String]) {
        self.identifier = identifier
        self.stepIdentifiers = stepIdentifiers
    }

    func encode(with coder: NSCoder) {
        coder.encode(identifier, forKey: "identifier")
        coder.encode(stepIdentifiers, forKey: "steps")
    }

    required init?(coder: NSCoder) {
        guard let identifier = coder.decodeObject(forKey: "identifier") as? String else { return nil }
        self.identifier = identifier
        stepIdentifiers = coder.decodeObject(forKey: "steps") as? [String] ?? []
    }
}

private final class ORKTaskViewController: RestorableViewController, ControllerRestoration {
    var task: ORKOrderedTask?
    var taskRunUUID = UUID()
    var currentStepIdentifier: String?
    var managedStepIdentifiers: [String] = []
    var answers: [String: Int] = [:]
    var presentedDate: Date?
    var outputDirectory: URL?
    var showsProgressInNavigationBar = true
    var discardable = false
    var resumed = false

    init(task: ORKOrderedTask?, restorationData: Data?) {
        self.task = task
        super.init(restorationIdentifier: "ORKTaskViewController")
        restorationClass = ORKTaskViewController.self
        if let restorationData {
            _ = try? RestorableStateArchive.restore(self, from: restorationData)
            applicationFinishedRestoringState()
        }
    }

    var restorationData: Data? {
        try? RestorableStateArchive(archiving: self).data
    }

    static func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        ORKTaskViewController(task: nil, restorationData: nil)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(task, forKey: "ORKTaskRestoreKey")
        coder.encode(taskRunUUID, forKey: "ORKTaskRunUUIDRestoreKey")
        coder.encode(currentStepIdentifier, forKey: "ORKCurrentStepIdentifierRestoreKey")
        coder.encode(managedStepIdentifiers, forKey: "ORKManagedStepIdentifiersRestoreKey")
        coder.encode(answers, forKey: "ORKManagedResultsRestoreKey")
        coder.encode(presentedDate, forKey: "ORKPresentedDate")
        coder.encode(outputDirectory, forKey: "ORKOutputDirectoryRestoreKey")
        coder.encode(showsProgressInNavigationBar, forKey: "ORKShowsProgressInNavigationBarRestoreKey")
        coder.encode(discardable, forKey: "ORKDiscardableTaskRestoreKey")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        if task == nil {
            task = coder.decodeObject(of: ORKOrderedTask.self, forKey: "ORKTaskRestoreKey")
        }
        if let uuid = coder.decodeObject(of: NSUUID.self, forKey: "ORKTaskRunUUIDRestoreKey") as UUID? {
            taskRunUUID = uuid
        }
        currentStepIdentifier =
            coder.decodeObject(of: NSString.self, forKey: "ORKCurrentStepIdentifierRestoreKey") as String?
        managedStepIdentifiers = coder.decodeObject(forKey: "ORKManagedStepIdentifiersRestoreKey") as? [String] ?? []
        answers = coder.decodeObject(forKey: "ORKManagedResultsRestoreKey") as? [String: Int] ?? [:]
        presentedDate = coder.decodeObject(of: NSDate.self, forKey: "ORKPresentedDate") as Date?
        outputDirectory = coder.decodeObject(of: NSURL.self, forKey: "ORKOutputDirectoryRestoreKey") as URL?
        showsProgressInNavigationBar = coder.decodeBool(forKey: "ORKShowsProgressInNavigationBarRestoreKey")
        discardable = coder.decodeBool(forKey: "ORKDiscardableTaskRestoreKey")
    }

    override func applicationFinishedRestoringState() {
        super.applicationFinishedRestoringState()
        resumed = task != nil && currentStepIdentifier != nil
    }
}

/// The app's screen that presents the task.
private final class ActivitiesViewController: RestorableViewController {
    // Edited: UIKit presents the restored task view controller again by itself; here the presenter
    // saves the reference and presents it again. A UIKit app has neither method.
    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(presentedViewController, forKey: "presentedViewController")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        presentedViewController = coder.decodeObject(forKey: "presentedViewController") as? RestorableViewController
    }
}

private final class ResearchAppDelegate: ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }

    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool {
        true
    }
}

extension PortedApps.PortedAppResearchKitTests {
    private static func surveyInProgress(task: ORKOrderedTask) -> ORKTaskViewController {
        let taskViewController = ORKTaskViewController(task: task, restorationData: nil)
        taskViewController.taskRunUUID = UUID(uuidString: "8E1A3F7C-2B4D-4E5F-9A6B-7C8D9E0F1A2B")!
        taskViewController.currentStepIdentifier = "painLevel"
        taskViewController.managedStepIdentifiers = ["intro", "sleep", "painLevel"]
        taskViewController.answers = ["sleep": 7, "intro": 1]
        taskViewController.presentedDate = Date(timeIntervalSince1970: 1_764_160_000.5)
        taskViewController.outputDirectory = URL(fileURLWithPath: "/var/lib/study/output/run-12", isDirectory: true)
        taskViewController.showsProgressInNavigationBar = false
        taskViewController.discardable = true
        return taskViewController
    }

    private static func expectResumed(_ taskViewController: ORKTaskViewController?) {
        #expect(taskViewController?.task?.identifier == "DailySurvey")
        #expect(taskViewController?.task?.stepIdentifiers == ["intro", "sleep", "painLevel", "done"])
        #expect(taskViewController?.taskRunUUID == UUID(uuidString: "8E1A3F7C-2B4D-4E5F-9A6B-7C8D9E0F1A2B"))
        #expect(taskViewController?.currentStepIdentifier == "painLevel")
        #expect(taskViewController?.managedStepIdentifiers == ["intro", "sleep", "painLevel"])
        #expect(taskViewController?.answers == ["sleep": 7, "intro": 1])
        #expect(taskViewController?.presentedDate == Date(timeIntervalSince1970: 1_764_160_000.5))
        #expect(
            taskViewController?.outputDirectory
                == URL(fileURLWithPath: "/var/lib/study/output/run-12", isDirectory: true))
        #expect(taskViewController?.showsProgressInNavigationBar == false)
        #expect(taskViewController?.discardable == true)
        #expect(taskViewController?.resumed == true)
    }

    private static var task: ORKOrderedTask {
        ORKOrderedTask(identifier: "DailySurvey", stepIdentifiers: ["intro", "sleep", "painLevel", "done"])
    }

    @Test func aTaskResumesFromTheRestorationDataTheAppKept() throws {
        let directory = TemporaryDirectory()
        let file = URL(fileURLWithPath: directory.appending("DailySurvey.restoration"))
        do {
            let taskViewController = Self.surveyInProgress(task: Self.task)
            let data = try #require(taskViewController.restorationData)
            try data.write(to: file)
        }

        let data = try Data(contentsOf: file)
        let resumed = ORKTaskViewController(task: Self.task, restorationData: data)
        Self.expectResumed(resumed)
    }

    @Test func aPresentedTaskIsRecreatedByItsRestorationClassWithItsTaskAndProgress() throws {
        let store = TestStore()
        do {
            let journal = try Journal.open(at: store.url)
            let manager = RestorationManager(
                journal: journal, configuration: RestorationConfiguration(bundleVersion: "3.0", interfaceIdiom: "pad"))
            let delegate = ResearchAppDelegate()
            manager.delegate = delegate
            let activities = ActivitiesViewController(restorationIdentifier: "ActivitiesViewController")
            activities.presentedViewController = Self.surveyInProgress(task: Self.task)
            try manager.preserveState(roots: [activities])
            withExtendedLifetime(delegate) {}
            try journal.close()
        }

        let journal = try Journal.open(at: store.url)
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "3.0", interfaceIdiom: "pad"))
        let delegate = ResearchAppDelegate()
        manager.delegate = delegate
        manager.register(restorationClass: ORKTaskViewController.self)
        let activities = ActivitiesViewController(restorationIdentifier: "ActivitiesViewController")
        let report = try manager.restoreState(roots: [activities])
        withExtendedLifetime(delegate) {}

        #expect(report.diagnostics.isEmpty)
        Self.expectResumed(activities.presentedViewController as? ORKTaskViewController)
        try journal.close()
    }
}
