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
                try await eventually(timeout: .seconds(600), "the standby shipped the last commit in term 2") {
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

        /// A primary's keeper that reaches the gateway through `proxy` and a standby's that reaches
        /// it directly, both timed on `clock`; the primary holds the lease.
        static func keepers(
            gateway: Gateway, proxy: FaultProxy, clock: StarvedClock, duration: Duration
        ) async throws -> (primary: LeaseKeeper, standby: LeaseKeeper) {
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "keepers")
            // A dropped request is sent once more, soon: a renewal fails when both attempts are dropped.
            let retry = RetryPolicy(attempts: 2, baseDelay: .milliseconds(10))
            let logger = ReplicationOptions().logger
            let primary = LeaseKeeper(
                replica: Replica(
                    client: S3Client(configuration: proxy.configuration(for: gateway, retry: retry)),
                    location: location, keyring: nil),
                duration: duration, holder: String(repeating: "a", count: 32), logger: logger, clock: clock)
            let standby = LeaseKeeper(
                replica: Replica(client: gateway.client(retry: retry), location: location, keyring: nil),
                duration: duration, holder: String(repeating: "b", count: 32), logger: logger, clock: clock)
            #expect(try await primary.tryAcquire(chainTerm: 0, force: false).held)
            // A holder that ships nothing rests its lease after its duration; these tests are of
            // renewals, so it keeps renewing.
            await primary.setRestsWhenIdle(false)
            return (primary, standby)
        }

        /// Time moves only between steps of an eighth of the lease (the renewer's period): after
        /// each, the primary renews when due, as its renewer would, and the standby tries to take
        /// over, as a waiting shipper would. A request takes as long as it takes without the clock
        /// moving, so how fast the machine runs cannot decide the outcome.
        @Test func renewalsFailingNowAndThenDoNotLetAHealthyPrimaryBeTakenOver() async throws {
            let gateway = try Gateway.required()
            let duration = Duration.seconds(3)
            let clock = StarvedClock()
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let (primary, standby) = try await Self.keepers(
                    gateway: gateway, proxy: proxy, clock: clock, duration: duration)
                // A third of the primary's requests are reset before they reach the gateway, for
                // five lease durations.
                try await proxy.set(.dropRequests(probability: 0.3, seed: 11))
                var renewals = 0
                for step in 1...40 {
                    clock.advance(by: duration / 8)
                    if case .renewed = await primary.renewIfDue() { renewals += 1 }
                    #expect(await primary.isValid, "the primary's lease ran out at step \(step)")
                    let (held, _) = try await standby.tryAcquire(chainTerm: 0, force: false)
                    #expect(!held, "the standby took over at step \(step)")
                    if held { break }
                }
                let dropped = try await proxy.counts().requests.filter { !$0.forwarded }.count
                #expect(dropped >= 5, "the proxy dropped \(dropped) requests")
                #expect(renewals >= 10, "the primary renewed \(renewals) times")
            }
        }

        /// A standby that applied a generation the holder had just written does not read the lease
        /// again at once; the holder's silence then counts from that generation, as when a read of
        /// the lease finds the chain moved, and not from the lease's last change.
        @Test func aChainMoveSeenWithoutReadingTheLeaseStartsTheHoldersSilenceAgain() async throws {
            let gateway = try Gateway.required()
            let duration = Duration.seconds(3)
            for notesTheMove in [false, true] {
                let clock = StarvedClock()
                try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                    let (_, standby) = try await Self.keepers(
                        gateway: gateway, proxy: proxy, clock: clock, duration: duration)
                    // The holder ships and writes its lease no more: its generations renew it.
                    #expect(try await !standby.tryAcquire(chainTerm: 1, chainHead: 1, force: false).held)
                    clock.advance(by: .seconds(2))
                    if notesTheMove { await standby.observeChain(movedTo: 2) }
                    clock.advance(by: .seconds(2))
                    #expect(try await !standby.tryAcquire(chainTerm: 1, chainHead: 2, force: false).held)
                    // 3.1 s after the move: expired when the move was noted as it was seen; without
                    // the note, the move counts from the read that found it, 1.1 s ago.
                    clock.advance(by: .milliseconds(1_100))
                    let held = try await standby.tryAcquire(chainTerm: 1, chainHead: 2, force: false).held
                    #expect(held == notesTheMove)
                }
            }
        }

        @Test func aPrimaryCutOffStopsWritingBeforeAStandbyJudgesItsLeaseExpired() async throws {
            let gateway = try Gateway.required()
            let duration = Duration.seconds(3)
            let clock = StarvedClock()
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let (primary, standby) = try await Self.keepers(
                    gateway: gateway, proxy: proxy, clock: clock, duration: duration)
                try await proxy.set(.cut)
                var primaryStopped: Int?
                var standbyTookOver: Int?
                for step in 1...24 {
                    clock.advance(by: duration / 8)
                    _ = await primary.renewIfDue()
                    if primaryStopped == nil, !(await primary.isValid) { primaryStopped = step }
                    if try await standby.tryAcquire(chainTerm: 0, force: false).held {
                        standbyTookOver = step
                        break
                    }
                }
                // The primary stops once four fifths of the lease have passed since it sent its
                // last renewal (at 0 s: step 7, 2.625 s); the standby takes over once the lease has
                // stayed unchanged for the whole of it since the standby first saw it (at step 1,
                // 0.375 s: step 9, 3.375 s), two steps after the primary stopped.
                #expect(primaryStopped == 7)
                #expect(standbyTookOver == 9)
                #expect(await standby.term == 2)
            }
        }
    }
}
