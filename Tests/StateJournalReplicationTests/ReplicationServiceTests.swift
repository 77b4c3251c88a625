import Foundation
import ServiceLifecycle
import ServiceLifecycleTestKit
import StateJournal
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// The in-process service.
    @Suite struct ReplicationServiceTests {
        @Test func gracefulShutdownShipsEveryEpochCommittedBeforeItThenReturns() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "service")
            let directory = try temporaryDirectory("service")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            // A long interval: only the pass at shutdown can ship the last commits.
            let service = ReplicationService(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: ReplicationOptions(interval: .seconds(3600)))
            try commit(journal, count: 3)
            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await service.run() }
                    try await Task.sleep(for: .milliseconds(500))
                    try commit(journal, count: 4)
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: directory.appendingPathComponent("restored"))
            #expect(try report.epoch.epoch == journal.history().last!.epoch)
            try journal.close()
        }
    }
}
