import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

/// Moves `clock` on by `step` and waits until the lease's renewer of `shipper` has woken and done
/// what was due (a renewal's deadline sleeps on the clock too, so the sleepers do not tell).
/// Gives up after ten minutes.
private func advance(_ clock: ManualClock, by step: Duration, renewerOf shipper: ReplicationShipper) async throws {
    let keeper = try #require(await shipper.lease)
    let before = await keeper.renewerPasses
    clock.advance(by: step)
    let deadline = ContinuousClock.now + .seconds(600)
    while await keeper.renewerPasses == before {
        guard ContinuousClock.now < deadline else {
            Issue.record("the renewer did not wake")
            return
        }
        try await Task.sleep(for: .milliseconds(2))
    }
}

/// A store with three epochs committed and a fresh bucket for its replica, with shippers of it
/// for hosts whose lease is timed on a clock the test moves.
private struct LeaseFixture {
    let gateway: Gateway
    let location: S3Location
    let directory: URL
    let storeURL: URL
    let journal: Journal

    init(_ name: String) async throws {
        gateway = try Gateway.required()
        location = S3Location(bucket: try await gateway.freshBucket(), prefix: name)
        directory = try temporaryDirectory("lease-\(name)")
        storeURL = directory.appendingPathComponent("store")
        journal = try Journal.open(at: storeURL)
        try commit(journal, count: 3)
    }

    /// A shipper of the store on `host`, with a ten-second lease timed on `clock`.
    func shipper(host: String, clock: any Clock<Duration>, idleLease: Duration? = nil) -> ReplicationShipper {
        var options = leaseOptions(lease: .seconds(10), host: host)
        options.leaseClock = clock
        if let idleLease { options.idleLeaseDuration = idleLease }
        return ReplicationShipper(
            store: storeURL, to: location, configuration: gateway.configuration(), options: options)
    }

