import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif

extension GatewayTests {
    /// Failovers between real processes, as an operator runs them: a primary host running `soak` and
    /// `replicate`, a standby host following, and a fault: `promote --take-over` while the primary
    /// still ships, its shipper paused (`SIGSTOP`) past the lease and resumed after the takeover, a
    /// partition of the primary's shipper whose requests are delivered seconds late (through a
    /// proxy), both primary processes killed with one standby, or with two racing to take over.
    /// After each round the replica must restore to one history, the
    /// promoted store's, and a primary that lived on must stop fenced.
    ///
    /// `STATEJOURNAL_TAKEOVER_ROUNDS` runs more rounds (five by default, one of each fault).
    @Suite struct TakeoverRoundsTests {
        enum Fault: String, CaseIterable {
            case takeOverALivePrimary = "promote --take-over while the primary ships"
            case pauseThePrimaryPastItsLease =
                "SIGSTOP the primary's shipper past its lease, SIGCONT after the takeover"
            case killThePrimary = "SIGKILL both primary processes"
            case partitionHealedByLateDelivery = "the primary's requests delivered 6 s late, then passed"
            case standbysRace = "SIGKILL both primary processes, two standbys racing"
        }

        struct Round {
            var fault: Fault
            var failover: Duration
            var oldPrimaryStatus: Int32?
            var lossWindow: String
        }

        static var rounds: Int {
            ProcessInfo.processInfo.environment["STATEJOURNAL_TAKEOVER_ROUNDS"].flatMap(Int.init)
                ?? Fault.allCases.count
        }

        @Test func everyFailoverLeavesOneHistoryThePromotedStoresAndFencesALivePrimary() async throws {
            let gateway = try Gateway.required()
            var results: [Round] = []
            for index in 0..<Self.rounds {
                let fault = Fault.allCases[index % Fault.allCases.count]
                let round = try await withFaultProxy(upstream: gateway.endpoint) { proxy in
                    try await Self.round(fault, gateway: gateway, proxy: proxy)
                }
                results.append(round)
            }
            let times = results.map {
                Double($0.failover.components.attoseconds) / 1e18 + Double($0.failover.components.seconds)
            }
            .sorted()
            print(
                "takeover rounds: \(results.count); fault to the first commit on the new primary p50 \(times[times.count / 2]) s, worst \(times.last ?? 0) s; "
                    + results.map {
                        "\($0.fault): old primary exit \($0.oldPrimaryStatus.map(String.init) ?? "killed"), \($0.lossWindow)"
                    }
                    .joined(separator: "; "))
        }

