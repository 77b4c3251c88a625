import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// What shipping costs, counted where the bill is: at the gateway, by a proxy in front of it
    /// that sees every request the shipper's client sends, retries included.
    @Suite struct RequestBudgetTests {
        /// Requests an hour at the rate `count` were seen over `seconds`.
        static func perHour(_ count: Int, _ seconds: Double) -> Double { Double(count) / seconds * 3600 }

        static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }

        @Test func aStoreCommitting100TimesASecondCostsAtMost4000RequestsAnHourAndAnIdleOneNone() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "budget")
            let directory = try temporaryDirectory("request-budget")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            defer { try? journal.close() }
            try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                // The default options: a pass a second at most, a lease of ten seconds.
                let shipper = ReplicationShipper(
                    store: storeURL, to: location, configuration: proxy.configuration(for: gateway))
                let generationsWritten = Locked(0)
                await shipper.observeGenerations { _ in generationsWritten.withLock { $0 += 1 } }
                let loop = Task { try await shipper.run() }
                defer { loop.cancel() }
                var index = 0
                /// Commits 100 epochs a second for `duration`, or until `done` holds, as a small app would.
                func commitFor(_ duration: Duration, until done: () async -> Bool = { false }) async throws {
                    let start = ContinuousClock.now
                    var due = start
                    while ContinuousClock.now - start < duration, await !done() {
                        due += .milliseconds(10)
                        if due > ContinuousClock.now { try await Task.sleep(until: due) }
                        let epoch = try journal.beginEpoch()
                        try epoch.put(
                            RestorationPath("Main", "Item-\(index % 50)"),
                            Array("{\"offset\":\(index % 977),\"selection\":\"\(UUID())\"}".utf8))
                        try epoch.commit()
                        index += 1
                    }
                }
                // The shipper's start (the identity, the listing, the lease) is not the steady state:
                // counting starts once it has written its first generation.
                try await commitFor(.seconds(600)) { generationsWritten.withLock { $0 } > 0 }
                #expect(generationsWritten.withLock { $0 } > 0)
                try await proxy.zero()
                let busyStart = ContinuousClock.now
                try await commitFor(.seconds(60))
                let busy = try await proxy.counts()
                let busySeconds = Self.seconds(ContinuousClock.now - busyStart)
                let generations = busy.count(method: "PUT", path: "/\(location.bucket)/budget/generations/*")
                print(
                    String(
                        format:
                            "FIGURE requests at the gateway at 100 commits/s: %d in %.1f s (%.0f an hour; %d generations)",
                        busy.requests.count, busySeconds, Self.perHour(busy.requests.count, busySeconds), generations))
                #expect(
                    Self.perHour(busy.requests.count, busySeconds) <= 4000,
                    "\(busy.requests.map { "\($0.method) \($0.path)" })")
                #expect(generations > 0)

                // Idle: the last pass, then a lease's duration until the lease goes dormant (no
                // standby watches), then nothing at all.
                let keeper = try #require(await shipper.lease)
                let deadline = ContinuousClock.now + .seconds(600)
                while await keeper.mode != .dormant, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(await keeper.mode == .dormant)
                try await proxy.zero()
                try await Task.sleep(for: .seconds(30))
                let idle = try await proxy.counts()
                #expect(idle.requests.isEmpty, "\(idle.requests.map { "\($0.method) \($0.path)" })")
                print("FIGURE requests at the gateway while idle: \(idle.requests.count) in 30 s")
                loop.cancel()
                _ = try? await loop.value
            }
        }
    }
}
