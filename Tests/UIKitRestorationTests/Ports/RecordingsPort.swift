// Port of the state restoration code of Recordings, the voice-memo app of objc.io's "App
// Architecture" book (its plain MVC version).
// Source: https://github.com/objcio/app-architecture @ d6315670bca57f5184266f6f7e380cd1c829ae1a
//   Recordings-MVC/Recordings/FolderViewController.swift (the folder, by its [UUID] path)
//   Recordings-MVC/Recordings/PlayViewController.swift (the recording, by its [UUID] path)
//   Recordings-MVC/Recordings/AppDelegate.swift (shouldSave/shouldRestoreApplicationState)
//   Recordings-MVC/Recordings/Item.swift (uuidPath)
//   Recordings-MVC/Recordings/Base.lproj/Main.storyboard (the restoration identifiers)
// The restoration members are re-created line by line; the store and audio player are
// replaced by the stand-ins at the bottom, and the storyboard by registered factories.
import Foundation
import StateJournal
import Testing
import UIKitRestoration

// MARK: - Recordings-MVC/Recordings/FolderViewController.swift

class FolderViewController: UITableViewController {
    var folder: Folder = Store.shared.rootFolder {
        didSet {
            tableView.reloadData()
            if folder === folder.store?.rootFolder {
                title = .recordings
            } else {
                title = folder.name
            }
        }
    }

    // MARK: UIStateRestoring

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(folder.uuidPath, forKey: .uuidPathKey)
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        if let uuidPath = coder.decodeObject(forKey: .uuidPathKey) as? [UUID],
            let folder = Store.shared.item(atUUIDPath: uuidPath) as? Folder
        {
            self.folder = folder
        } else {
            if let index = navigationController?.viewControllers.index(of: self), index != 0 {
                navigationController?.viewControllers.remove(at: index)
            }
        }
    }
}

fileprivate extension String {
    static let uuidPathKey = "uuidPath"
    static let recordings = NSLocalizedString(
        "Recordings", comment: "Heading for the list of recorded audio items and folders.")
}

// MARK: - Recordings-MVC/Recordings/PlayViewController.swift

class PlayViewController: UIViewController {
    var recording: Recording? {
        didSet {
            updateForChangedRecording()
        }
    }

    var updates = 0
    func updateForChangedRecording() {
        updates += 1
    }

    // MARK: UIStateRestoring

    override func encodeRestorableState(with coder: NSCoder) {
        super.encodeRestorableState(with: coder)
        coder.encode(recording?.uuidPath, forKey: .uuidPathKey)
    }

    override func decodeRestorableState(with coder: NSCoder) {
        super.decodeRestorableState(with: coder)
        if let uuidPath = coder.decodeObject(forKey: .uuidPathKey) as? [UUID],
            let recording = Store.shared.item(atUUIDPath: uuidPath) as? Recording
        {
            self.recording = recording
        }
    }
}

// MARK: - Recordings-MVC/Recordings/AppDelegate.swift (moved to the package's delegate protocol)

final class RecordingsAppDelegate: ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool {
        return true
    }

    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool {
        return true
    }
}

// MARK: - Recordings-MVC/Recordings/Item.swift, Folder.swift, Recording.swift, Store.swift (reduced)

class Item {
    let uuid: UUID
    private(set) var name: String
    weak var store: Store?
    weak var parent: Folder? {
        didSet {
            store = parent?.store
        }
    }

    init(name: String, uuid: UUID) {
        self.name = name
        self.uuid = uuid
        self.store = nil
    }

    var uuidPath: [UUID] {
        var path = parent?.uuidPath ?? []
        path.append(uuid)
        return path
    }

    func item(atUUIDPath path: ArraySlice<UUID>) -> Item? {
        guard let first = path.first, first == uuid else { return nil }
        return self
    }
}

class Folder: Item {
    private(set) var contents: [Item] = []

    func add(_ item: Item) {
        contents.append(item)
        item.parent = self
    }

