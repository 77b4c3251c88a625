import StateJournal
import StateRestoration

/// A small mail app for Linux that comes back where the user left it: the example of the
/// restoration model, used by the tests and by `statejournal demo`.
///
/// Its controllers: a navigation stack (``MailNavigationController``) holding a mailbox list, a
/// message list with a selection and a scroll position, and an editor with a draft; a settings
/// sheet presented on top, created by the app delegate; and a registered custom object, the
/// ``MailSession``. Drive it with ``perform(_:)`` or ``simulate(steps:seed:)``; save with
/// ``save(mode:)``; bring it back with ``launch(asOf:)``.
///
/// Besides its main window (the default scene), the app opens more windows, each a scene of its
/// own with its own navigation stack (``openWindow(_:)``, ``perform(_:in:)``), saved and restored
/// with the main one and discarded when the user closes it (``closeWindow(_:)``), as UIKit apps do
/// with scene sessions.
public final class MailApp: ApplicationRestorationDelegate {
    /// The restoration manager.
    public let manager: RestorationManager
    /// The root controller.
    public let navigation: MailNavigationController
    /// The registered session object.
    public let session: MailSession
    /// Saved state from a bundle version below this one is refused (seed 003). Defaults to none.
    public var minimumRestorableBundleVersion: Int?
    /// How many times the delegate was asked for a controller (the settings sheet).
    public private(set) var delegateLookups = 0
    /// The windows open besides the main one, by scene session, each with its own navigation stack.
    public private(set) var windows: [SceneSession: MailNavigationController] = [:]
    /// What the last ``launch(asOf:)`` restored in each window besides the main one.
    public private(set) var windowReports: [SceneSession: RestorationReport] = [:]

    /// The mailboxes the app knows.
    public static let mailboxes = ["Inbox", "Archive", "Drafts", "Sent", "Lists"]

    /// Creates the app over a journal, as at launch: an empty navigation stack with the mailbox
    /// list, a registered session, and its restoration classes registered.
    ///
    /// - Parameters:
    ///   - journal: The journal, just opened.
    ///   - bundleVersion: The app's build version.
    ///   - interfaceIdiom: The interface idiom.
    public init(journal: Journal, bundleVersion: String = "1", interfaceIdiom: String = "desktop") {
        manager = RestorationManager(
            journal: journal,
            configuration: RestorationConfiguration(
                bundleVersion: bundleVersion, interfaceIdiom: interfaceIdiom, systemVersion: "Linux"))
        navigation = MailNavigationController()
        navigation.stack = [MailboxesController()]
        session = MailSession(account: "ada@example.org", parent: navigation)
        manager.delegate = self
        manager.register(restorationClass: MailboxesController.self)
        manager.register(restorationClass: MessageListController.self)
        manager.register(restorationClass: ComposeController.self)
        manager.registerObject(forStateRestoration: session, restorationIdentifier: "Session")
    }

    /// The root controllers.
    public var roots: [any RestorableController] { [navigation] }

    /// Restores the saved state, as at launch.
    ///
    /// - Parameter epoch: The epoch to restore, or `nil` for the latest.
    /// - Returns: The restoration report.
    /// - Throws: The manager's errors.
    @discardableResult
    public func launch(asOf epoch: UInt64? = nil) throws -> RestorationReport {
        let report = try manager.restoreState(roots: roots, asOf: epoch)
        // The windows that were open come back too, each restored on its own.
        windowReports = [:]
        for session in manager.openSessions.sorted() {
            let window = windows[session] ?? Self.makeWindow()
            windows[session] = window
            windowReports[session] = try manager.restoreState(roots: [window], scene: session, asOf: epoch)
        }
        return report
    }

    /// Runs a preservation pass of the main window, then one of each other open window.
    ///
    /// - Parameter mode: Full (the default), or incremental.
    /// - Returns: The main window's preservation report.
    /// - Throws: The manager's errors.
    @discardableResult
    public func save(mode: PreservationMode = .full) throws -> PreservationReport {
        let report = try manager.preserveState(roots: roots, mode: mode)
        for (session, window) in windows.sorted(by: { $0.key < $1.key }) {
            try manager.preserveState(roots: [window], scene: session, mode: mode)
        }
        return report
    }

    // MARK: - Windows

    /// Opens another window, showing the mailbox list, as a new scene.
    ///
    /// - Parameter session: The window's scene session; a new one by default.
    /// - Returns: The session, under which the window is saved.
    @discardableResult
    public func openWindow(_ session: SceneSession = SceneSession()) -> SceneSession {
        if windows[session] == nil { windows[session] = Self.makeWindow() }
        return session
    }

    /// Closes a window: the user will not see it again, so its saved state is discarded in one
    /// epoch (UIKit's `application(_:didDiscardSceneSessions:)`).
    ///
    /// - Parameter session: The window's scene session.
    /// - Throws: The manager's errors.
    public func closeWindow(_ session: SceneSession) throws {
        windows[session] = nil
        try manager.discardSceneSessions([session])
    }

    private static func makeWindow() -> MailNavigationController {
        let window = MailNavigationController()
        window.stack = [MailboxesController()]
        return window
    }

    // MARK: - ApplicationRestorationDelegate

