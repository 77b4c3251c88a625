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

        /// Requests of each kind, per hour at the rate `counts` were sent over `seconds`.
        static func perHour(_ counts: S3RequestCounts, _ seconds: Double) -> String {
            let kinds = [
                ("PUT", counts.puts), ("GET", counts.gets), ("LIST", counts.lists), ("HEAD", counts.heads),
                ("DELETE", counts.deletes), ("POST", counts.posts),
            ]
            return kinds.map { String(format: "%@ %.0f", $0.0, Double($0.1) / seconds * 3600) }.joined(separator: ", ")
        }

        static func milliseconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        }

        /// What one run at a commit rate measured.
        struct RateRun {
            /// Commit latencies, in milliseconds.
            var commits: [Double]
            /// For each commit, the time from its return to the generation that names it being
            /// written, in milliseconds.
            var lags: [Double]
            /// The requests the shipper sent, and over how long.
            var requests: Int
            /// The same, by kind.
            var counts: S3RequestCounts
            var elapsed: Double
            /// The commit rate reached (the loop may not keep pace with the one asked for).
            var rateReached: Double
            var generations: Int
        }

        /// Commits at `rate` per second for `seconds` under the default options, with or without a
        /// shipper running in the process (``ReplicationShipper/run()`` at the default interval, in a
        /// task cancelled at the end).
        ///
        /// A commit's lag runs from its return (the epoch is in the operating system's hands, and
        /// under the default policy synced within a second) to the moment the shipper has written
        /// the first generation whose last epoch is the commit's or a later one.
        static func run(rate: Double, seconds: Double, shipping: Bool, gateway: Gateway) async throws -> RateRun {
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "figures")
            let directory = try temporaryDirectory("figures")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            let shippedAt = Locked<[(UInt64, ContinuousClock.Instant)]>([])
            await shipper.observeGenerations { report in
                let now = ContinuousClock.now
                if let epoch = report.lastEpoch { shippedAt.withLock { $0.append((epoch, now)) } }
            }
            let loop: Task<Void, any Error>? = shipping ? Task { try await shipper.run() } : nil
            var latencies: [Double] = []
            var committed: [(UInt64, ContinuousClock.Instant)] = []
            let count = Int(rate * seconds)
            latencies.reserveCapacity(count)
            committed.reserveCapacity(count)
            let start = ContinuousClock.now
            for index in 0..<count {
                // Paced on a schedule; the loop sleeps only when it is more than a millisecond ahead
                // of it, so that high rates are not bounded by the cost of a sleep.
                let due = start + .microseconds(Int64(Double(index) * 1_000_000 / rate))
                if due - ContinuousClock.now > .milliseconds(1) { try await Task.sleep(until: due) }
                let before = ContinuousClock.now
                let epoch = try journal.beginEpoch()
                try epoch.put(
                    RestorationPath("Main", "Item-\(index % 50)"),
                    Array("{\"offset\":\(index % 977),\"selection\":\"\(UUID())\"}".utf8))
                let info = try epoch.commit()
                let after = ContinuousClock.now
                latencies.append(milliseconds(after - before))
                committed.append((info.epoch, after))
            }
            let committing = milliseconds(ContinuousClock.now - start) / 1000
            // Time for the last commits to be shipped, then the shipper's last pass.
            try await Task.sleep(for: .seconds(2.5))
            loop?.cancel()
            try await loop?.value
            let elapsed = milliseconds(ContinuousClock.now - start) / 1000
            var lags: [Double] = []
            let shipped = shippedAt.withLock { $0 }
            var next = 0
            for (epoch, time) in committed {
                while next < shipped.count && shipped[next].0 < epoch { next += 1 }
                guard next < shipped.count else { break }
                lags.append(milliseconds(shipped[next].1 - time))
            }
            try journal.close()
            return RateRun(
                commits: latencies, lags: lags, requests: shipper.requestsSent, counts: shipper.requestCounts,
                elapsed: elapsed,
                rateReached: Double(count) / committing, generations: shipped.count)
        }

        @Test func commitLatencyAndLagAt100And1000And10000CommitsPerSecond() async throws {
            let gateway = try Gateway.required()
            let seconds = Double(ProcessInfo.processInfo.environment["STATEJOURNAL_FIGURES_SECONDS"] ?? "") ?? 20
            for rate in [100.0, 1000.0, 10000.0] {
                let without = try await Self.run(rate: rate, seconds: seconds, shipping: false, gateway: gateway)
                let with = try await Self.run(rate: rate, seconds: seconds, shipping: true, gateway: gateway)
                print(
                    String(
                        format:
                            "FIGURE rate=%.0f/s (reached %.0f/s without the shipper, %.0f/s with it) commit p50/p99 without shipper %.3f/%.3f ms, with %.3f/%.3f ms (%.2fx at p99); lag p50/p99/max %.0f/%.0f/%.0f ms over %d commits; %d generations, %d requests in %.1f s (%.0f per hour: %@)",
                        rate, without.rateReached, with.rateReached, Self.percentile(without.commits, 0.5),
                        Self.percentile(without.commits, 0.99), Self.percentile(with.commits, 0.5),
                        Self.percentile(with.commits, 0.99),
                        Self.percentile(with.commits, 0.99) / Self.percentile(without.commits, 0.99),
                        Self.percentile(with.lags, 0.5), Self.percentile(with.lags, 0.99), with.lags.max() ?? 0,
                        with.lags.count, with.generations, with.requests, with.elapsed,
                        Double(with.requests) / with.elapsed * 3600, Self.perHour(with.counts, with.elapsed)))
            }
        }

        @Test func requestsPerHourAt100CommitsPerSecondIncludingRetention() async throws {
            let gateway = try Gateway.required()
            // Retention runs every five minutes and deletes generations covered for ten: 16 minutes
            // see it delete.
            let seconds =
                Double(ProcessInfo.processInfo.environment["STATEJOURNAL_RETENTION_FIGURE_SECONDS"] ?? "") ?? 960
            let result = try await Self.run(rate: 100, seconds: seconds, shipping: true, gateway: gateway)
            print(
                String(
                    format: "FIGURE requests at 100 commits/s over %.0f s, retention included: %d (%.0f per hour: %@)",
                    result.elapsed, result.requests, Double(result.requests) / result.elapsed * 3600,
                    Self.perHour(result.counts, result.elapsed)))
        }

        /// A store of 100,000 restoration paths with app-like states of about 200 bytes, and some
        /// history: every path written once, then 50,000 updates, under the default options.
        static func makeLargeStore(at storeURL: URL) throws -> Int {
            let journal = try Journal.open(at: storeURL, options: JournalOptions(durability: .none))
            var generator = SplitMix64(seed: 1)
            let words = ["inbox", "draft", "archive", "notes", "search", "settings", "photos", "reply", "thread"]
            func state(_ item: Int, _ version: Int) -> [UInt8] {
                let word = words[Int.random(in: 0..<words.count, using: &generator)]
                let draft = (0..<24).map { _ in Character(UnicodeScalar(UInt8.random(in: 97...122, using: &generator)))
                }
                return Array(
                    """
                    {"version":\(version),"scroll":{"x":0,"y":\(Int.random(in: 0..<20_000, using: &generator)).5},\
                    "tab":"\(word)","selection":"item-\(item)","expanded":[\(item % 7),\(item % 11),\(item % 13)],\
                    "draft":"\(String(draft))","viewed":"2026-11-24T09:\(10 + version % 50):00Z"}
                    """.utf8)
            }
            var puts = 0
            for batch in 0..<200 {
                let epoch = try journal.beginEpoch()
                for item in (batch * 500)..<((batch + 1) * 500) {
                    try epoch.put(RestorationPath("Scene-\(item % 8)", "Item-\(item)"), state(item, 0))
                    puts += 1
                }
                try epoch.commit()
            }
            for version in 1...200 {
                let epoch = try journal.beginEpoch()
                for _ in 0..<250 {
                    let item = Int.random(in: 0..<100_000, using: &generator)
                    try epoch.put(RestorationPath("Scene-\(item % 8)", "Item-\(item)"), state(item, version))
                    puts += 1
                }
                try epoch.commit()
            }
            try journal.close()
            return puts
        }

        @Test func peakMemoryOfARestoreOf100000PathsThroughTheTool() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "big-memory")
            let directory = try temporaryDirectory("restore-memory")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            try Self.makeLargeStore(at: storeURL)
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            try await shipper.shipOnce()
            let objects = try await gateway.client().list(bucket: location.bucket, prefix: location.prefix)
            let run = try measuredTool(
                [
                    "restore", "s3://\(location.bucket)/\(location.prefix)", "--into",
                    directory.appendingPathComponent("r").path,
                ],
                environment: gateway.childEnvironment)
            #expect(run.status == 0, "\(run.error)")
            let verify = try measuredTool(
                ["verify", directory.appendingPathComponent("r").path], environment: gateway.childEnvironment)
            print(
                "FIGURE peak memory of statejournal restore of a store of 100,000 paths"
                    + " (\(objects.count) objects, largest \(objects.map(\.size).max() ?? 0) bytes, all \(objects.reduce(Int64(0)) { $0 + $1.size }) bytes):"
                    + " \(run.peakKiB / 1024) MiB in \(String(format: "%.2f", run.seconds)) s;"
                    + " statejournal verify of the restored store alone: \(verify.peakKiB / 1024) MiB")
        }

        @Test func restoreOf100000PathsAgainstAwsCliCopy() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "big")
            let directory = try temporaryDirectory("restore-figure")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let puts = try Self.makeLargeStore(at: storeURL)
            let shipper = ReplicationShipper(store: storeURL, to: location, configuration: gateway.configuration())
            try await shipper.shipOnce()
            let files = try FileManager.default.contentsOfDirectory(atPath: storeURL.path)
            let bytes = files.reduce(Int64(0)) {
                $0
                    + ((try? FileManager.default.attributesOfItem(atPath: storeURL.appendingPathComponent($1).path)[
                        .size]
                        as? Int64) ?? 0)
            }
            let objects = try await gateway.client().list(bucket: location.bucket, prefix: location.prefix)
            var restores: [Double] = []
            var verifications: [Double] = []
            var copies: [Double] = []
            var last: RestoreReport?
            for round in 0..<3 {
                let restored = directory.appendingPathComponent("restored-\(round)")
                let started = ContinuousClock.now
                last = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                    .restore(into: restored)
                restores.append(Self.milliseconds(ContinuousClock.now - started))
                let verifyStarted = ContinuousClock.now
                _ = StoreInspector.verify(restored)
                verifications.append(Self.milliseconds(ContinuousClock.now - verifyStarted))
                try? FileManager.default.removeItem(at: restored)

                let copied = directory.appendingPathComponent("copied-\(round)")
                let copy = Process()
                copy.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                copy.arguments = [
                    "aws", "--endpoint-url", gateway.endpoint.absoluteString, "s3", "cp", "--recursive", "--quiet",
                    "s3://\(location.bucket)/\(location.prefix)", copied.path,
                ]
                copy.environment = gateway.childEnvironment
                let copyStarted = ContinuousClock.now
                try copy.run()
                let status = await waitForExit(copy, timeout: .seconds(300))
                copies.append(Self.milliseconds(ContinuousClock.now - copyStarted))
                #expect(status == 0)
                try? FileManager.default.removeItem(at: copied)
            }
            // What the copy's time owes to starting the command itself.
            let version = Process()
            version.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            version.arguments = ["aws", "--version"]
            version.standardOutput = FileHandle.nullDevice
            let versionStarted = ContinuousClock.now
            try version.run()
            _ = await waitForExit(version, timeout: .seconds(60))
            let startup = Self.milliseconds(ContinuousClock.now - versionStarted)
            let restore = Self.percentile(restores, 0.5)
            let copy = Self.percentile(copies, 0.5)
            func ms(_ values: [Double]) -> String { values.map { String(format: "%.0f", $0) }.joined(separator: "/") }
            print(
                "FIGURE restore of a store of 100,000 paths (\(puts) puts, \(files.count) files, \(bytes) bytes;"
                    + " \(objects.count) objects in the bucket, \(objects.reduce(Int64(0)) { $0 + $1.size }) bytes;"
                    + " \(last?.objectsDownloaded ?? 0) objects downloaded, through epoch \(last?.epoch.epoch ?? 0)):"
                    + " median of 3 \(ms([restore])) ms (each \(ms(restores)); a verification alone \(ms(verifications)) ms);"
                    + " aws s3 cp --recursive: median \(ms([copy])) ms (each \(ms(copies)); aws --version alone \(ms([startup])) ms);"
                    + " \(String(format: "%.2f", restore / copy))x")
        }
    }
}
