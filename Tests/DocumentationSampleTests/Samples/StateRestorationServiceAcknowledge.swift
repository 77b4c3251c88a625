// swift-format-ignore-file
// The sample of the StateRestorationService catalog (StateRestorationService.docc/StateRestorationService.md).
// This file imports exactly what the sample imports.
// It keeps the document's formatting, which swift-format would change.
import StateJournal
import StateRestoration
import StateRestorationService

// sample: StateRestorationService.md, acknowledge a change once it is durable
/// Acknowledges a change to a client once the epoch holding it is as durable as the policy promises.
@MainActor
func acknowledge(
    _ change: () -> Void, of object: any StateRestoring, through service: StateRestorationService
) async throws -> UInt64? {
    change()
    service.invalidate(object)
    // Holds the main actor only while the object encodes.
    return try await service.preserve()?.epoch
}
// end sample
