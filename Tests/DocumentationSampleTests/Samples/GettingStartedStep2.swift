// swift-format-ignore-file
// Step 2 of Getting Started (StateRestoration.docc/GettingStarted.md): the app's controller and
// delegate, which steps 3 and 4 use. This file imports exactly what the sample imports.
// It keeps the document's formatting, which swift-format would change.
import StateRestoration

// sample: GettingStarted.md, step 2: say what to save
final class NotesController: RestorableController {
    var restorationIdentifier: String? { "Notes" }
    @Preserved("selectedNote") var selectedNote: String? = nil
    @Preserved("scrollOffset") var scrollOffset = 0.0
}

final class NotesDelegate: ApplicationRestorationDelegate {
    func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
    func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { coder.interfaceIdiom == "desktop" }
}
// end sample
