import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif

extension GatewayTests {
    /// `statejournal follow` as a user runs it.
    @Suite struct FollowCommandTests {
        @Test func followKeepsACopyUpToDateUntilSIGTERMAndExitsZero() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let directory = try temporaryDirectory("follow-command")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let copy = directory.appendingPathComponent("copy")
            let journal = try Journal.open(at: storeURL)
            let location = S3Location(bucket: bucket, prefix: "cli")
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            try commit(journal, count: 5)
            try await shipper.shipOnce()
            let follower = try startTool(
                ["follow", "s3://\(bucket)/cli", "--into", copy.path, "--interval", "0.2"],
                environment: gateway.childEnvironment, logs: directory, name: "follow")
            try commit(journal, count: 5)
            try await shipper.shipOnce()
            // The copy reaches the primary's last epoch (polled: no timing is asserted).
            let last = try journal.history().last!.epoch
            var reached: UInt64?
            for _ in 0..<600 where reached != last {
                try await Task.sleep(for: .milliseconds(100))
                reached = try? JournalReader(at: copy).state().epoch?.epoch
            }
            #expect(reached == last)
            // While it follows, nothing opens the copy for writing.
            #expect(throws: JournalError.self) { try Journal.open(at: copy) }
            kill(follower.processIdentifier, SIGTERM)
            #expect(await waitForExit(follower) == 0)
            let log = try String(contentsOf: directory.appendingPathComponent("follow.err"), encoding: .utf8)
            #expect(log.contains("applied generation"), "\(log)")
            #expect(!log.contains(gateway.credentials.secretAccessKey))
            #expect(try JournalReader(at: copy).state().entries == journal.state().entries)
            #expect(StoreInspector.verify(copy).status == .clean)
            // The lock went with the process.
            try Journal.open(at: copy).close()

            // A directory holding another store is refused: a data error, one sentence.
            let other = directory.appendingPathComponent("other")
            try Journal.open(at: other).close()
            let refused = try await runTool(
                ["follow", "s3://\(bucket)/cli", "--into", other.path], environment: gateway.childEnvironment)
            #expect(refused.status == 65, "\(refused.error)")
            #expect(refused.error.contains("another store"), "\(refused.error)")
            try journal.close()
        }

        @Test func followWithFailoverOnADivergedStoreExits76AndSetsItAsideOnlyWhenAsked() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let directory = try temporaryDirectory("follow-diverged")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let copy = directory.appendingPathComponent("copy")
            let journal = try Journal.open(at: storeURL)
            defer { try? journal.close() }
            let location = S3Location(bucket: bucket, prefix: "cli")
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            try commit(journal, count: 5)
            try await shipper.shipOnce()
            let follower = ReplicaFollower(from: location, into: copy, configuration: gateway.configuration())
            try await follower.followOnce()
            await follower.close()
            // The copy commits epochs of its own, as a fenced primary's store holds them.
            let writer = try Journal.open(at: copy)
            let local = try commit(writer, count: 2, marker: "own")
            try writer.close()

            let refused = try await runTool(
                ["follow", "s3://\(bucket)/cli", "--into", copy.path, "--failover", "--lease-seconds", "1"],
                environment: gateway.childEnvironment)
            #expect(refused.status == 76, "\(refused.error)")
            #expect(refused.error.contains("epochs \(local.first!)…\(local.last!)"), "\(refused.error)")
            #expect(try JournalReader(at: copy).state().epoch?.epoch == local.last)

            let asideRun = try startTool(
                ["follow", "s3://\(bucket)/cli", "--into", copy.path, "--set-aside-diverged", "--interval", "0.2"],
                environment: gateway.childEnvironment, logs: directory, name: "aside")
            let last = try journal.history().last!.epoch
            var reached: UInt64?
            for _ in 0..<600 where reached != last {
                try await Task.sleep(for: .milliseconds(100))
                reached = try? JournalReader(at: copy).state().epoch?.epoch
            }
            kill(asideRun.processIdentifier, SIGTERM)
            #expect(await waitForExit(asideRun) == 0)
            #expect(reached == last)
            let asides = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasPrefix("copy.diverged-\(local.last!)-") }
            #expect(asides.count == 1, "\(asides)")
            if let aside = asides.first {
                #expect(
                    try JournalReader(at: directory.appendingPathComponent(aside)).state().epoch?.epoch == local.last)
            }
        }
    }
}
