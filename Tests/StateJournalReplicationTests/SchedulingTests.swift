import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

/// When the shipper's loop starts its passes.
@Suite struct PassScheduleTests {
    @Test func theNextPassStartsNinetyTwoHundredthsOfAnIntervalAfterThePreviousOneStarted() {
        let schedule = PassSchedule(interval: .seconds(1))
        // A pass that uploads for 300 ms: the next starts 920 ms after it started, so that a busy
        // store writes at most 3,913 generations an hour.
        #expect(schedule.pause(afterPassThat: .wroteGeneration, took: .milliseconds(300)) == .milliseconds(620))
        #expect(schedule.pause(afterPassThat: .nothingNew, took: .zero) == .milliseconds(920))
        #expect(schedule.pause(afterPassThat: .wroteGeneration, took: .milliseconds(20)) == .milliseconds(900))
    }

    @Test func passesStartAtMostOnceEveryNinetyTwoHundredthsOfAnIntervalHoweverLongTheirUploadsTake() {
        let schedule = PassSchedule(interval: .seconds(1))
        for took in stride(from: 0, through: 5_000, by: 37) {
            let pause = schedule.pause(afterPassThat: .wroteGeneration, took: .milliseconds(took))
            #expect(.milliseconds(took) + pause >= .milliseconds(920))
        }
    }

    @Test func aSlowServerIsGivenATenthOfTheIntervalBetweenPassesAndAFailedPassAWholeInterval() {
        let schedule = PassSchedule(interval: .seconds(1))
        #expect(schedule.pause(afterPassThat: .wroteGeneration, took: .milliseconds(850)) == .milliseconds(100))
        #expect(schedule.pause(afterPassThat: .wroteGeneration, took: .seconds(3)) == .milliseconds(100))
        #expect(schedule.pause(afterPassThat: .failed, took: .seconds(6)) == .seconds(1))
    }
}

extension GatewayTests {
    /// The shipper's loop against the gateway.
    @Suite struct SchedulingTests {
        /// How far behind the replica stays is counted in passes here, not in seconds, which a
        /// loaded machine stretches: the loop's pauses are timed on `ContinuousClock` (the schedule
        /// itself is `PassScheduleTests`' subject), and the lag in seconds is one of the figures
        /// (`ReplicationFigures`).
        @Test(.timeLimit(.minutes(10)))
        func aShipperRunningAtTheDefaultIntervalShipsEveryCommitInOneOfTheNextTwoGenerationsItWrites() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "lag")
            let directory = try temporaryDirectory("lag")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            // Each generation's last epoch, and how many commits had been acknowledged when the
            // shipper said it had written it.
            let acknowledged = Locked(0)
            let written = Locked<[(epoch: UInt64, acknowledged: Int)]>([])
            await shipper.observeGenerations { report in
                let count = acknowledged.withLock { $0 }
                if let epoch = report.lastEpoch { written.withLock { $0.append((epoch, count)) } }
            }
            let loop = Task { try await shipper.run() }
            // The app commits all along, until the shipper has written six generations while it did
            // (however long that takes).
            var committed: [UInt64] = []
            while written.withLock({ $0.count }) < 6 {
                let epoch = try journal.beginEpoch()
                try epoch.put(RestorationPath("Main", "Item-\(committed.count % 9)"), Array("\(UUID())".utf8))
                committed.append(try epoch.commit().epoch)
                acknowledged.withLock { $0 = committed.count }
                try await Task.sleep(for: .milliseconds(5))
            }
            // Then stops, and the shipper ships the rest while it still runs.
            while (written.withLock { $0.last?.epoch } ?? 0) < committed.last! {
                try await Task.sleep(for: .milliseconds(20))
            }
            loop.cancel()
            try await loop.value
            try journal.close()
            let generations = written.withLock { $0 }
            // Generations only move forward.
            #expect(zip(generations, generations.dropFirst()).allSatisfy { $0.epoch <= $1.epoch }, "\(generations)")
            // A commit acknowledged before a pass started is in that pass's generation: so each is in
            // the first generation written after it was acknowledged (when that pass started after
            // it) or in the second (when a pass was under way), never in a later one: the shipper
            // does not wait for the app to stop committing, or pass over a commit it could ship.
            for (index, epoch) in committed.enumerated() {
                let after = generations.filter { $0.acknowledged > index }
                try #require(after.count >= 1, "epoch \(epoch) was committed after the last generation")
                let holding = after.firstIndex { $0.epoch >= epoch }
                #expect(
                    holding != nil && holding! <= 1,
                    "epoch \(epoch) reached generation \(String(describing: holding)) of those written after it: \(after)"
                )
            }
        }
    }
}

