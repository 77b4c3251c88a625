// swift-format-ignore-file
// The sample of Restoring Several Windows (StateRestoration.docc/RestoringSeveralWindows.md): an app
// that saves, restores and closes windows, one scene each. This file imports exactly what the
// sample imports. It keeps the document's formatting, which swift-format would change.
import StateRestoration

// sample: RestoringSeveralWindows.md, an app with several windows
final class WindowedApp {
    let manager: RestorationManager
    let mainWindow: any RestorableController
    let makeWindow: () -> any RestorableController
    var windows: [SceneSession: any RestorableController] = [:]

    init(manager: RestorationManager, mainWindow: any RestorableController,
         makeWindow: @escaping () -> any RestorableController) {
        self.manager = manager
        self.mainWindow = mainWindow
        self.makeWindow = makeWindow
    }

    // At launch: the main window, then a window for each scene the store holds.
    func launch() throws {
        try manager.restoreState(roots: [mainWindow])
        for session in manager.openSessions.sorted() {
            let window = makeWindow()
            windows[session] = window
            try manager.restoreState(roots: [window], scene: session)
        }
    }

    // Whenever state changed: one pass per window, each an epoch of its own.
    func save() throws {
        try manager.preserveState(roots: [mainWindow])
        for (session, window) in windows {
            try manager.preserveState(roots: [window], scene: session)
        }
    }

    func openWindow() -> SceneSession {
        let session = SceneSession()
        windows[session] = makeWindow()
        return session
    }

    // The user closed a window: its state goes, in one epoch.
    func closeWindow(_ session: SceneSession) throws {
        windows[session] = nil
        try manager.discardSceneSessions([session])
    }
}
// end sample