    /// The lease in the bucket, read as a standby would.
    func lease() async throws -> LeaseDocument {
        let bytes = try #require(
            try await gateway.client().get(bucket: location.bucket, key: location.prefix + LeaseDocument.name))
        let payload = try ObjectEnvelope.open(
            bytes, name: LeaseDocument.name, keyring: nil, acceptsPlaintext: true, storeID: nil, replicaID: nil)
        return try LeaseDocument.decode(payload, key: LeaseDocument.name)
    }

    func close() {
        try? journal.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Moves `clock` on by `step` each time `standby` waits for the lease, until it holds it or
/// `limit` has passed; the time it waited, or `nil` when it did not take the lease.
private func waitedForLease(
    _ standby: ReplicationShipper, clock: ManualClock, step: Duration, limit: Duration
) async throws -> Duration? {
    var waited = Duration.zero
    while true {
        let deadline = ContinuousClock.now + .seconds(600)
        while clock.sleeperCount == 0, await !standby.holdsLease {
            guard ContinuousClock.now < deadline else {
                Issue.record("the standby neither waited nor took the lease")
                return nil
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        if await standby.holdsLease { return waited }
        if waited >= limit { return nil }
        clock.advance(by: step)
        waited += step
    }
}

extension GatewayTests {
    /// What renews a lease, and what an idle holder's lease costs: generations renew it, an idle
    /// holder's lease is dormant when no standby watches and expires after the idle duration when
    /// one does.
    @Suite struct LeaseRenewalTests {
        @Test func aShipperWritingAGenerationEachSecondNeverWritesItsLeaseAndAStandbyWatchingTheChainDoesNotTakeOver()
            async throws
        {
            let fixture = try await LeaseFixture("busy")
            defer { fixture.close() }
            let journal = fixture.journal
            let primaryClock = StarvedClock()
            let primary = fixture.shipper(host: "primary", clock: primaryClock)
            try await primary.shipOnce()
            let standbyClock = ManualClock()
            let standby = fixture.shipper(host: "standby", clock: standbyClock)
            let taking = Task { try await standby.shipOnce() }
            defer { taking.cancel() }
            let before = primary.requestCounts
            // Thirty seconds on both clocks, a generation each second: three times the lease's
            // duration, with no write of the lease.
            for second in 1...30 {
                try commit(journal, count: 2, marker: "second \(second)")
                primaryClock.advance(by: .seconds(1))
                #expect(try await primary.shipOnce().wroteGeneration)
                _ = try await waitedForLease(standby, clock: standbyClock, step: .seconds(1), limit: .zero)
                standbyClock.advance(by: .seconds(1))
            }
            let sent = primary.requestCounts.since(before)
            #expect(sent.puts == 30, "a PUT a generation, none for the lease: \(sent)")
            #expect(sent.total == 30, "\(sent)")
            #expect(try await fixture.lease().renewal == 0)
            #expect(await !standby.holdsLease)
            #expect(await primary.holdsLease)
            // The primary stops: neither the lease nor the chain changes, and the standby takes
            // over once it saw them unchanged for the lease's duration.
            let waited = try await waitedForLease(standby, clock: standbyClock, step: .seconds(1), limit: .seconds(20))
            let took = try #require(waited)
            #expect(took >= .seconds(9) && took <= .seconds(11), "took over after \(took)")
            #expect(try await taking.value.wroteGeneration)
        }

        @Test func anIdleShipperWithNoStandbyMakesItsLeaseDormantAndSendsNothingUntilItShipsAgain() async throws {
            let fixture = try await LeaseFixture("dormant")
            defer { fixture.close() }
            let journal = fixture.journal
            let clock = ManualClock()
            let primary = fixture.shipper(host: "primary", clock: clock)
            try await primary.shipOnce()
            let before = primary.requestCounts
            // The renewer wakes every 1.25 s: three renewals in the lease's duration, then, idle,
            // it asks whether a standby watches (a HEAD) and writes the lease as dormant.
            for _ in 0..<8 {
                try await advance(clock, by: .milliseconds(1250), renewerOf: primary)
            }
            let idling = primary.requestCounts.since(before)
            #expect(idling.puts == 4 && idling.heads == 1 && idling.total == 5, "\(idling)")
            let dormant = try await fixture.lease()
            #expect(dormant.dormant == true)
            // Two hours idle: no write, and three looks for a standby, after 10, 30 and 70 minutes.
            let rested = primary.requestCounts
            for _ in 0..<120 {
                try await advance(clock, by: .seconds(60), renewerOf: primary)
            }
            let hours = primary.requestCounts.since(rested)
            #expect(hours.heads == 3 && hours.total == 3, "\(hours)")
            #expect(await primary.holdsLease)

            // A standby does not take a dormant lease over, however long it waits.
            let standbyClock = ManualClock()
            let standby = fixture.shipper(host: "standby", clock: standbyClock)
            let taking = Task { try await standby.shipOnce() }
            defer { taking.cancel() }
            #expect(
                try await waitedForLease(standby, clock: standbyClock, step: .seconds(60), limit: .seconds(3600)) == nil
            )

            // The primary ships again: its generation, then the lease written as active, with
            // the lease's duration.
            try commit(journal, count: 2, marker: "awake")
            let waking = primary.requestCounts
            #expect(try await primary.shipOnce().wroteGeneration)
            try await advance(clock, by: .milliseconds(1250), renewerOf: primary)
            let woke = primary.requestCounts.since(waking)
            #expect(woke.puts == 2, "the generation and the lease: \(woke)")
            let awake = try await fixture.lease()
            #expect(awake.dormant == nil && awake.durationMilliseconds == 10_000)
            // Then it dies: the standby takes over once the lease has been unchanged for its
            // duration.
            let took = try #require(
                try await waitedForLease(standby, clock: standbyClock, step: .seconds(1), limit: .seconds(20)))
            #expect(took >= .seconds(9) && took <= .seconds(11), "took over after \(took)")
            #expect(try await taking.value.wroteGeneration)
        }

        @Test func aDormantShipperHearsOfAStandbyThatCameLateAtItsNextLookAndItsLeaseThenExpires() async throws {
            let fixture = try await LeaseFixture("late")
            defer { fixture.close() }
            let journal = fixture.journal
            let clock = ManualClock()
            let primary = fixture.shipper(host: "primary", clock: clock, idleLease: .seconds(60))
            try await primary.shipOnce()
            for _ in 0..<8 {
                try await advance(clock, by: .milliseconds(1250), renewerOf: primary)
            }
            #expect(try await fixture.lease().dormant == true)
            // A standby comes (a second shipper waiting for the lease marks the replica), and
            // waits a minute and more: the dormant lease does not expire meanwhile.
            let standbyClock = ManualClock()
            let standby = fixture.shipper(host: "standby", clock: standbyClock)
            let taking = Task { try await standby.shipOnce() }
            defer { taking.cancel() }
            #expect(
                try await waitedForLease(standby, clock: standbyClock, step: .seconds(10), limit: .seconds(70)) == nil)
            // The primary's look a minute after it went dormant finds the mark: its lease now lasts
            // the idle duration, and it dies. The standby takes over a minute on.
            for _ in 0..<48 {
                try await advance(clock, by: .milliseconds(1250), renewerOf: primary)
            }
            let idle = try await fixture.lease()
            #expect(idle.dormant == nil && idle.durationMilliseconds == 60_000)
            let took = try #require(
                try await waitedForLease(standby, clock: standbyClock, step: .seconds(1), limit: .seconds(70)))
            #expect(took >= .seconds(60) && took <= .seconds(61), "took over after \(took)")
            #expect(try await taking.value.wroteGeneration)
        }

        @Test func anIdleShipperWatchedByAStandbyKeepsALeaseThatExpiresAfterTheIdleDurationRenewedEveryHalfOfIt()
            async throws
        {
            let fixture = try await LeaseFixture("watched")
            defer { fixture.close() }
            let journal = fixture.journal
            let clock = ManualClock()
            let primary = fixture.shipper(host: "primary", clock: clock, idleLease: .seconds(600))
            try await primary.shipOnce()
            // A standby marks the replica as watched (`follow --failover` does it while it waits).
            let replica = Replica(client: fixture.gateway.client(), location: fixture.location, keyring: nil)
            #expect(await replica.markStandby(logger: ReplicationOptions().logger))
            let before = primary.requestCounts
            // Idle for the lease's duration, then an hour: the lease is written as idle once, then
            // every five minutes.
            for _ in 0..<8 {
                try await advance(clock, by: .milliseconds(1250), renewerOf: primary)
            }
            let idle = try await fixture.lease()
            #expect(idle.dormant == nil && idle.durationMilliseconds == 600_000)
            let rested = primary.requestCounts
            for _ in 0..<60 {
                try await advance(clock, by: .seconds(60), renewerOf: primary)
            }
            let hour = primary.requestCounts.since(rested)
            #expect(hour.puts == 12 && hour.total == 12, "\(hour)")
            #expect(primary.requestCounts.since(before).heads == 1)

            // It dies: a standby takes over once the lease has been unchanged for ten minutes, not
            // before.
            let standbyClock = ManualClock()
            let standby = fixture.shipper(host: "standby", clock: standbyClock)
            let taking = Task { try await standby.shipOnce() }
            defer { taking.cancel() }
            let took = try #require(
                try await waitedForLease(standby, clock: standbyClock, step: .seconds(1), limit: .seconds(620)))
            #expect(took >= .seconds(600) && took <= .seconds(601), "took over after \(took)")
            #expect(try await taking.value.wroteGeneration)
        }
    }
}
