import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// The figures the documentation quotes, measured against the gateway. Slow, so they run only with
    /// STATEJOURNAL_REPLICATION_FIGURES=1 (they are reported as skipped otherwise).
    @Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["STATEJOURNAL_REPLICATION_FIGURES"] == "1"))
    struct ReplicationFigures {
        static func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
        }

        /// Commits at `rate` per second for `seconds`, with or without a shipper in the process;
        /// returns commit latencies (ms), lags (ms) and the requests sent.
        static func run(rate: Double, seconds: Double, shipping: Bool, gateway: Gateway) async throws
            -> (commits: [Double], lags: [Double], requests: Int)
        {
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "figures")
            let directory = try temporaryDirectory("figures")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            let committedAt = Locked<[UInt64: ContinuousClock.Instant]>([:])
            let shippedAt = Locked<[(UInt64, ContinuousClock.Instant)]>([])
            let shipping = shipping
            let loop = Task {
                guard shipping else { return }
                while !Task.isCancelled {
                    if let report = try? await shipper.shipOnce(), let epoch = report.lastEpoch {
                        let now = ContinuousClock.now
                        shippedAt.withLock { $0.append((epoch, now)) }
                    }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
            var latencies: [Double] = []
            let start = ContinuousClock.now
            let count = Int(rate * seconds)
            for index in 0..<count {
                let due = start + .milliseconds(Int64(Double(index) * 1000 / rate))
                if ContinuousClock.now < due { try await Task.sleep(until: due) }
                let before = ContinuousClock.now
                let epoch = try journal.beginEpoch()
                try epoch.put(RestorationPath("Main", "Item-\(index % 50)"), Array("state \(index) \(UUID())".utf8))
                let info = try epoch.commit()
                let after = ContinuousClock.now
                latencies.append(
                    Double((after - before).components.attoseconds) / 1e15 + Double((after - before).components.seconds)
                        * 1000)
                committedAt.withLock { $0[info.epoch] = after }
            }
            try await Task.sleep(for: .seconds(2.5))
            loop.cancel()
            _ = await loop.value
            var lags: [Double] = []
            let shipped = shippedAt.withLock { $0 }
            for (epoch, time) in committedAt.withLock({ $0 }) {
                guard let first = shipped.first(where: { $0.0 >= epoch }) else { continue }
                let lag = first.1 - time
                lags.append(Double(lag.components.seconds) * 1000 + Double(lag.components.attoseconds) / 1e15)
            }
            try journal.close()
            return (latencies, lags, shipper.requestsSent)
        }

        @Test func commitLatencyAndLagAt100And1000CommitsPerSecond() async throws {
            let gateway = try Gateway.required()
            for rate in [100.0, 1000.0] {
                let without = try await Self.run(rate: rate, seconds: 20, shipping: false, gateway: gateway)
                let with = try await Self.run(rate: rate, seconds: 20, shipping: true, gateway: gateway)
                print(
                    String(
                        format:
                            "FIGURE rate=%.0f/s commit p50/p99 without shipper %.3f/%.3f ms, with %.3f/%.3f ms; lag p50/p99 %.0f/%.0f ms; %d requests in %.0f s (%.0f per hour)",
                        rate, Self.percentile(without.commits, 0.5), Self.percentile(without.commits, 0.99),
                        Self.percentile(with.commits, 0.5), Self.percentile(with.commits, 0.99),
                        Self.percentile(with.lags, 0.5), Self.percentile(with.lags, 0.99), with.requests, 22.5,
                        Double(with.requests) / 22.5 * 3600))
            }
        }

        @Test func requestsPerHourAt100CommitsPerSecondIncludingRetention() async throws {
            let gateway = try Gateway.required()
            let seconds = 130.0
            let result = try await Self.run(rate: 100, seconds: seconds, shipping: true, gateway: gateway)
            print(
                String(
                    format: "FIGURE requests at 100 commits/s over %.0f s, retention included: %d (%.0f per hour)",
                    seconds + 2.5, result.requests, Double(result.requests) / (seconds + 2.5) * 3600))
        }

        @Test func restoreAgainstAwsCliCopy() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "big")
            let directory = try temporaryDirectory("restore-figure")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(
                at: storeURL,
                options: JournalOptions(
                    durability: .none, segmentSizeLimit: 1 << 20, compaction: CompactionPolicy(isAutomatic: false)))
            var generator = SystemRandomNumberGenerator()
            for index in 0..<16000 {
                let epoch = try journal.beginEpoch()
                for item in 0..<8 {
                    let noise = (0..<96).map { _ in UInt8.random(in: 97...122, using: &generator) }
                    try epoch.put(
                        RestorationPath("Main", "Item-\((index * 8 + item) % 3000)"),
                        noise + Array(repeating: 32, count: 400))
                }
                try epoch.commit()
            }
            try journal.close()
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            try await shipper.shipOnce()
            let bytes = try FileManager.default.contentsOfDirectory(atPath: storeURL.path).reduce(Int64(0)) {
                $0
                    + ((try? FileManager.default.attributesOfItem(atPath: storeURL.appendingPathComponent($1).path)[
                        .size]
                        as? Int64) ?? 0)
            }
            let started = ContinuousClock.now
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: directory.appendingPathComponent("restored"))
            let restoreTime = ContinuousClock.now - started
            let verifyStarted = ContinuousClock.now
            _ = StoreInspector.verify(directory.appendingPathComponent("restored"))
            let verifyTime = ContinuousClock.now - verifyStarted
            let copy = Process()
            copy.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            copy.arguments = [
                "aws", "--endpoint-url", gateway.endpoint.absoluteString, "s3", "cp", "--recursive", "--quiet",
                "s3://\(location.bucket)/\(location.prefix)", directory.appendingPathComponent("copied").path,
            ]
            copy.environment = gateway.childEnvironment
            let copyStarted = ContinuousClock.now
            try copy.run()
            _ = await waitForExit(copy, timeout: .seconds(300))
            let copyTime = ContinuousClock.now - copyStarted
            print(
                "FIGURE restore of \(bytes) bytes (\(report.objectsDownloaded) objects, \(report.epoch.epoch) epochs): \(restoreTime) with verification (a verification alone: \(verifyTime)); aws s3 cp --recursive: \(copyTime)"
            )
        }
    }
}
