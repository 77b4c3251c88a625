import Foundation
import ServiceLifecycle
import ServiceLifecycleTestKit
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

/// A clock whose time moves only when a test moves it, and whose sleepers never wake (only a
/// cancellation ends their sleep): a process so loaded that the lease's renewer and every timer in
/// it are starved while time goes on. Requests still complete, however long they take.
final class StarvedClock: Clock, @unchecked Sendable {
    // @unchecked Sendable: the time is only touched with the lock held.
    typealias Instant = ManualClock.Instant

    private let lock = NSLock()
    private var time = Instant(offset: .zero)

    var now: Instant { lock.withLock { time } }

    var minimumResolution: Duration { .zero }

    /// Moves the clock on by `duration`; no sleeper wakes.
    func advance(by duration: Duration) { lock.withLock { time = time.advanced(by: duration) } }

    /// Returns at once when the clock has reached `deadline`; otherwise sleeps until the task is
    /// cancelled, then throws `CancellationError`.
    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        while now < deadline { try await Task.sleep(for: .seconds(3600)) }
    }
}

extension GatewayTests {
    /// The lease timed on a clock the test moves: renewals, expiry, and a lease that runs out
    /// during a pass, whatever the machine's speed.
    @Suite struct LeaseClockTests {
        @Test func aShipperWhoseLeaseRanOutDuringAPassRenewsItAndWritesThePasssGeneration() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "ran-out")
            let directory = try temporaryDirectory("lease-ran-out")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 3)
            let clock = StarvedClock()
            var options = leaseOptions(lease: .seconds(10), host: "primary")
            options.leaseClock = clock
            let shipper = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: options)
            try await shipper.shipOnce()
            let last = try commit(journal, count: 3, marker: "during the pass")
            // The pass's upload outlasts the lease, and the renewer, starved, never renewed it.
            await shipper.beforeWritingGeneration { clock.advance(by: .seconds(11)) }
            let report = try await shipper.shipOnce()
            #expect(report.wroteGeneration)
            #expect(report.lastEpoch == last.last)
            #expect(await shipper.holdsLease)
            // Renewed, not taken again: the pass's generation is in the same term.
            let generations = try await storedGenerations(location, gateway: gateway)
            #expect(generations.map(\.term) == [1, 1])
            let restored = directory.appendingPathComponent("restored")
            let restore = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: restored)
            #expect(restore.epoch.epoch == last.last)
            #expect(try JournalReader(at: restored).state().entries == journal.state().entries)
            try journal.close()
        }

        @Test func aShipperOnAnotherHostTakesOverASilentLeaseOnlyOnceItStayedUnchangedForItsDurationAndAFifth()
            async throws
        {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "silent")
            let directory = try temporaryDirectory("lease-silent")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 3)
            // A primary that never renews (its renewer is starved), as if it were killed.
            var primaryOptions = leaseOptions(lease: .seconds(10), host: "primary")
            primaryOptions.leaseClock = StarvedClock()
            try await ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: primaryOptions
            ).shipOnce()
            let last = try commit(journal, count: 2)
            let clock = ManualClock()
            var standbyOptions = leaseOptions(lease: .seconds(10), host: "standby")
            standbyOptions.leaseClock = clock
            let standby = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: standbyOptions)
            let taking = Task { try await standby.shipOnce() }
            // Each time the standby waits (a second at a time), the clock moves on by a second.
            var waited = Duration.zero
            while await !standby.holdsLease {
                let deadline = ContinuousClock.now + .seconds(600)
                while clock.sleeperCount == 0, await !standby.holdsLease {
                    guard ContinuousClock.now < deadline else {
                        Issue.record("the standby neither waited nor took the lease")
                        taking.cancel()
                        return
                    }
                    try await Task.sleep(for: .milliseconds(5))
                }
                if await standby.holdsLease { break }
                clock.advance(by: .seconds(1))
                waited += .seconds(1)
                #expect(waited <= .seconds(13), "the standby did not take the lease over")
                if waited > .seconds(13) {
                    taking.cancel()
                    return
                }
            }
            // It first saw the lease at 0 s: it took over at 10 s, the lease's duration, not before.
            #expect(waited == .seconds(10))
            let report = try await taking.value
            #expect(report.lastEpoch == last.last)
            #expect(try await storedGenerations(location, gateway: gateway).map(\.term) == [1, 2])
            try journal.close()
        }

        @Test func aStoppedServiceGivesTheLeaseUpSoASecondShipperTakesOverWithoutWaitingForItToExpire()
            async throws
        {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "stopped")
            let directory = try temporaryDirectory("lease-stopped")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 3)
            // Time never moves on either shipper's clock: the lease cannot expire, so only a lease
            // given up can be taken.
            var firstOptions = leaseOptions(lease: .seconds(10), host: "host-a")
            firstOptions.leaseClock = StarvedClock()
            let service = ReplicationService(
                shipper: ReplicationShipper(
                    store: storeURL, to: location, configuration: gateway.configuration(), options: firstOptions))
            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await service.run() }
                    try await eventually("the first shipper wrote a generation") {
                        try await !storedGenerations(location, gateway: gateway).isEmpty
                    }
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
            let last = try commit(journal, count: 2, marker: "after the stop")
            var secondOptions = leaseOptions(lease: .seconds(10), host: "host-b")
            secondOptions.leaseClock = StarvedClock()
            let second = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(), options: secondOptions)
            let taking = Task { try await second.shipOnce() }
            try await eventually(timeout: .seconds(600), "the second shipper took the lease and shipped") {
                try await storedGenerations(location, gateway: gateway).last?.term == 2
            }
            taking.cancel()
            let report = try await taking.value
            #expect(report.lastEpoch == last.last)
            #expect(await second.holdsLease)
            try journal.close()
        }
    }
}