    /// Always saves.
    public func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }

    /// Refuses state from another interface idiom, or from a bundle version below
    /// ``minimumRestorableBundleVersion`` (seed 003).
    public func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool {
        if coder.interfaceIdiom != manager.configuration.interfaceIdiom { return false }
        if let minimum = minimumRestorableBundleVersion {
            guard let saved = coder.bundleVersion.flatMap(Int.init), saved >= minimum else { return false }
        }
        return true
    }

    /// Records the number of screens, as an app key.
    public func willEncodeRestorableState(_ coder: RestorationCoder) {
        coder.encode(navigation.stack.count, forKey: "screens")
    }

    /// Creates the settings sheet, which has no restoration class.
    public func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
        -> (any RestorableController)?
    {
        delegateLookups += 1
        return identifierComponents == ["Main", "Settings"] ? SettingsController() : nil
    }

    // MARK: - Simulation

    /// Applies one user action in another window and invalidates what it changed.
    ///
    /// - Parameters:
    ///   - action: The action; the settings sheet and the session belong to the main window, so
    ///     their actions, and one that does not apply to the window's current screen, do nothing.
    ///   - session: The window's scene session.
    public func perform(_ action: MailAction, in session: SceneSession) {
        guard let window = windows[session] else { return }
        _ = perform(action, on: window)
    }

    /// Applies one user action and invalidates what it changed.
    ///
    /// - Parameter action: The action; one that does not apply to the current screen does nothing.
    public func perform(_ action: MailAction) {
        guard !perform(action, on: navigation) else { return }
        switch action {
        case .openSettings:
            guard navigation.presentedSettings == nil else { return }
            navigation.presentedSettings = SettingsController()
            manager.invalidateRestorableState(for: navigation)
        case .setFontSize(let size):
            guard let settings = navigation.presentedSettings else { return }
            settings.fontSize = size  // @Preserved: invalidates the sheet by itself
        case .setPreview(let on):
            guard let settings = navigation.presentedSettings else { return }
            settings.showsPreview = on
        case .closeSettings:
            guard navigation.presentedSettings != nil else { return }
            navigation.presentedSettings = nil
            manager.invalidateRestorableState(for: navigation)
        case .toggleUnreadOnly:
            session.unreadOnly.toggle()
            manager.invalidateRestorableState(for: session)
        default: break
        }
    }

    /// Applies an action on a navigation stack; returns whether it was one.
    private func perform(_ action: MailAction, on navigation: MailNavigationController) -> Bool {
        switch action {
        case .openMailbox(let name):
            guard let mailboxes = navigation.stack.first as? MailboxesController else { return true }
            mailboxes.highlighted = name  // @Preserved: invalidates the mailboxes by itself
            navigation.stack = [mailboxes, MessageListController(mailbox: name)]
            navigation.invalidateRestorableState()
        case .selectMessage(let id):
            guard let list = navigation.stack.last as? MessageListController else { return true }
            list.selectedMessageID = id
            list.invalidateRestorableState()
        case .scroll(let offset):
            guard let list = navigation.stack.last as? MessageListController else { return true }
            list.scrollOffset = offset
            list.invalidateRestorableState()
        case .back:
            guard navigation.stack.count > 1 else { return true }
            navigation.stack.removeLast()
            manager.invalidateRestorableState(for: navigation)
        case .compose(let to, let subject):
            guard !(navigation.stack.last is ComposeController) else { return true }
            navigation.stack.append(ComposeController(draft: Draft(to: to, subject: subject)))
            manager.invalidateRestorableState(for: navigation)
        case .type(let text):
            guard let editor = navigation.stack.last as? ComposeController else { return true }
            editor.draft.body += text
            manager.invalidateRestorableState(for: editor)
        case .openSettings, .setFontSize, .setPreview, .closeSettings, .toggleUnreadOnly:
            return false
        }
        return true
    }

    /// Performs `steps` pseudo-random actions chosen from `seed`, the same ones for the same seed.
    ///
    /// - Parameters:
    ///   - steps: How many actions.
    ///   - seed: The seed of the generator.
    /// - Returns: The actions performed, in order.
    @discardableResult
    public func simulate(steps: Int, seed: UInt64) -> [MailAction] {
        var generator = SplitMix(seed: seed)
        var actions: [MailAction] = []
        for _ in 0..<steps {
            let action = Self.action(from: &generator)
            perform(action)
            actions.append(action)
        }
        return actions
    }

    static func action(from generator: inout SplitMix) -> MailAction {
        let words = ["hello", " world", ", see you", " tomorrow", ". Thanks!"]
        switch generator.next() % 11 {
        case 0: return .openMailbox(mailboxes[Int(generator.next() % UInt64(mailboxes.count))])
        case 1, 2: return .selectMessage(Int(generator.next() % 500))
        case 3: return .scroll(to: Double(generator.next() % 2000) / 4)
        case 4: return .back
        case 5: return .compose(to: "grace@example.org", subject: "Re: \(generator.next() % 100)")
        case 6, 7: return .type(words[Int(generator.next() % UInt64(words.count))])
        case 8: return .openSettings
        case 9: return generator.next() % 2 == 0 ? .setFontSize(10 + Int(generator.next() % 8)) : .closeSettings
        default: return .toggleUnreadOnly
        }
    }

    /// What the app shows now.
    public var snapshot: MailSnapshot {
        let list = navigation.stack.last { $0 is MessageListController } as? MessageListController
        let editor = navigation.stack.last as? ComposeController
        return MailSnapshot(
            stack: navigation.stack.compactMap(\.restorationIdentifier),
            highlightedMailbox: (navigation.stack.first as? MailboxesController)?.highlighted,
            mailbox: list?.mailbox, selectedMessageID: list?.selectedMessageID, scrollOffset: list?.scrollOffset,
            draft: editor?.draft,
            settings: navigation.presentedSettings.map {
                MailSnapshot.Settings(showsPreview: $0.showsPreview, fontSize: $0.fontSize)
            },
            account: session.account, unreadOnly: session.unreadOnly)
    }
}

@available(*, unavailable, message: "The mail app runs on one thread.")
extension MailApp: Sendable {}

/// A small deterministic generator (SplitMix64), so that a seed always gives the same actions.
struct SplitMix {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
