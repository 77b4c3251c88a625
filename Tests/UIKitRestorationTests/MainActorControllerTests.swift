import StateJournal
import StateJournalTestSupport
import StateRestorationService
import Testing
import UIKitRestoration

/// Main-actor state that only main-actor code can touch: a controller's overrides reach it only
/// because they are main-actor isolated, as UIKit's are.
@MainActor final class ComposeSession {
    static let shared = ComposeSession()
    var subject = ""
    var recipients: [String] = []
}

final class ComposeController: UIViewController, UIViewControllerRestoration {
    var cursor = 0

    static func viewController(withRestorationIdentifierPath identifierComponents: [String], coder: NSCoder)
        -> UIViewController?
    {
        ComposeController(restorationIdentifier: identifierComponents.last)
    }

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(ComposeSession.shared.subject, forKey: "subject")
        coder.encode(ComposeSession.shared.recipients, forKey: "recipients")
        coder.encode(cursor, forKey: "cursor")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        ComposeSession.shared.subject = coder.decodeObject(forKey: "subject") as? String ?? ""
        ComposeSession.shared.recipients = coder.decodeObject(forKey: "recipients") as? [String] ?? []
        cursor = coder.decodeInteger(forKey: "cursor")
    }
}

/// A custom object with main-actor state, registered under a controller.
final class OutboxCounter: UIStateRestoring {
    weak var owner: UIViewController?
    var queued = 0

    var restorationParent: UIStateRestoring? { owner }

    func encodeRestorableState(with coder: NSCoder) { coder.encode(queued, forKey: "queued") }
    func decodeRestorableState(with coder: NSCoder) { queued = coder.decodeInteger(forKey: "queued") }
}

/// Runs `body` on a thread of its own, away from the main thread and the main queue, as an app
/// that calls the manager from a worker thread does.
func onWorkerThread<T>(_ body: @escaping () throws -> T) throws -> T {
    nonisolated(unsafe) var result: Result<T, any Error>?
    nonisolated(unsafe) let body = body
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        result = Result { try body() }
        done.signal()
    }
    thread.start()
    done.wait()
    return try result!.get()
}

@MainActor @Suite(.serialized) struct MainActorControllerTests {
    let store = TestStore()
    let delegate = AlwaysRestore()

    func manager(_ journal: Journal) -> RestorationManager {
        let manager = makeManager(journal, delegate: delegate)
        manager.register(restorationClass: ComposeController.self)
        return manager
    }

    /// A navigation stack of main-actor controllers, one of them made by its restoration class.
    func stack() -> (UINavigationController, ComposeController) {
        let navigation = UINavigationController(rootViewController: UIViewController(restorationIdentifier: "Inbox"))
        navigation.restorationIdentifier = "Mail"
        let compose = ComposeController(restorationIdentifier: "Compose")
        compose.restorationClass = ComposeController.self
        navigation.pushViewController(compose, animated: true)
        return (navigation, compose)
    }

    @Test func overridesOfAMainActorSubclassSaveAndRestoreItsMainActorState() throws {
        do {
            let journal = try store.open()
            let (navigation, compose) = stack()
            ComposeSession.shared.subject = "Quarterly figures"
            ComposeSession.shared.recipients = ["ana@example.com", "bo@example.com"]
            compose.cursor = 17
            let report = try manager(journal).preserveState(roots: [navigation])
            #expect(report.problems.isEmpty)
            try journal.close()
        }
        ComposeSession.shared.subject = ""
        ComposeSession.shared.recipients = []

        let journal = try store.open()
        // The app builds its root stack at launch, as a storyboard would; the compose controller
        // comes from its restoration class.
        let navigation = UINavigationController(rootViewController: UIViewController(restorationIdentifier: "Inbox"))
        navigation.restorationIdentifier = "Mail"
        let report = try manager(journal).restoreState(roots: [navigation])
        #expect(report.diagnostics.isEmpty)
        let compose = try #require(navigation.topViewController as? ComposeController)
        #expect(navigation.viewControllers.count == 2)
        #expect(compose.cursor == 17)
        #expect(ComposeSession.shared.subject == "Quarterly figures")
        #expect(ComposeSession.shared.recipients == ["ana@example.com", "bo@example.com"])
        try journal.close()
    }