        static func round(_ fault: Fault, gateway: Gateway, proxy: FaultProxy) async throws -> Round {
            let bucket = try await gateway.freshBucket()
            let replica = "s3://\(bucket)/rounds"
            let location = S3Location(bucket: bucket, prefix: "rounds")
            let directory = try temporaryDirectory("rounds")
            defer { try? FileManager.default.removeItem(at: directory) }
            let primaryURL = directory.appendingPathComponent("primary")
            let standbyURL = directory.appendingPathComponent("standby")
            let environment = gateway.childEnvironment
            let writer = try startTool(
                ["soak", primaryURL.path, "--seconds", "600", "--objects", "40", "--durability", "everyCommit"],
                environment: environment, logs: directory, name: "writer")
            defer { if writer.isRunning { kill(writer.processIdentifier, SIGKILL) } }
            try await eventually("the primary's store exists") {
                FileManager.default.fileExists(atPath: primaryURL.appendingPathComponent("MANIFEST").path)
            }
            // The primary's shipper reaches the gateway through the proxy, which the partition round
            // makes deliver its requests late.
            var primaryEnvironment = environment
            primaryEnvironment["AWS_ENDPOINT_URL"] = proxy.endpoint.absoluteString
            let shipper = try startTool(
                ["replicate", primaryURL.path, "--to", replica, "--interval", "0.2", "--lease-seconds", "2"],
                environment: primaryEnvironment, logs: directory, name: "shipper")
            defer { if shipper.isRunning { kill(shipper.processIdentifier, SIGKILL) } }
            try await eventually("the primary shipped") {
                !(try await storedGenerations(location, gateway: gateway)).isEmpty
            }
            var standby: Process
            var rival: Process?
            let faultAt: ContinuousClock.Instant
            switch fault {
            case .takeOverALivePrimary:
                let follower = try startTool(
                    ["follow", replica, "--into", standbyURL.path], environment: environment, logs: directory,
                    name: "follower")
                try await Task.sleep(for: .seconds(1.5))
                kill(follower.processIdentifier, SIGTERM)
                _ = await waitForExit(follower)
                faultAt = .now
                standby = try startTool(
                    [
                        "promote", replica, "--into", standbyURL.path, "--take-over", "--lease-seconds", "2",
                        "--interval", "0.2",
                    ],
                    environment: environment, logs: directory, name: "standby")
            case .pauseThePrimaryPastItsLease, .killThePrimary, .partitionHealedByLateDelivery, .standbysRace:
                standby = try startTool(
                    [
                        "follow", replica, "--into", standbyURL.path, "--failover", "--lease-seconds", "2",
                        "--interval", "0.2",
                    ],
                    environment: environment, logs: directory, name: "standby")
                if fault == .standbysRace {
                    rival = try startTool(
                        [
                            "follow", replica, "--into", directory.appendingPathComponent("rival").path, "--failover",
                            "--lease-seconds", "2", "--interval", "0.2",
                        ],
                        environment: environment, logs: directory, name: "rival")
                }
                try await Task.sleep(for: .seconds(1.5))
                faultAt = .now
                switch fault {
                case .killThePrimary, .standbysRace:
                    kill(shipper.processIdentifier, SIGKILL)
                    kill(writer.processIdentifier, SIGKILL)
                case .partitionHealedByLateDelivery:
                    // The open connections are reset; the shipper's requests, sent again on new
                    // ones, reach the gateway six seconds later.
                    try await proxy.set(.cut)
                    try await Task.sleep(for: .milliseconds(100))
                    try await proxy.set(.delay(milliseconds: 6000))
                default:
                    kill(shipper.processIdentifier, SIGSTOP)
                }
            }
            defer { if standby.isRunning { kill(standby.processIdentifier, SIGKILL) } }
            defer { if let rival, rival.isRunning { kill(rival.processIdentifier, SIGKILL) } }
            func promoted(_ name: String) -> Bool {
                let log = directory.appendingPathComponent("\(name).err")
                return ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("is the primary of")
            }
            try await eventually(timeout: .seconds(120), "a standby is the primary") {
                promoted("standby") || (rival != nil && promoted("rival"))
            }
            var promotedURL = standbyURL
            if let other = rival, promoted("rival") {
                // The rival won the race: it goes on as the primary, the other only follows.
                rival = standby
                standby = other
                promotedURL = directory.appendingPathComponent("rival")
            }
            if fault == .pauseThePrimaryPastItsLease { kill(shipper.processIdentifier, SIGCONT) }
            // The app starts on the promoted host, and its first commit is the failover's end.
            let newWriter = try startTool(
                [
                    "soak", promotedURL.path, "--seconds", "2", "--objects", "40", "--durability", "everyCommit",
                    "--keep-history",
                ],
                environment: environment, logs: directory, name: "new-writer")
            let marker = try #require(Self.lastEpoch(promotedURL))
            try await eventually(timeout: .seconds(60), "the promoted host committed") {
                (Self.lastEpoch(promotedURL) ?? 0) > marker
            }
            let failover = ContinuousClock.now - faultAt
            if fault == .partitionHealedByLateDelivery {
                // The requests queued while the partition lasted are delivered late, after the
                // takeover; then the partition heals.
                try await Task.sleep(for: .seconds(6))
                try await proxy.set(.pass)
            }
            #expect(await waitForExit(newWriter) == 0)
            // A primary that lived on is fenced at its next pass, while its app keeps committing.
            var oldStatus: Int32?
            if fault != .killThePrimary && fault != .standbysRace {
                oldStatus = await waitForExit(shipper, timeout: .seconds(60))
                #expect(oldStatus == 76, "the old primary's shipper stops fenced")
                kill(writer.processIdentifier, SIGKILL)
            }
            let shipperLog =
                (try? String(contentsOf: directory.appendingPathComponent("shipper.err"), encoding: .utf8)) ?? ""
            let window = shipperLog.split(separator: "\n").last {
                $0.contains("loss window") || $0.contains("Every epoch")
            }
            kill(standby.processIdentifier, SIGTERM)
            #expect(await waitForExit(standby) == 0)
            if let rival {
                // The standby that lost the race followed the winner's term, and never shipped.
                kill(rival.processIdentifier, SIGTERM)
                #expect(await waitForExit(rival) == 0)
                let terms = try await storedGenerations(location, gateway: gateway).compactMap(\.term)
                #expect(Set(terms) == [1, 2], "\(fault): one takeover, one new term")
            }

            // One history: the promoted store's, epoch for epoch.
            let restored = directory.appendingPathComponent("restored")
            let report = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: restored)
            let promotedLog = Dictionary(
                try StoreInspector(at: promotedURL).log().map { ($0.epoch, $0.timestamp) },
                uniquingKeysWith: { a, _ in a })
            for info in try StoreInspector(at: restored).log() {
                #expect(
                    promotedLog[info.epoch] == info.timestamp,
                    "\(fault): restored epoch \(info.epoch) is not the promoted store's")
            }
            #expect(
                report.epoch.epoch == Self.lastEpoch(promotedURL),
                "\(fault): the replica holds the promoted store's last epoch")
            // Every generation the replica calls its history holds its last epoch as the promoted
            // store committed it: none is a late write of the old primary.
            let history = Set(
                try await ReplicaRestorer(from: location, configuration: gateway.configuration()).generations().map(
                    \.generation))
            for generation in try await storedGenerations(location, gateway: gateway)
            where history.contains(generation.generation) {
                guard let last = generation.lastEpoch, let committed = generation.lastEpochMilliseconds,
                    let local = promotedLog[last]
                else { continue }
                #expect(
                    UInt64((local.timeIntervalSince1970 * 1000).rounded()) == committed,
                    "\(fault): generation \(generation.generation) of the history holds epoch \(last) as another store committed it"
                )
            }
            var restoredState: [String: [UInt8]] = [:]
            try JournalReader(at: restored).state().forEachEntry { restoredState["\($0)"] = Array($1) }
            var promotedState: [String: [UInt8]] = [:]
            try JournalReader(at: promotedURL).state(through: report.epoch.epoch).forEachEntry {
                promotedState["\($0)"] = Array($1)
            }
            #expect(restoredState == promotedState, "\(fault): the restored state is the promoted store's")
            // The soak workload checks every epoch across the terms, the term's marker included.
            let checked = try await runTool(
                ["soak", restored.path, "--check", "--objects", "40"], environment: environment)
            #expect(checked.status == 0, "\(fault): \(checked.output)\(checked.error)")
            return Round(
                fault: fault, failover: failover, oldPrimaryStatus: oldStatus,
                lossWindow: window.map(String.init) ?? "no loss window said")
        }

        static func lastEpoch(_ store: URL) -> UInt64? {
            try? JournalReader(at: store).fileSet().lastEpoch?.epoch
        }
    }
}
