// swift-format-ignore-file
// The sample of "Commits off the caller's thread" in Durability and Recovery
// (StateJournal.docc/DurabilityAndRecovery.md). This file imports exactly what the sample imports.
// It keeps the document's formatting, which swift-format would change.
import Foundation
import StateJournal

// sample: DurabilityAndRecovery.md, a commit that resumes when durable
func saveDraft(_ text: String, in journal: Journal) async throws -> EpochInfo {
    let pending = journal.submit([.put(RestorationPath("Main", "Draft"), Array(text.utf8))])
    // The caller's thread is free here; the committer compresses, writes and syncs.
    return try await pending.value
}
// end sample
