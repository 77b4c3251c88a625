import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// What a shipper that lost its lease, and someone who can write the bucket, can no longer do to
    /// the replica's history.
    @Suite struct HistoryAttackTests {
        @Test func aShipperSendsNoGenerationAgainOnceItsLeaseMayHaveRunOut() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "deadline")
            let directory = try temporaryDirectory("deadline")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            defer { try? journal.close() }
            try commit(journal, count: 3)
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                // A client that would retry for about twenty seconds.
                let retry = RetryPolicy(attempts: 400, baseDelay: .milliseconds(50), maximumDelay: .milliseconds(50))
                let shipper = ReplicationShipper(
                    store: storeURL, to: location, configuration: proxy.configuration(for: gateway, retry: retry),
                    options: leaseOptions(lease: .seconds(2), host: "primary"))
                try await shipper.shipOnce()
                try commit(journal, count: 2, marker: "cut off")
                try await proxy.zero()
                try await proxy.set(.dropRequests(probability: 1, seed: 1))
                await #expect(throws: ReplicationError.self) { try await shipper.shipOnce() }
                // The lease is valid for 1.6 s after its last renewal: the generation is sent at
                // most about that long, a few tens of attempts, never the policy's 400.
                let puts = try await proxy.counts().requests.filter {
                    $0.method == "PUT" && $0.target.contains("generations/")
                }
                #expect(puts.count < 100, "\(puts.count) attempts to send the generation")
            }
        }

        @Test func aFollowerRefusesAGenerationRenumberedToCutItsCopyBack() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "rollback")
            let directory = try temporaryDirectory("rollback")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            defer { try? journal.close() }
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            try commit(journal, count: 3)
            try await shipper.shipOnce()
            try commit(journal, count: 20)
            let shipped = try await shipper.shipOnce()
            let follower = ReplicaFollower(
                from: location, into: directory.appendingPathComponent("follower"),
                configuration: gateway.configuration())
            try await follower.followOnce()
            #expect(await follower.appliedEpoch == shipped.lastEpoch)
            // Someone who can write the bucket copies the first generation, with its three epochs, to
            // the next number.
            let generations = try await storedGenerations(location, gateway: gateway)
            var renumbered = try #require(generations.first)
            renumbered.generation = try #require(shipped.generation) + 1
            try await plantGeneration(renumbered, at: location, client: gateway.client())
            await #expect {
                try await follower.followOnce()
            } throws: { error in
                (error as? ReplicationError)?.code == .diverged
            }
            #expect(await follower.appliedEpoch == shipped.lastEpoch, "the follower cut its copy back")
            let state = try JournalReader(at: directory.appendingPathComponent("follower")).state()
            #expect(state.epoch?.epoch == shipped.lastEpoch)
        }

        @Test func aSecondReplicateOfTheSameStoreOnTheSameHostIsRefusedAndTheFirstShipsOn() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "twice")
            let directory = try temporaryDirectory("twice")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            defer { try? journal.close() }
            try commit(journal, count: 3)
            let arguments = ["replicate", storeURL.path, "--to", "s3://\(bucket)/twice", "--interval", "0.2"]
            let first = try startTool(arguments, environment: gateway.childEnvironment, logs: directory, name: "first")
            defer { if first.isRunning { first.terminate() } }
            try await eventually("the first shipped") {
                !(try await storedGenerations(location, gateway: gateway)).isEmpty
            }
            let second = try await runTool(arguments + ["--take-over"], environment: gateway.childEnvironment)
            #expect(second.status == 75, "\(second.error)")
            #expect(second.error.contains("runs on this host"), "\(second.error)")
            // The first was not fenced: it ships what is committed next.
            let next = try commit(journal, count: 2)
            try await eventually("the first shipped the next commits") {
                try await storedGenerations(location, gateway: gateway).last?.lastEpoch == next.last
            }
            #expect(first.isRunning)
            #expect(Set(try await storedGenerations(location, gateway: gateway).compactMap(\.term)) == [1])
        }
    }
}
