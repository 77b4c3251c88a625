import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// What a standby costs while its primary ships, counted where the bill is: at the gateway, by
    /// a proxy in front of the standby alone.
    @Suite struct StandbyBudgetTests {
        @Test func aStandbyWhosePrimaryShipsEverySecondSendsAboutOneRequestAGenerationAndStillTakesOver()
            async throws
        {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "standby-budget")
            let directory = try temporaryDirectory("standby-budget")
            defer { try? FileManager.default.removeItem(at: directory) }
            let primaryURL = directory.appendingPathComponent("primary")
            let journal = try Journal.open(at: primaryURL)
            defer { try? journal.close() }
            // The primary: the default options (a pass a second, a lease of ten seconds), and an app
            // committing 1,000 epochs a second.
            var primaryOptions = ReplicationOptions()
            primaryOptions.leaseHost = "primary"
            let shipper = ReplicationShipper(
                store: primaryURL, to: location, configuration: gateway.configuration(), options: primaryOptions)
            let written = Locked(0)
            await shipper.observeGenerations { _ in written.withLock { $0 += 1 } }
            let shipping = Task { try await shipper.run() }
            defer { shipping.cancel() }
            let stop = Locked(false)
            let app = Task.detached {
                var index = 0
                var due = ContinuousClock.now
                while !stop.withLock({ $0 }) {
                    due += .milliseconds(10)
                    if due > ContinuousClock.now { try await Task.sleep(until: due) }
                    for _ in 0..<10 {
                        try journal.commit([
                            .put(
                                RestorationPath("Main", "Item-\(index % 200)"),
                                Array("{\"offset\":\(index % 977),\"selection\":\"\(index)\"}".utf8))
                        ])
                        index += 1
                    }
                }
                return index
            }
            defer { stop.withLock { $0 = true } }
            // Its first generation may precede the app's first commit.
            try await eventually("the primary shipped the app's commits") { written.withLock { $0 } >= 3 }

            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                let follower = ReplicaFollower(
                    from: location, into: directory.appendingPathComponent("standby"),
                    configuration: proxy.configuration(for: gateway))
                var standbyOptions = ReplicationOptions()
                standbyOptions.leaseHost = "standby"
                let promotion = Task { try await follower.promote(shipping: standbyOptions) }
                defer { promotion.cancel() }
                // Caught up, and the primary's cadence learned.
                try await eventually(timeout: .seconds(120), "the standby follows") {
                    (await follower.appliedGeneration ?? 0) >= UInt64(written.withLock { $0 })
                }
                try await Task.sleep(for: .seconds(10))
                try await proxy.zero()
                let before = written.withLock { $0 }
                let start = ContinuousClock.now
                try await Task.sleep(for: .seconds(60))
                let counts = try await proxy.counts()
                let seconds = RequestBudgetTests.seconds(ContinuousClock.now - start)
                let generations = written.withLock { $0 } - before
                let prefix = "/\(location.bucket)/standby-budget"
                let generationGets = counts.count(method: "GET", path: "\(prefix)/generations/*")
                let leaseGets = counts.count(method: "GET", path: "\(prefix)/lease.json")
                let heads = counts.count(method: "HEAD")
                let listings = counts.count(method: "GET", path: "/\(location.bucket)", query: true)
                let perHour = RequestBudgetTests.perHour(counts.requests.count, seconds)
                print(
                    String(
                        format:
                            "FIGURE a standby while its primary ships at 1,000 commits/s: %d requests in %.1f s (%.0f an hour) for %d generations: %d GETs of generations, %d of the lease, %d HEADs, %d listings",
                        counts.requests.count, seconds, perHour, generations, generationGets, leaseGets, heads, listings
                    ))
                // One request per generation: the primary writes one about every 0.92 s (3,900 an
                // hour), so that is what the standby costs on a quiet machine. A poll that finds
                // nothing (the pass came late) adds a lease read, and a generation found more than two
                // seconds late the chain's probe: on a loaded machine a few of each, never one of each
                // per generation as before (266 requests for 65 generations: 100 GETs of generations,
                // 50 of the lease, 116 HEADs).
                let requests = counts.requests.map { "\($0.method) \($0.path)" }
                #expect(generations >= 40)
                #expect(generationGets >= generations - 2, "\(requests)")
                #expect(counts.requests.count <= generations * 3 / 2 + 4, "\(requests)")
                #expect(leaseGets <= generations / 4 + 2 && heads <= generations / 10 + 2, "\(requests)")

                // The primary stops: the standby takes over within the lease's duration and a few
                // seconds, holding every epoch the primary shipped.
                stop.withLock { $0 = true }
                let committed = try await app.value
                shipping.cancel()
                _ = try? await shipping.value
                let stopped = ContinuousClock.now
                let (promoted, report) = try await promotion.value
                let takeover = ContinuousClock.now - stopped
                print("FIGURE the standby took over \(takeover) after its primary stopped")
                #expect(takeover < .seconds(15))
                #expect(report.lastEpoch == journal.lastCommitted?.epoch, "\(committed) commits")
                await promoted.lease?.release()
            }
        }
    }
}