    @Test func aPassRunOffTheMainActorRefusesItsControllersAndKeepsWhatWasSaved() throws {
        let journal = try store.open()
        let manager = manager(journal)
        let (navigation, compose) = stack()
        let counter = OutboxCounter()
        counter.owner = compose
        counter.queued = 3
        manager.registerObject(forStateRestoration: counter, restorationIdentifier: "Outbox")
        compose.cursor = 5
        #expect(try manager.preserveState(roots: [navigation]).problems.isEmpty)
        let saved = try journal.state().entries

        // The app's mistake: the same manager and controllers used from a worker thread. Nothing of
        // theirs runs there, nothing traps, and the pass is refused whole: a pass that could not
        // read a controller's children must not commit the tree without them.
        compose.cursor = 6
        counter.queued = 4
        nonisolated(unsafe) let unsafeManager = manager
        nonisolated(unsafe) let roots: [any RestorableController] = [navigation]
        manager.invalidateRestorableState(for: counter)
        for mode in [PreservationMode.incremental, .full] {
            let refusal = try onWorkerThread { () -> RestorationError? in
                do {
                    try unsafeManager.preserveState(roots: roots, mode: mode)
                    return nil
                } catch let error as RestorationError {
                    return error
                }
            }
            #expect(refusal?.code == .notOnMainActor)
            #expect(try journal.state().entries == saved)
        }

        // Back on the main actor, the next pass saves the edits.
        #expect(try manager.preserveState(roots: [navigation], mode: .full).problems.isEmpty)
        #expect(try journal.state().entries != saved)
        try journal.close()
    }

    @Test func aRestorationRunOffTheMainActorSkipsMainActorRestorationClassesWithADiagnostic() throws {
        do {
            let journal = try store.open()
            let (navigation, compose) = stack()
            compose.cursor = 9
            try manager(journal).preserveState(roots: [navigation])
            try journal.close()
        }
        let journal = try store.open()
        let manager = manager(journal)
        nonisolated(unsafe) let unsafeManager = manager
        let report = try onWorkerThread { try unsafeManager.restoreState(roots: []) }
        #expect(report.diagnostics.contains { "\($0)".contains("notOnMainActor") })
        try journal.close()
    }

    @Test func theServiceSavesMainActorControllersFromItsEncodeStepOnTheMainActor() async throws {
        let journal = try store.open()
        let manager = manager(journal)
        let (navigation, compose) = stack()
        let service = StateRestorationService(
            manager: manager, roots: { [navigation] },
            configuration: .init(
                coalescingDelay: .seconds(1), fullPassInterval: nil, restoresAtStart: false, clock: ManualClock()))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            _ = await service.waitUntilRestored()
            compose.cursor = 42
            ComposeSession.shared.subject = "From the service"
            service.setNeedsPreservation()
            try await service.preserve()
            group.cancelAll()
            try await group.waitForAll()
        }
        let entry = try RestorableEntry(
            decoding: try #require(try journal.state().entries[RestorationPath(["Mail", "Compose"])]))
        #expect(entry.values["subject"] == .string("From the service"))
        #expect(entry.values["cursor"] == .int(42))
        try journal.close()
    }
}

/// A view whose state its controller saves through UIKit's view methods, as UIKit did by itself.
final class ScrollingView: UIView {
    var contentOffset = CGPoint.zero

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(contentOffset, forKey: "contentOffset")
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        contentOffset = coder.decodeCGPoint(forKey: "contentOffset")
    }
}

final class ReaderController: UIViewController {
    let page = ScrollingView(restorationIdentifier: "Page")

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        page.encodeRestorableState(with: coder)
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        page.decodeRestorableState(with: coder)
    }
}

@MainActor @Suite struct ViewStateTests {
    @Test func aViewSubclassKeepsItsStateThroughItsControllersCoder() throws {
        let store = TestStore()
        let delegate = AlwaysRestore()
        func manager(_ journal: Journal) -> RestorationManager {
            let manager = RestorationManager(
                journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "desktop")
            )
            manager.delegate = delegate
            return manager
        }
        do {
            let journal = try store.open()
            let reader = ReaderController(restorationIdentifier: "Reader")
            reader.page.contentOffset = CGPoint(x: 0, y: 1_240)
            try makeManager(journal, delegate: delegate).preserveState(roots: [reader])
            try journal.close()
        }
        let journal = try store.open()
        let reader = ReaderController(restorationIdentifier: "Reader")
        try makeManager(journal, delegate: delegate).restoreState(roots: [reader])
        #expect(reader.page.contentOffset == CGPoint(x: 0, y: 1_240))
        try journal.close()
    }
}
