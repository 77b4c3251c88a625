import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

@testable import StateRestorationService

/// The service heals by itself: a sync fails, the disk heals, and the service reopens the journal,
/// saves the live objects again and acknowledges saves again, with no restart; nothing is
/// acknowledged during the fault, and nothing acknowledged is lost. The recovery waits on a clock
/// the test advances.
@MainActor
@Suite(.timeLimit(.minutes(10)))
struct ServiceRecoveryTests {
    /// A controller holding one number.
    final class Tally: RestorableController {
        let restorationIdentifier: String?
        var value: Int

        init(_ identifier: String, value: Int = 0) {
            restorationIdentifier = identifier
            self.value = value
        }

        func encodeRestorableState(with coder: RestorationCoder) throws { try coder.encode(value, forKey: "value") }
        func decodeRestorableState(with coder: RestorationCoder) throws { value = try coder.decodeInt(forKey: "value") }
    }

    final class Delegate: ApplicationRestorationDelegate {
        func shouldSaveApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func shouldRestoreApplicationState(_ coder: RestorationCoder) -> Bool { true }
        func controller(withRestorationIdentifierPath identifierComponents: [String], coder: RestorationCoder)
            -> (any RestorableController)?
        { nil }
    }

    let directory = TemporaryDirectory()
    let fileSystem = FaultInjectingFileSystem(dropsPagesOnFailedSync: true)
    let clock = ManualClock()
    let delegate = Delegate()
    let tallies = (0..<4).map { Tally("T\($0)") }

    var path: String { directory.appending("store") }

