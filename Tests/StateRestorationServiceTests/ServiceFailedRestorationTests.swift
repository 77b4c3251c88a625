import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

@testable import StateRestorationService

/// A service that could not restore its saved state at start (the disk was full, so its
/// restoration's first marker could not be written) saves nothing until restoring succeeds: its
/// empty start never replaces the acknowledged state, through a pass the app asks for, the
/// recovery's catch-up pass or the final pass at shutdown.
@MainActor
@Suite(.timeLimit(.minutes(10)))
struct ServiceFailedRestorationTests {
    typealias Tally = ServiceRecoveryTests.Tally
    typealias Delegate = ServiceRecoveryTests.Delegate

    let directory = TemporaryDirectory()
    let fileSystem = FaultInjectingFileSystem()
    let delegate = Delegate()
    var path: String { directory.appending("store") }

    func manager(_ journal: Journal) -> RestorationManager {
        let manager = RestorationManager(
            journal: journal, configuration: RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "server"))
        manager.delegate = delegate
        return manager
    }

    /// The values the store's latest state holds for `count` tallies, read beside the writer.
    func savedValues(_ count: Int) throws -> [Int] {
        let entries = try JournalReader(at: URL(fileURLWithPath: path)).state().entries
        return try (0..<count).map { index in
            let bytes = try #require(entries[RestorationPath("T\(index)")])
            guard case .int(let value)? = try RestorableEntry(decoding: bytes).values["value"] else { return -1 }
            return Int(value)
        }
    }

    @Test(arguments: [false, true])
    func aFailedRestorationAtStartIsRetriedBeforeAnyPassSavesAndNothingAcknowledgedIsLost(finalPassOnly: Bool)
        async throws
    {
        do {
            let journal = try Journal.open(
                path: path, options: JournalOptions(durability: .everyCommit), fileSystem: fileSystem)
            let tallies = (0..<4).map { Tally("T\($0)", value: 10 + $0) }
            try manager(journal).preserveState(roots: tallies)
            try journal.close()
        }
        let acknowledged = [10, 11, 12, 13]
        let journal = try Journal.open(
            path: path, options: JournalOptions(durability: .everyCommit), fileSystem: fileSystem)
        // The disk is full: the restoration's first marker cannot be written.
        fileSystem.arm(FaultPlan(at: 1, of: [.write], fault: .enospc, persistent: true))
        let tallies = (0..<4).map { Tally("T\($0)") }
        let service = StateRestorationService(
            manager: manager(journal), roots: { tallies },
            configuration: .init(coalescingDelay: .seconds(3600), fullPassInterval: nil))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            let report = await service.waitUntilRestored()
            #expect(report == nil)
            #expect(service.passes.unrestored == [nil])
            #expect(tallies.map(\.value) == [0, 0, 0, 0])
            if !finalPassOnly {
                // Still full: the pass saves nothing.
                await #expect(throws: RestorationError.self) { try await service.preserve() }
                #expect(try savedValues(4) == acknowledged)
            }
            // The disk is freed: the next pass restores first, then saves.
            fileSystem.arm(nil)
            if !finalPassOnly {
                try await service.preserve()
                #expect(tallies.map(\.value) == acknowledged)
                #expect(service.passes.unrestored.isEmpty)
            }
            group.cancelAll()
            try await group.waitForAll()
        }
        try journal.close()
        #expect(try savedValues(4) == acknowledged)
    }
}
