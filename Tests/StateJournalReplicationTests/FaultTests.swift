import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif

/// The `statejournal` binary next to the test bundle.
let statejournalBinary = BuiltExecutable.url(of: "statejournal")

/// Starts `statejournal` with arguments; output goes to files in `logs`.
func startTool(_ arguments: [String], environment: [String: String], logs: URL, name: String) throws -> Process {
    let process = Process()
    process.executableURL = statejournalBinary
    process.arguments = arguments
    process.environment = environment
    FileManager.default.createFile(atPath: logs.appendingPathComponent("\(name).out").path, contents: nil)
    FileManager.default.createFile(atPath: logs.appendingPathComponent("\(name).err").path, contents: nil)
    process.standardOutput = FileHandle(forWritingAtPath: logs.appendingPathComponent("\(name).out").path)
    process.standardError = FileHandle(forWritingAtPath: logs.appendingPathComponent("\(name).err").path)
    try process.run()
    return process
}

/// Waits for a process without `waitUntilExit` (which can wait for ever when called from a task);
/// `nil` after `timeout`, which only catches a hang (a loaded machine can take minutes).
func waitForExit(_ process: Process, timeout: Duration = .seconds(600)) async -> Int32? {
    let deadline = ContinuousClock.now + timeout
    while process.isRunning {
        if ContinuousClock.now > deadline { return nil }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return process.terminationStatus
}

extension GatewayTests {
    /// The shipper and the gateway failing while an app commits.
    @Suite(.serialized) struct ReplicationFaultTests {
        @Test func aShipperKilledAtRandomPointsAlwaysLeavesAReplicaThatRestoresCleanToAPrefixOfTheStore() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "killed")
            let directory = try temporaryDirectory("kill")
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = directory.appendingPathComponent("store")
            let environment = gateway.childEnvironment
            let writer = try startTool(
                [
                    "soak", store.path, "--seconds", "30", "--durability", "everyCommit", "--objects", "50", "--seed",
                    "7",
                ],
                environment: environment, logs: directory, name: "soak")
            var generator = SystemRandomNumberGenerator()
            let restorer = ReplicaRestorer(from: location, configuration: gateway.configuration())
            var restoredEpochs: [UInt64] = []
            var kills = 0
            while writer.isRunning && kills < 20 {
                let shipper = try startTool(
                    ["replicate", store.path, "--to", location.description, "--interval", "0.1"],
                    environment: environment,
                    logs: directory, name: "replicate-\(kills)")
                try await Task.sleep(for: .milliseconds(Int64.random(in: 100...1200, using: &generator)))
                kill(shipper.processIdentifier, SIGKILL)
                _ = await waitForExit(shipper)
                kills += 1
                let restored = directory.appendingPathComponent("restored-\(kills)")
                let report: RestoreReport
                do {
                    report = try await restorer.restore(into: restored)
                } catch let error as ReplicationError where error.code == .nothingShipped {
                    continue  // killed before its first generation
                }
                #expect(report.damage.isEmpty)
                #expect(StoreInspector.verify(restored).status == .clean)
                // Every epoch restored is the writer's: its deterministic states match at each one.
                let check = try startTool(
                    ["soak", restored.path, "--check", "--objects", "50", "--seed", "7"], environment: environment,
                    logs: directory, name: "check-\(kills)")
                #expect(await waitForExit(check) == 0, "soak --check failed on the restore after kill \(kills)")
                let local = try JournalReader(at: store).history().last?.epoch ?? 0
                #expect(report.epoch.epoch <= local)
                // The restored epochs are a run of the writer's: consecutive, ending at or before its last.
                let restoredLog = try StoreInspector(at: restored).log().map(\.epoch)
                #expect(restoredLog == Array((restoredLog.first ?? 1)...report.epoch.epoch))
                restoredEpochs.append(report.epoch.epoch)
                try? FileManager.default.removeItem(at: restored)
            }
            #expect(await waitForExit(writer) == 0)
            #expect(restoredEpochs.count >= 3, "too few kills happened after a first generation: \(restoredEpochs)")
            #expect(restoredEpochs == restoredEpochs.sorted())
            // One clean run after the writer stopped ships everything.
            let last = try startTool(
                ["replicate", store.path, "--to", location.description, "--interval", "0.1"], environment: environment,
                logs: directory, name: "replicate-last")
            try await Task.sleep(for: .seconds(1))
            kill(last.processIdentifier, SIGTERM)
            #expect(await waitForExit(last) == 0)
            let final = try await restorer.restore(into: directory.appendingPathComponent("final"))
            #expect(try final.epoch.epoch == JournalReader(at: store).history().last?.epoch)
        }

        @Test func theAppKeepsCommittingWhileTheGatewayIsDownAndTheReplicaCatchesUpAfter() async throws {
            let gateway = try Gateway.required()
            guard let pidFile = gateway.pidFile,
                let pidText = try? String(contentsOfFile: pidFile, encoding: .utf8),
                let pid = Int32(pidText.trimmingCharacters(in: .whitespacesAndNewlines))
            else {
                Issue.record(
                    "The gateway's env file names no radosgw pid file (S3_RGW_PID_FILE); start it with .ci/ceph-rgw-start."
                )
                return
            }
            let commandLine = try #require(
                FileManager.default.contents(atPath: "/proc/\(pid)/cmdline").map {
                    String(decoding: $0, as: UTF8.self).split(separator: "\0").map(String.init)
                })
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "outage")
            let directory = try temporaryDirectory("outage")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(
                at: storeURL, options: JournalOptions(durability: .everyCommit, segmentSizeLimit: 8192))
            let logs = CapturedLogs()
            let shipper = ReplicationShipper(
                store: storeURL, to: location,
                configuration: gateway.configuration(retry: RetryPolicy(attempts: 2, baseDelay: .milliseconds(50))),
                options: ReplicationOptions(interval: .milliseconds(100), logger: logs.logger))
            let shippedEpochs = Locked<[UInt64]>([])
            await shipper.observeGenerations { report in
                if let epoch = report.lastEpoch { shippedEpochs.withLock { $0.append(epoch) } }
            }
            let running = Task { try await shipper.run() }
            try commit(journal, count: 20)
            // A time limit only for a hang: a loaded machine can take minutes for what takes a
            // moment on an idle one.
            let hangGuard = ContinuousClock.now + .seconds(600)
            func failedPasses() -> Int { logs.entries(.warning, containing: "shipping failed").count }
            while shippedEpochs.withLock({ $0.last ?? 0 }) < 20 {
                try #require(ContinuousClock.now < hangGuard, "the first 20 epochs were never shipped")
                try await Task.sleep(for: .milliseconds(20))
            }

            // The object store goes away: radosgw is killed, and the app goes on committing. It is
            // started again only once the commits below are done, so a commit that waited for the
            // object store would wait until the time limit; and they go on until the shipper has
            // failed twice more, so that they are acknowledged while it keeps trying to reach it.
            kill(pid, SIGKILL)
            let failedBefore = failedPasses()
            let generationsBefore = shippedEpochs.withLock { $0.count }
            var commits = 0
            while commits < 40 || failedPasses() < failedBefore + 2 {
                try #require(
                    ContinuousClock.now < hangGuard,
                    "\(commits) commits, the shipper failing \(failedPasses() - failedBefore) times")
                try commit(journal, count: 1)
                commits += 1
                try await Task.sleep(for: .milliseconds(25))
            }
            // Each of them was acknowledged while no generation could hold it.
            #expect(
                shippedEpochs.withLock { $0.count } == generationsBefore,
                "a generation was written while the gateway was down")

            // It comes back, from the same command line, and the shipper catches up by itself.
            let restarted = Process()
            // In a session of its own, with SIGTERM deliverable (a child inherits the test process's
            // blocked signals), so that .ci/ceph-rgw-stop stops it as it stops the original.
            restarted.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            restarted.arguments =
                [
                    "python3", "-c",
                    "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); signal.signal(signal.SIGTERM, signal.SIG_DFL); os.getpgid(0) == os.getpid() or os.setsid(); os.execvp(sys.argv[1], sys.argv[1:])",
                ] + commandLine
            restarted.standardOutput = FileHandle.nullDevice
            restarted.standardError = FileHandle.nullDevice
            try restarted.run()
            try "\(restarted.processIdentifier)\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
            let local = try journal.history().last!.epoch
            let deadline = ContinuousClock.now + .seconds(600)
            var restoredEpoch: UInt64 = 0
            while ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(500))
                let target = directory.appendingPathComponent("restored-\(UUID().uuidString)")
                if let report = try? await ReplicaRestorer(from: location, configuration: gateway.configuration())
                    .restore(into: target)
                {
                    restoredEpoch = report.epoch.epoch
                    if restoredEpoch == local { break }
                }
            }
            #expect(restoredEpoch == local)
            running.cancel()
            try await running.value
            try journal.close()
        }
    }
}
