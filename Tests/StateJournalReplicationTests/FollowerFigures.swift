import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// How far a follower trails the primary, measured against the gateway. Slow, so it runs only
    /// with STATEJOURNAL_REPLICATION_FIGURES=1 (reported as skipped otherwise); quote it from a
    /// release build (`swift test -c release`). STATEJOURNAL_FIGURES_TRACE=1 prints each generation's
    /// times and the shipper's warnings, to tell a late pass of the shipper from a late follower.
    @Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["STATEJOURNAL_REPLICATION_FIGURES"] == "1"))
    struct FollowerFigures {
        /// Commits at `rate` per second for `seconds` with a shipper and a follower running in the
        /// process at their default settings; returns, for each commit, the time from its return to
        /// the follower having applied a generation that holds it, in milliseconds.
        static func lags(rate: Double, seconds: Double, phaseLocked: Bool = true, gateway: Gateway) async throws -> (
            lags: [Double], lists: Int, requests: Int, reached: Double
        ) {
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "follow-figures")
            let directory = try temporaryDirectory("follow-figures")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            let tracing = ProcessInfo.processInfo.environment["STATEJOURNAL_FIGURES_TRACE"] == "1"
            let logs = CapturedLogs()
            let shipper = ReplicationShipper(
                store: storeURL, to: location, configuration: gateway.configuration(),
                options: tracing ? ReplicationOptions(logger: logs.logger) : ReplicationOptions())
            try await shipper.shipOnce()
            let follower = ReplicaFollower(
                from: location, into: directory.appendingPathComponent("copy"), configuration: gateway.configuration())
            if !phaseLocked { await follower.pollWithoutPhaseLock() }
            let shippedAt = Locked<[(ShipmentReport, ContinuousClock.Instant)]>([])
            await shipper.observeGenerations { report in
                let now = ContinuousClock.now
                shippedAt.withLock { $0.append((report, now)) }
            }
            let appliedAt = Locked<[(UInt64, ContinuousClock.Instant)]>([])
            await follower.observeApplied { report in
                let now = ContinuousClock.now
                if let epoch = report.lastEpoch { appliedAt.withLock { $0.append((epoch, now)) } }
            }
            let shipping = Task { try await shipper.run() }
            let following = Task { try await follower.run() }
            var committed: [(UInt64, ContinuousClock.Instant)] = []
            let count = Int(rate * seconds)
            let start = ContinuousClock.now
            for index in 0..<count {
                let due = start + .microseconds(Int64(Double(index) * 1_000_000 / rate))
                if due - ContinuousClock.now > .milliseconds(1) { try await Task.sleep(until: due) }
                let epoch = try journal.beginEpoch()
                try epoch.put(
                    RestorationPath("Main", "Item-\(index % 50)"),
                    Array("{\"offset\":\(index % 977),\"selection\":\"\(UUID())\"}".utf8))
                committed.append((try epoch.commit().epoch, ContinuousClock.now))
            }
            let reached = Double(count) / ((ContinuousClock.now - start) / .seconds(1))
            try await Task.sleep(for: .seconds(4))
            shipping.cancel()
            following.cancel()
            try await shipping.value
            try await following.value
            let applied = appliedAt.withLock { $0 }
            var lags: [Double] = []
            var next = 0
            for (epoch, time) in committed {
                while next < applied.count && applied[next].0 < epoch { next += 1 }
                guard next < applied.count else { break }
                lags.append(ReplicationFigures.milliseconds(applied[next].1 - time))
            }
            try journal.close()
            if tracing {
                for entry in logs.all where entry.level != .info { print("TRACE log \(entry.level): \(entry.message)") }
                Self.trace(committed: committed, shipped: shippedAt.withLock { $0 }, applied: applied, start: start)
            }
            return (lags, follower.listRequestsSent, follower.requestsSent, reached)
        }

        /// Prints, for every generation, when it was written and applied (ms since the first commit),
        /// what it uploaded, and the worst lag of the commits it brought, to tell a late pass of the
        /// shipper from a late poll or apply of the follower.
        static func trace(
            committed: [(UInt64, ContinuousClock.Instant)], shipped: [(ShipmentReport, ContinuousClock.Instant)],
            applied: [(UInt64, ContinuousClock.Instant)], start: ContinuousClock.Instant
        ) {
            func at(_ instant: ContinuousClock.Instant) -> Int { Int(ReplicationFigures.milliseconds(instant - start)) }
            var previousEpoch: UInt64 = 0
            var next = 0
            for (report, written) in shipped {
                guard let last = report.lastEpoch else { continue }
                while next < applied.count && applied[next].0 < last { next += 1 }
                let appliedAt = next < applied.count ? at(applied[next].1) : -1
                let brought = committed.filter { $0.0 > previousEpoch && $0.0 <= last }
                let oldest = brought.first.map { at($0.1) } ?? -1
                print(
                    "TRACE generation \(report.generation ?? 0) epochs ..\(last) (\(brought.count)) first commit \(oldest) written \(at(written)) applied \(appliedAt) objects \(report.objectsUploaded) bytes \(report.bytesUploaded)"
                )
                previousEpoch = last
            }
        }

        @Test func followerLagAt100And1000And10000CommitsPerSecond() async throws {
            let gateway = try Gateway.required()
            let environment = ProcessInfo.processInfo.environment
            let seconds = Double(environment["STATEJOURNAL_FIGURES_SECONDS"] ?? "") ?? 20
            let rates = (environment["STATEJOURNAL_FIGURES_RATES"] ?? "100,1000,10000").split(separator: ",")
                .compactMap { Double($0) }
            // STATEJOURNAL_FIGURES_SCHEDULE=both measures the polls without the phase lock too.
            let both = environment["STATEJOURNAL_FIGURES_SCHEDULE"] == "both"
            for rate in rates {
                for phaseLocked in both ? [false, true] : [true] {
                    let run = try await Self.lags(
                        rate: rate, seconds: seconds, phaseLocked: phaseLocked, gateway: gateway)
                    print(
                        String(
                            format:
                                "FIGURE follower lag at %.0f commits/s (%.0f reached, %@): p50/p99/max %.0f/%.0f/%.0f ms over %d commits (%.0f s), %d listings, %d requests",
                            rate, run.reached, phaseLocked ? "phase-locked" : "not phase-locked",
                            ReplicationFigures.percentile(run.lags, 0.5),
                            ReplicationFigures.percentile(run.lags, 0.99),
                            run.lags.max() ?? 0, run.lags.count, seconds, run.lists, run.requests))
                }
            }
        }

        /// The requests a follower of a store that commits nothing sends, over
        /// STATEJOURNAL_FIGURES_IDLE_SECONDS (65 by default, to include the listing a minute without
        /// a new generation brings), counted from the first generation applied, per hour.
        @Test func requestsOfAnIdleFollowerPerHour() async throws {
            let gateway = try Gateway.required()
            let seconds =
                Double(ProcessInfo.processInfo.environment["STATEJOURNAL_FIGURES_IDLE_SECONDS"] ?? "") ?? 65
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "follow-idle")
            let directory = try temporaryDirectory("follow-idle")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            defer { try? journal.close() }
            try commit(journal, count: 3)
            try await ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
                .shipOnce()
            let follower = ReplicaFollower(
                from: location, into: directory.appendingPathComponent("copy"), configuration: gateway.configuration())
            try await follower.followOnce()
            // Idle, the phase lock has nothing to lock to: the schedule is the same without it.
            let (requests, lists) = (follower.requestsSent, follower.listRequestsSent)
            let following = Task { try await follower.run() }
            try await Task.sleep(for: .seconds(seconds))
            following.cancel()
            try await following.value
            let sent = follower.requestsSent - requests
            print(
                String(
                    format: "FIGURE idle follower: %d requests (%d listings) in %.0f s, %.0f per hour",
                    sent, follower.listRequestsSent - lists, seconds, Double(sent) * 3600 / seconds))
        }
    }
}