    override func item(atUUIDPath path: ArraySlice<UUID>) -> Item? {
        guard path.count > 1 else { return super.item(atUUIDPath: path) }
        guard path.first == uuid else { return nil }
        let subsequent = path.dropFirst()
        guard let second = subsequent.first else { return nil }
        return contents.first { $0.uuid == second }.flatMap { $0.item(atUUIDPath: subsequent) }
    }
}

final class Recording: Item {}

final class Store {
    nonisolated(unsafe) static let shared = Store()
    let rootFolder: Folder

    init() {
        rootFolder = Folder(name: "Recordings", uuid: UUID())
        rootFolder.store = self
    }

    func item(atUUIDPath path: [UUID]) -> Item? {
        return rootFolder.item(atUUIDPath: path[0...])
    }
}

// MARK: - Tests

@MainActor @Suite(.serialized) struct RecordingsPortTests {
    private func launch(_ store: TestStore, delegate: RecordingsAppDelegate) throws -> (Journal, RestorationManager) {
        let journal = try store.open()
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "pad"))
        manager.delegate = delegate
        // The storyboard's scenes, by restoration (and storyboard) identifier.
        manager.registerController(forRestorationIdentifier: "folderController") { FolderViewController() }
        manager.registerController(forRestorationIdentifier: "playerController") { PlayViewController() }
        return (journal, manager)
    }

    /// The storyboard's initial hierarchy: a split view of the folders and the player.
    private func makeWindowRoot() -> (UISplitViewController, UINavigationController, UINavigationController) {
        let folders = FolderViewController()
        folders.restorationIdentifier = "folderController"
        let navigation = UINavigationController()
        navigation.viewControllers = [folders]
        navigation.restorationIdentifier = "navController"
        let player = PlayViewController()
        player.restorationIdentifier = "playerController"
        let playerNavigation = UINavigationController()
        playerNavigation.viewControllers = [player]
        playerNavigation.restorationIdentifier = "playerNavigation"
        let split = UISplitViewController()
        split.restorationIdentifier = "splitController"
        split.viewControllers = [navigation, playerNavigation]
        return (split, navigation, playerNavigation)
    }

    @Test func theOpenSubfolderAndThePlayingRecordingComeBackByTheirUUIDPaths() throws {
        let music = Folder(name: "Music", uuid: UUID())
        Store.shared.rootFolder.add(music)
        let demo = Recording(name: "Demo", uuid: UUID())
        music.add(demo)
        let store = TestStore()
        let delegate = RecordingsAppDelegate()
        do {
            let (journal, manager) = try launch(store, delegate: delegate)
            let (split, navigation, playerNavigation) = makeWindowRoot()
            let subfolder = FolderViewController()
            subfolder.restorationIdentifier = "folderController"
            subfolder.folder = music
            navigation.viewControllers.append(subfolder)
            (playerNavigation.viewControllers.first as? PlayViewController)?.recording = demo
            let report = try manager.preserveState(roots: [split])
            // Known issue: the storyboard gives every pushed folder the same restoration identifier,
            // "folderController"; the package keeps the first of the two folders at that path and
            // reports the other (the app relies on UIKit restoring the whole drill-down stack).
            withKnownIssue("Two pushed instances of one storyboard scene share a restoration path") {
                #expect(report.problems.isEmpty)
            }
            try journal.close()
        }

        let (journal, manager) = try launch(store, delegate: delegate)
        let (split, navigation, playerNavigation) = makeWindowRoot()
        let report = try manager.restoreState(roots: [split])
        #expect(report.diagnostics.isEmpty)
        #expect((navigation.viewControllers.first as? FolderViewController)?.folder === Store.shared.rootFolder)
        #expect((playerNavigation.viewControllers.first as? PlayViewController)?.recording === demo)
        withKnownIssue("The second folder of the stack was not saved (same restoration path)") {
            #expect(navigation.viewControllers.count == 2)
            #expect((navigation.viewControllers.last as? FolderViewController)?.folder === music)
        }
        try journal.close()
    }
}
