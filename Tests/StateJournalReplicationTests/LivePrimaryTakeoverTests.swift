import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

/// A gate a test opens by hand: whoever waits on it is held until then.
actor Gate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        guard !isOpen else { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting = []
    }
}

extension GatewayTests {
    /// `promote --take-over` against a primary that is still shipping: the primary's generations
    /// that land after the standby took the lease, and before its term's first generation, are
    /// orphans, never part of the replica's history.
    @Suite struct LivePrimaryTakeoverTests {
        struct Race {
            var location: S3Location
            var directory: URL
            var primary: Journal
            var primaryShipper: ReplicationShipper
            var standbyURL: URL
            var standbyShipper: ReplicationShipper
            /// The epochs the primary committed and shipped after the standby took the lease.
            var late: [UInt64]
            var report: PromotionReport
        }

        /// A primary ships epochs 1…5; a standby follows them; the primary commits three more and
        /// its pass stalls before writing their generation; the standby takes the lease by force;
        /// the primary's pass then writes its generation; the standby's first pass starts its term.
        static func race(
            _ gateway: Gateway, afterTheLateGeneration: (S3Location, URL) async throws -> Void = { _, _ in }
        ) async throws -> Race {
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "race")
            let directory = try temporaryDirectory("race")
            let primaryURL = directory.appendingPathComponent("primary")
            let standbyURL = directory.appendingPathComponent("standby")
            let primary = try Journal.open(at: primaryURL)
            try commit(primary, count: 5, marker: "before")
            let primaryShipper = ReplicationShipper(
                store: primaryURL, to: location, configuration: gateway.configuration(),
                options: leaseOptions(lease: .seconds(30), host: "primary"))
            try await primaryShipper.shipOnce()
            let standby = ReplicaFollower(from: location, into: standbyURL, configuration: gateway.configuration())
            try await standby.followOnce()
            let gate = Gate()
            await primaryShipper.beforeWritingGeneration { await gate.wait() }
            let late = try commit(primary, count: 3, marker: "late")
            let stalled = Task { try await primaryShipper.shipOnce() }
            let (standbyShipper, report) = try await standby.promote(
                shipping: leaseOptions(lease: .seconds(30), takesOver: true, host: "standby"))
            await gate.open()
            _ = try? await stalled.value
            try await afterTheLateGeneration(location, directory)
            try await standbyShipper.shipOnce()
            return Race(
                location: location, directory: directory, primary: primary, primaryShipper: primaryShipper,
                standbyURL: standbyURL, standbyShipper: standbyShipper, late: late, report: report)
        }

        @Test func aRestoreNeverReachesAnEpochTheOldPrimaryShippedAfterTheTakeover() async throws {
            let gateway = try Gateway.required()
            let race = try await Self.race(gateway)
            defer { try? FileManager.default.removeItem(at: race.directory) }
            defer { try? race.primary.close() }
            let restorer = ReplicaRestorer(from: race.location, configuration: gateway.configuration())
            let lateEpoch = try #require(race.late.last)
            // The new term holds epochs through its marker only: the old primary's late epochs are
            // not the replica's, whatever generation carries them.
            let before = race.directory.appendingPathComponent("restore-before")
            await #expect(throws: ReplicationError.self) {
                _ = try await restorer.restore(into: before, target: .epoch(lateEpoch))
            }
            // Once the new primary commits epochs of those numbers, a restore brings back its own.
            let standby = try Journal.open(at: race.standbyURL)
            try commit(standby, count: 3, marker: "new primary")
            try standby.close()
            try await race.standbyShipper.shipOnce()
            let after = race.directory.appendingPathComponent("restore-after")
            let report = try await restorer.restore(into: after, target: .epoch(lateEpoch))
            #expect(report.epoch.epoch == lateEpoch)
            func contents(_ url: URL) throws -> [String: [UInt8]] {
                var result: [String: [UInt8]] = [:]
                try JournalReader(at: url).state(through: lateEpoch).forEachEntry { path, bytes in
                    result["\(path)"] = Array(bytes)
                }
                return result
            }
            #expect(
                try contents(after) == contents(race.standbyURL),
                "the restore spliced the old primary's epochs into the new primary's history")
        }

        @Test func aFollowerThatAppliedAnOrphanRefusesTheNewTermAsDiverged() async throws {
            let gateway = try Gateway.required()
            // A plain follower polls after the old primary's late generation landed and before the
            // new term's first one: the late one extends what it holds, so it applies it. The new
            // term does not build on it.
            let follower = FollowerBox()
            let race = try await Self.race(gateway) { location, directory in
                let plain = ReplicaFollower(
                    from: location, into: directory.appendingPathComponent("follower"),
                    configuration: gateway.configuration())
                try await plain.followOnce()
                await follower.set(plain)
            }
            defer { try? FileManager.default.removeItem(at: race.directory) }
            defer { try? race.primary.close() }
            let plain = try #require(await follower.follower)
            #expect(await plain.appliedEpoch == race.late.last)
            await #expect {
                await plain.requireListing()
                try await plain.followOnce()
            } throws: { error in
                (error as? ReplicationError)?.code == .diverged
            }
            #expect(await plain.appliedEpoch == race.late.last, "the follower cut its copy back")
        }

        @Test func aFollowerAskedToSetADivergedCopyAsideFollowsTheNewTermIntoAFreshDirectory() async throws {
            let gateway = try Gateway.required()
            let follower = FollowerBox()
            let race = try await Self.race(gateway) { location, directory in
                var options = ReplicaFollower.Options()
                options.setsAsideDivergedStore = true
                let plain = ReplicaFollower(
                    from: location, into: directory.appendingPathComponent("follower"),
                    configuration: gateway.configuration(), options: options)
                try await plain.followOnce()
                await follower.set(plain)
            }
            defer { try? FileManager.default.removeItem(at: race.directory) }
            defer { try? race.primary.close() }
            let plain = try #require(await follower.follower)
            #expect(await plain.appliedEpoch == race.late.last)
            await plain.requireListing()
            // Refused, closed; the next poll sets the copy aside and follows the new term.
            try await plain.followOnce()
            try await plain.followOnce()
            #expect(await plain.appliedEpoch == race.report.markerEpoch)
            let siblings = try FileManager.default.contentsOfDirectory(atPath: race.directory.path)
            #expect(siblings.contains { $0.hasPrefix("follower.diverged-") }, "\(siblings)")
        }
    }
}

/// Holds a follower a closure made, for the test that awaits it.
actor FollowerBox {
    var follower: ReplicaFollower?
    func set(_ follower: ReplicaFollower) { self.follower = follower }
}
