import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// The lease under network faults: each shipper reaches the gateway through a proxy of its own
    /// that the test cuts or makes drop requests.
    @Suite struct FailoverFaultTests {
        /// Every term's generations are one holder's, and none of an older term is numbered at or
        /// after a newer term's start.
        static func expectOneHolderPerTerm(_ generations: [ReplicaGeneration]) {
            let holders = Dictionary(grouping: generations, by: { $0.term ?? 0 }).mapValues {
                Set($0.compactMap(\.holder))
            }
            #expect(holders.values.allSatisfy { $0.count == 1 }, "\(holders)")
            guard let newest = generations.last else { return }
            #expect(generations.allSatisfy { !$0.isFencedOut(by: newest) })
        }

        @Test func aPartitionedPrimaryIsTakenOverAndFencedWhenThePartitionHeals() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "partition")
            let directory = try temporaryDirectory("partition")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 5)
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let primary = ReplicationShipper(
                    store: storeURL, to: location,
                    configuration: proxy.configuration(for: gateway, retry: RetryPolicy(attempts: 2)),
                    options: leaseOptions(host: "primary"))
                let standby = ReplicationShipper(
                    store: storeURL, to: location, configuration: gateway.configuration(),
                    options: leaseOptions(host: "standby"))
                let primaryRun = Task { try await primary.run() }
                try await eventually("the primary shipped") {
                    try await storedGenerations(location, gateway: gateway).last?.term == 1
                }
                let standbyRun = Task { try await standby.run() }
                try await proxy.set(.cut)
                // Cut off, the primary's lease runs out; the standby takes over in term 2.
                let last = try commit(journal, count: 3, marker: "during the partition")
                try await eventually(timeout: .seconds(30), "the standby shipped the last commit in term 2") {
                    let newest = try await storedGenerations(location, gateway: gateway).last
                    return newest?.term == 2 && newest?.lastEpoch == last.last
                }
                try await proxy.set(.pass)
                // Healed, the primary finds the newer term and stops.
                let outcome = await primaryRun.result
                guard case .failure(let error as ReplicationError) = outcome else {
                    Issue.record("the primary did not stop fenced: \(outcome)")
                    standbyRun.cancel()
                    return
                }
                #expect(error.code == .fenced)
                let after = try commit(journal, count: 2, marker: "after")
                try await eventually("the standby goes on shipping") {
                    try await storedGenerations(location, gateway: gateway).last?.lastEpoch == after.last
                }
                standbyRun.cancel()
                try await standbyRun.value
            }
            let generations = try await storedGenerations(location, gateway: gateway)
            Self.expectOneHolderPerTerm(generations)
            #expect(Set(generations.compactMap(\.term)) == [1, 2])
            try journal.close()
        }

        @Test func renewalsFailingNowAndThenDoNotLetAHealthyPrimaryBeTakenOver() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "flaky")
            let directory = try temporaryDirectory("flaky")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 5)
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let primary = ReplicationShipper(
                    store: storeURL, to: location, configuration: proxy.configuration(for: gateway),
                    options: leaseOptions(lease: .seconds(3), host: "primary"))
                let standby = ReplicationShipper(
                    store: storeURL, to: location, configuration: gateway.configuration(),
                    options: leaseOptions(lease: .seconds(3), host: "standby"))
                let primaryRun = Task { try await primary.run() }
                try await eventually("the primary shipped") {
                    try await storedGenerations(location, gateway: gateway).last?.term == 1
                }
                let standbyRun = Task { try await standby.run() }
                // A third of the primary's requests are reset before they reach the gateway, for
                // five lease durations, while the app commits.
                try await proxy.set(.dropRequests(probability: 0.3, seed: 11))
                for round in 0..<30 {
                    try commit(journal, count: 1, marker: "round \(round)")
                    try await Task.sleep(for: .milliseconds(500))
                }
                let dropped = try await proxy.counts().requests.filter { !$0.forwarded }.count
                try await proxy.set(.pass)
                let last = try commit(journal, count: 1, marker: "last")
                try await eventually("the primary shipped the last commit") {
                    try await storedGenerations(location, gateway: gateway).last?.lastEpoch == last.last
                }
                let generations = try await storedGenerations(location, gateway: gateway)
                #expect(dropped >= 5, "the proxy dropped \(dropped) requests")
                #expect(generations.allSatisfy { $0.term == 1 }, "the standby took over")
                Self.expectOneHolderPerTerm(generations)
                primaryRun.cancel()
                try await primaryRun.value
                standbyRun.cancel()
                try await standbyRun.value
            }
            try journal.close()
        }
    }
}
