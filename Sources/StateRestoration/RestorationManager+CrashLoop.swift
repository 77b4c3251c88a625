import Foundation
import Logging
import StateJournal

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How the manager tells a restoration that crashed from one that was killed from outside.
///
/// After its `restorationBegan` marker, a restoration arms the journal's crash note
/// (`Journal.armCrashNote(_:)`) for as long as the app's restoration code runs (the decode pass,
/// the finish pass, `didDecodeRestorableState`). A crash signal there leaves the note, which the
/// next restoration records as a `restorationFailed` marker before it chooses what to restore. A
/// pass that returns with the restoration held open commits a `restorationHeld` marker. Only those
/// two count toward a crash loop (``CrashLoopGuard``): a process killed while it restores leaves an
/// unfinished `restorationBegan` marker and nothing else, and restores the same state again.
extension RestorationManager {
    /// The crash note's text for a restoration: its kind, its token (``EpochMetadataKey/restorationToken``),
    /// the epoch it restores and its scene's identifier (empty for the default scene), separated by tabs.
    static func crashNoteText(token: String, restoring: UInt64, scene: SceneSession?) -> String {
        "restoration\t\(token)\t\(restoring)\t\(scene?.persistentIdentifier ?? "")"
    }

    /// The restoration a crash note names, or `nil` when the note is not a restoration's.
    static func parseCrashNote(_ text: String) -> (token: String, restoring: UInt64, scene: SceneSession?)? {
        let fields = text.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count == 4, fields[0] == "restoration", UInt64(fields[1], radix: 16) != nil,
            let restoring = UInt64(fields[2])
        else { return nil }
        let token = String(fields[1])
        guard !fields[3].isEmpty else { return (token, restoring, nil) }
        guard let scene = SceneSession(persistentIdentifier: String(fields[3])) else { return nil }
        return (token, restoring, scene)
    }

    /// The crash-loop fallback in force: the one a service set, or the configuration's.
    var effectiveCrashLoopFallback: CrashLoopFallback { crashLoopFallbackOverride ?? configuration.crashLoopFallback }

    /// Records the restoration the previous process crashed in, as the store's crash note says, as a
    /// `restorationFailed` marker (with the scene's bookkeeping), logs it at error, and removes the
    /// note. Does nothing without a note.
    func recordCrashedRestoration() throws {
        guard let note = try journal.crashNote() else { return }
        guard let signal = note.signal, let crashed = Self.parseCrashNote(note.text) else {
            // Armed and never written, or not a restoration's: nothing crashed in a restoration.
            try journal.clearCrashNote()
            return
        }
        let signalName = Self.signalName(signal)
        let previous = activeScene
        activate(crashed.scene)
        defer { activate(previous) }
        var metadata = archiveMetadata(.restorationFailed)
        metadata[EpochMetadataKey.restoringEpoch] = String(crashed.restoring)
        metadata[EpochMetadataKey.restorationToken] = crashed.token
        metadata[EpochMetadataKey.crashSignal] = signalName
        // How many failed in a row with it: its `restorationBegan` marker says how many before.
        let began = try journal.history().last { $0.metadata[EpochMetadataKey.restorationToken] == crashed.token }
        let before = began?.metadata[EpochMetadataKey.unfinishedAttempts].flatMap(Int.init) ?? 0
        metadata[EpochMetadataKey.unfinishedAttempts] = String(before + 1)
        try journal.commit(failureBookkeeping(scene: crashed.scene, restoring: crashed.restoring), metadata: metadata)
        try journal.clearCrashNote()
        configuration.logger.error(
            """
            The previous launch crashed while it restored the saved state (in the app's decode or finish pass); \
            restoring that state again counts toward a crash loop
            """,
            metadata: [
                "restoring_epoch": "\(crashed.restoring)", "signal": "\(signalName)",
                "scene": "\(crashed.scene?.persistentIdentifier ?? "default")",
            ])
    }

    /// The bookkeeping entry of a failed restoration of `scene`: its attempts so far, one more. Empty
    /// for the default scene, whose markers alone count.
    func failureBookkeeping(scene: SceneSession?, restoring: UInt64) -> [JournalChange] {
        guard let scene else { return [] }
        let earlier = sceneAttempts[scene].flatMap { $0.epoch == restoring ? $0 : nil }
        let recorded = CrashLoopGuard.RecordedAttempts(
            epoch: restoring, attempts: (earlier?.attempts ?? 0) + 1, restoredLatest: earlier?.restoredLatest ?? true)
        sceneAttempts[scene] = recorded
        recordedSessions.insert(scene)
        return [.put(scene.basePath, Self.encodeAttempts(recorded))]
    }

    /// Arms the crash note for a restoration of `restoring` and returns the token its markers carry
    /// (``EpochMetadataKey/restorationToken``); `nil`, logged, when it cannot be armed (the
    /// restoration then counts as failed unless it completes, as before crash notes).
    func armCrashNote(restoring: UInt64, scene: SceneSession?) -> String? {
        let token = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        do {
            try journal.armCrashNote(Self.crashNoteText(token: token, restoring: restoring, scene: scene))
            return token
        } catch {
            configuration.logger.warning(
                """
                Could not arm the crash note for this restoration, so a restoration that does not complete counts as \
                crashed, even when the process was killed from outside
                """,
                metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// The conventional name of a crash signal, such as `SIGSEGV`.
    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: "SIGSEGV"
        case SIGBUS: "SIGBUS"
        case SIGILL: "SIGILL"
        case SIGTRAP: "SIGTRAP"
        case SIGABRT: "SIGABRT"
        case SIGFPE: "SIGFPE"
        default: "signal \(signal)"
        }
    }
}
