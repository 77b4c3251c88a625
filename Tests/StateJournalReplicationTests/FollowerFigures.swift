import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// How far a follower trails the primary, measured against the gateway. Slow, so it runs only
    /// with STATEJOURNAL_REPLICATION_FIGURES=1 (reported as skipped otherwise); quote it from a
    /// release build (`swift test -c release`).
    @Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["STATEJOURNAL_REPLICATION_FIGURES"] == "1"))
    struct FollowerFigures {
        /// Commits at `rate` per second for `seconds` with a shipper and a follower running in the
        /// process at their default settings; returns, for each commit, the time from its return to
        /// the follower having applied a generation that holds it, in milliseconds.
        static func lags(rate: Double, seconds: Double, gateway: Gateway) async throws -> (lags: [Double], lists: Int) {
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "follow-figures")
            let directory = try temporaryDirectory("follow-figures")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            try await shipper.shipOnce()
            let follower = ReplicaFollower(
                from: location, into: directory.appendingPathComponent("copy"), configuration: gateway.configuration())
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
            return (lags, follower.listRequestsSent)
        }

        @Test func followerLagAt100And1000CommitsPerSecond() async throws {
            let gateway = try Gateway.required()
            let seconds = Double(ProcessInfo.processInfo.environment["STATEJOURNAL_FIGURES_SECONDS"] ?? "") ?? 20
            for rate in [100.0, 1000.0] {
                let run = try await Self.lags(rate: rate, seconds: seconds, gateway: gateway)
                print(
                    String(
                        format:
                            "FIGURE follower lag at %.0f commits/s: p50/p99/max %.0f/%.0f/%.0f ms over %d commits (%.0f s), %d listings",
                        rate, ReplicationFigures.percentile(run.lags, 0.5),
                        ReplicationFigures.percentile(run.lags, 0.99),
                        run.lags.max() ?? 0, run.lags.count, seconds, run.lists))
            }
        }
    }
}