    func manager(_ journal: Journal) -> RestorationManager {
        var configuration = RestorationConfiguration(bundleVersion: "1", interfaceIdiom: "server")
        configuration.recovery = StoreRecoveryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(4), clock: clock)
        let manager = RestorationManager(journal: journal, configuration: configuration)
        manager.delegate = delegate
        return manager
    }

    func change(_ service: StateRestorationService, to base: Int) {
        for (index, tally) in tallies.enumerated() {
            tally.value = base + index
            service.invalidate(tally)
        }
    }

    /// The values a restore from a power-cut image of the store gives.
    func restoredAfterPowerCut() throws -> [Int] {
        let image = directory.appending("image-\(UUID())")
        try fileSystem.writePowerLossImage(of: path, to: image)
        let journal = try Journal.open(at: URL(fileURLWithPath: image), options: JournalOptions(durability: .none))
        defer { try? journal.close() }
        let manager = manager(journal)
        let restored = (0..<tallies.count).map { Tally("T\($0)", value: -1) }
        for tally in restored {
            manager.registerObject(forStateRestoration: tally, restorationIdentifier: tally.restorationIdentifier!)
        }
        try manager.restoreState(roots: [])
        return restored.map(\.value)
    }

    /// Waits, without blocking the main actor, until `condition` holds.
    func waitUntil(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(2)) }
    }

    @Test func theServiceAcknowledgesAgainAfterTheDiskHealsWithoutARestart() async throws {
        let journal = try Journal.open(
            path: path, options: JournalOptions(durability: .everyCommit, compaction: .manual), fileSystem: fileSystem)
        let manager = manager(journal)
        for tally in tallies {
            manager.registerObject(forStateRestoration: tally, restorationIdentifier: tally.restorationIdentifier!)
        }
        let service = StateRestorationService(
            manager: manager, roots: { [] },
            configuration: .init(coalescingDelay: .seconds(3600), fullPassInterval: nil, restoresAtStart: false))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            _ = await service.waitUntilRestored()
            change(service, to: 10)
            try await service.preserve()
            var acknowledged = tallies.map(\.value)
            #expect(service.health.isHealthy)

            fileSystem.arm(FaultPlan(at: 1, of: IOCallKind.syncs, fault: .eio, persistent: true))
            for round in 1...30 {
                change(service, to: 100 + round * 10)
                if (try? await service.preserve()) != nil {
                    acknowledged = tallies.map(\.value)
                    Issue.record("a save was acknowledged during the fault, round \(round)")
                }
                #expect(!service.health.isHealthy)
                if round % 10 == 0 { clock.advance(by: .seconds(5)) }
            }
            // One recovery task at most, and no callers queued, however long the outage.
            #expect(service.passes.queuedCallerCount == 0)
            #expect(clock.sleeperCount <= 1)

            fileSystem.arm(nil)
            change(service, to: 1000)
            // The service's recovery task sleeps on the clock until the next attempt.
            try await waitUntil { clock.sleeperCount == 1 || service.health.isHealthy }
            clock.advance(by: .seconds(5))
            try await service.waitUntilHealthy()
            #expect(service.health.isHealthy)
            // The catch-up pass saved the change made while the store was unavailable.
            #expect(try restoredAfterPowerCut() == tallies.map(\.value))

            change(service, to: 2000)
            try await service.preserve()
            acknowledged = tallies.map(\.value)
            #expect(try restoredAfterPowerCut() == acknowledged)
            group.cancelAll()
            try await group.waitForAll()
        }
        try journal.close()
    }

    @Test func aServiceUnderRandomFaultWindowsAcknowledgesNothingRefusedAndKeepsDescriptorsFlat() async throws {
        let journal = try Journal.open(
            path: path, options: JournalOptions(durability: .everyCommit, compaction: .manual), fileSystem: fileSystem)
        let manager = manager(journal)
        for tally in tallies {
            manager.registerObject(forStateRestoration: tally, restorationIdentifier: tally.restorationIdentifier!)
        }
        let service = StateRestorationService(
            manager: manager, roots: { [] },
            configuration: .init(coalescingDelay: .seconds(3600), fullPassInterval: nil, restoresAtStart: false))
        var random = SplitMix64(seed: 27)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            _ = await service.waitUntilRestored()
            change(service, to: 0)
            try await service.preserve()
            let descriptors = fileSystem.openDescriptorCount
            var faulty = false
            var windows = 0
            var acknowledged = 0
            for round in 1...300 {
                if round % 15 == 0 {
                    faulty.toggle()
                    let kinds: [Set<IOCallKind>?] = [IOCallKind.syncs, [.write], nil]
                    let fault: InjectedFault = random.next() % 2 == 0 ? .eio : .enospc
                    let plan = FaultPlan(
                        at: 1, of: kinds[Int(random.next() % 3)], fault: fault, persistent: true)
                    fileSystem.arm(faulty ? plan : nil)
                    if faulty { windows += 1 }
                }
                change(service, to: round * 10)
                let saved = (try? await service.preserve()) != nil
                if saved { acknowledged += 1 }
                #expect(!(saved && faulty), "round \(round): a save was acknowledged while the disk refused it")
                clock.advance(by: .milliseconds(Int(random.next() % 1500)))
                await Task.yield()
                #expect(service.passes.queuedCallerCount == 0)
                #expect(clock.sleeperCount <= 1)
                #expect(fileSystem.openDescriptorCount <= descriptors + 1, "round \(round)")
            }
            fileSystem.arm(nil)
            change(service, to: 10_000)
            while !service.health.isHealthy {
                clock.advance(by: .seconds(5))
                try await Task.sleep(for: .milliseconds(2))
                _ = try? await service.preserve()
            }
            try await service.preserve()
            #expect(try restoredAfterPowerCut() == tallies.map(\.value))
            #expect(windows == 10)
            #expect(acknowledged > 50)
            #expect(fileSystem.openDescriptorCount == descriptors)
            group.cancelAll()
            try await group.waitForAll()
        }
        try journal.close()
    }

    @Test func theFinalPassAtShutdownRecoversWithoutWaitingForTheBackoff() async throws {
        let journal = try Journal.open(
            path: path, options: JournalOptions(durability: .everyCommit, compaction: .manual), fileSystem: fileSystem)
        let manager = manager(journal)
        for tally in tallies {
            manager.registerObject(forStateRestoration: tally, restorationIdentifier: tally.restorationIdentifier!)
        }
        let service = StateRestorationService(
            manager: manager, roots: { [] },
            configuration: .init(coalescingDelay: .seconds(3600), fullPassInterval: nil, restoresAtStart: false))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            _ = await service.waitUntilRestored()
            change(service, to: 10)
            try await service.preserve()
            fileSystem.arm(FaultPlan(at: 1, of: IOCallKind.syncs, fault: .eio, persistent: true))
            change(service, to: 20)
            await #expect(throws: (any Error).self) { try await service.preserve() }
            #expect(!service.health.isHealthy)
            fileSystem.arm(nil)
            change(service, to: 30)
            // The clock is never advanced: only the final pass can recover, and it does.
            group.cancelAll()
            try await group.waitForAll()
        }
        #expect(service.health.isHealthy)
        #expect(try restoredAfterPowerCut() == tallies.map(\.value))
        try journal.close()
    }
}
