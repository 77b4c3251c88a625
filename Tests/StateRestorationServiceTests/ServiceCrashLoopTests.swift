import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

@testable import StateRestorationService

/// A service's state is data: by default the service never falls back to an older state after
/// crashes at start, and an app that wants UIKit's fallback asks for it.
@MainActor
@Suite struct ServiceCrashLoopTests {
    func manager(_ directory: TemporaryDirectory) throws -> RestorationManager {
        let journal = try Journal.open(
            at: URL(fileURLWithPath: directory.appending("store")), options: JournalOptions(durability: .none))
        return RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "server"))
    }

    @Test func aServiceNeverFallsBackUnlessTheAppAsks() throws {
        let directory = TemporaryDirectory()
        let manager = try manager(directory)
        #expect(manager.configuration.crashLoopFallback == .restoreEarlierState)
        _ = StateRestorationService(manager: manager, roots: { [] })
        #expect(manager.crashLoopFallbackOverride == .never)
        var configuration = StateRestorationService.Configuration()
        configuration.crashLoopFallback = .restoreEarlierState
        _ = StateRestorationService(manager: manager, roots: { [] }, configuration: configuration)
        #expect(manager.crashLoopFallbackOverride == .restoreEarlierState)
        try manager.journal.close()
    }
}
