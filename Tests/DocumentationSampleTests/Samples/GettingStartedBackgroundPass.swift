// swift-format-ignore-file
// The sample of passes off the main actor in Getting Started (StateRestoration.docc/GettingStarted.md).
// This file imports exactly what the sample imports.
// It keeps the document's formatting, which swift-format would change.
import StateJournal
import StateRestoration

// sample: GettingStarted.md, a pass that frees the main actor while the journal syncs
final class Editor: RestorableController {
    var cursor = 0
    var restorationIdentifier: String? { "Editor" }
    func encodeRestorableState(with coder: RestorationCoder) throws { coder.encode(cursor, forKey: "cursor") }
    func decodeRestorableState(with coder: RestorationCoder) throws { cursor = try coder.decodeInt(forKey: "cursor") }
}

@MainActor
func saveAfterEdit(_ editor: Editor, manager: RestorationManager) async throws {
    editor.cursor += 1
    manager.invalidateRestorableState(for: editor)
    // The main actor is held while the editor encodes, not while the disk syncs.
    let report = try await manager.preserveStateInBackground(roots: [editor])
    if let epoch = report.epoch { print("saved as epoch \(epoch.epoch)") }
}
// end sample