/// When a follower polls for the next generation.
@Suite struct FollowerPollScheduleTests {
    /// A schedule that saw generations 1…3 written 900 ms apart by the shipper's clock and each
    /// found by a poll sent 120 ms after its write; returns it and the instant generation 3 was asked for.
    private static func locked(base: ContinuousClock.Instant) -> FollowerPollSchedule {
        var schedule = FollowerPollSchedule(pollInterval: .seconds(1), activePollInterval: .milliseconds(250))
        for number in UInt64(1)...3 {
            let written = 1_000_000 + (number - 1) * 900
            schedule.arrived(
                number: number, writtenMilliseconds: written,
                askedAt: base + .milliseconds(Int64((number - 1) * 900 + 120)), wallClock: written + 120)
        }
        return schedule
    }

    @Test func aFollowerPollsWhenTheNextGenerationIsDueThenAtShortStepsWhileItIsLateThenAsBefore() {
        let base = ContinuousClock.now
        let schedule = Self.locked(base: base)
        #expect(schedule.cadence == .milliseconds(900))
        // Generation 3 was asked for at 1,920 ms: the next is due at 2,700 + 120 ms.
        #expect(schedule.nextDue == base + .milliseconds(2_820))
        #expect(schedule.pause(at: base + .milliseconds(1_950)) == .milliseconds(870))
        // Not there when due: asked again every 50 ms, for half the cadence.
        #expect(schedule.pause(at: base + .milliseconds(2_830)) == FollowerPollSchedule.retryStep)
        #expect(schedule.pause(at: base + .milliseconds(3_260)) == FollowerPollSchedule.retryStep)
        // Then as before the cadence was known: every 250 ms for ten seconds after the last
        // generation arrived (a slow upload), then every second (the primary is idle).
        #expect(schedule.pause(at: base + .milliseconds(3_280)) == .milliseconds(250))
        #expect(schedule.pause(at: base + .seconds(60)) == .seconds(1))
    }

    @Test func aStandbyPollsOnceWhenTheNextGenerationIsDueAndAMarginAfterThenOnlyAtItsCap() {
        let base = ContinuousClock.now
        let schedule = Self.locked(base: base)
        let cap = Duration.seconds(1)
        // Due at 2,820 ms: asked for 100 ms after, once.
        #expect(schedule.standbyPause(at: base + .milliseconds(1_950), cap: cap, applied: true) == .milliseconds(970))
        #expect(schedule.standbyPause(at: base + .milliseconds(2_500), cap: cap, applied: false) == .milliseconds(420))
        // Not there then: asked again after the cap, not every 50 ms.
        #expect(schedule.standbyPause(at: base + .milliseconds(2_930), cap: cap, applied: false) == cap)
        // Found late, with the next one due already: asked for at once, to catch up.
        #expect(schedule.standbyPause(at: base + .milliseconds(3_900), cap: cap, applied: true) == .zero)
        // Never more than the cap, and the cap without a cadence.
        #expect(schedule.standbyPause(at: base, cap: .milliseconds(500), applied: true) == .milliseconds(500))
        let fresh = FollowerPollSchedule(pollInterval: .seconds(1), activePollInterval: .milliseconds(250))
        #expect(fresh.standbyPause(at: base, cap: cap, applied: true) == cap)
    }

    @Test func theDelayOfTheFastestRecentFindSetsThePhaseWhateverTheShippersClockSays() {
        let base = ContinuousClock.now
        var schedule = FollowerPollSchedule(pollInterval: .seconds(1), activePollInterval: .milliseconds(250))
        // The shipper's clock is 5 s ahead of this host's; the finds come 300, 80 and 200 ms after
        // the writes.
        for (number, late) in [(UInt64(1), 300), (2, 80), (3, 200)] {
            let written = 2_000_000 + (number - 1) * 1_000
            schedule.arrived(
                number: number, writtenMilliseconds: written,
                askedAt: base + .milliseconds(Int64((number - 1) * 1_000) + Int64(late)),
                wallClock: written - 5_000 + UInt64(late))
        }
        #expect(schedule.cadence == .seconds(1))
        #expect(schedule.nextDue == base + .milliseconds(3_080))
    }

    @Test func withoutACadenceAFollowerPollsOftenForTenSecondsAfterAGenerationThenAtThePollInterval() {
        let base = ContinuousClock.now
        var schedule = FollowerPollSchedule(pollInterval: .seconds(1), activePollInterval: .milliseconds(250))
        #expect(schedule.pause(at: base) == .seconds(1))
        schedule.arrived(number: 7, writtenMilliseconds: 1_000, askedAt: base, wallClock: 1_100)
        #expect(schedule.cadence == nil)
        #expect(schedule.pause(at: base + .seconds(2)) == .milliseconds(250))
        #expect(schedule.pause(at: base + .seconds(11)) == .seconds(1))
        // Generations skipped, or written minutes apart, teach no cadence.
        schedule.arrived(number: 9, writtenMilliseconds: 2_000, askedAt: base + .seconds(1), wallClock: 2_100)
        schedule.arrived(number: 10, writtenMilliseconds: 200_000, askedAt: base + .seconds(199), wallClock: 200_100)
        #expect(schedule.cadence == nil)
    }
}
