import Foundation
import StateJournalTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Guarantee 2: after a kill at any instant, the store opens to a consistent epoch no older than the
/// last one the writer acknowledged. `soak` prints `committed E` after each commit returns; it is
/// killed with SIGKILL at random moments (during commits, segment rolls and compactions), over and
/// over on the same store, and `soak --check` must find every retained epoch intact. Each test runs
/// with both workloads: the steady one, and the churn one, whose epochs define paths in several
/// batch records, so that a kill between them and the commit leaves a torn tail that defines paths.
@Suite(.serialized) struct KillTests {
    static let killsPerPolicy = Int(ProcessInfo.processInfo.environment["STATEJOURNAL_KILLS"] ?? "") ?? 12

    /// Runs `statejournal` with `arguments` (a soak), waits until it has printed its first
    /// `committed` line, so that a loaded machine cannot kill it before it opened the store, then
    /// kills it with SIGKILL 0 to 250 ms later; returns all it printed.
    /// Runs `soak` with `arguments` and kills it at a random moment after its first commit, and
    /// after `ready` holds when given (polled, for up to two minutes: on a loaded machine the soak
    /// gets there late, and the kill must not come before what the test means to interrupt).
    static func soakKilledAtRandom(
        _ arguments: [String], _ random: inout SplitMix64, after ready: (() -> Bool)? = nil
    ) throws -> String {
        let process = Process()
        process.executableURL = ToolRunner.binary
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var printed = Data()
        while !String(decoding: printed, as: UTF8.self).contains("committed ") {
            let chunk = output.fileHandleForReading.readAvailable()
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        if let ready {
            let deadline = ContinuousClock.now + .seconds(600)
            while !ready() && ContinuousClock.now < deadline && process.isRunning { usleep(10_000) }
        }
        usleep(useconds_t(random.next() % 250_000))
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        printed.append(output.fileHandleForReading.readToEndOfFile())
        return String(decoding: printed, as: UTF8.self)
    }

    @Test(arguments: ["everyCommit", "interval", "none"], ["steady", "churn"])
    func aKilledWriterLosesNothingItAcknowledged(durability: String, workload: String) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var random = SplitMix64(seed: UInt64(durability.utf8.count + workload.utf8.count))
        var kills = 0
        var highestAcknowledged: UInt64 = 0
        for _ in 0..<Self.killsPerPolicy {
            let printed = try Self.soakKilledAtRandom(
                [
                    "soak", store, "--seconds", "30", "--durability", durability, "--objects", "40", "--workload",
                    workload,
                ], &random)
            if let last = printed.split(separator: "\n").last(where: { $0.hasPrefix("committed ") }),
                let epoch = UInt64(last.dropFirst("committed ".count))
            {
                highestAcknowledged = max(highestAcknowledged, epoch)
            }
            kills += 1

            let check = try ToolRunner.run(["soak", store, "--check"])
            #expect(
                check.status == 0, "\(workload), after kill \(kills): \(check.standardOutput)\(check.standardError)")
            let log = try ToolRunner.run(["log", store, "--json"])
            let epochs = try ToolRunner.epochs(log)
            let latest = (epochs.last?["epoch"] as? NSNumber)?.uint64Value ?? 0
            #expect(
                latest >= highestAcknowledged,
                "after kill \(kills): the store ends at epoch \(latest), but \(highestAcknowledged) was acknowledged")
        }
        #expect(kills == Self.killsPerPolicy)
    }

    @Test(arguments: ["steady", "churn"])
    func aWriterKilledWhileCheckpointsAreWrittenWithCompactionOffKeepsEveryEpochSinceTheFirst(workload: String)
        throws
    {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var random = SplitMix64(seed: 77 + UInt64(workload.utf8.count))
        var highestAcknowledged: UInt64 = 0
        for kill in 1...Self.killsPerPolicy {
            // Killed only once a checkpoint exists, so that every kill lands while checkpoints are
            // being written, however slow the machine: a fixed delay killed the first soaks of a
            // loaded machine before their first checkpoint.
            let printed = try Self.soakKilledAtRandom(
                [
                    "soak", store, "--seconds", "30", "--durability", "none", "--objects", "40", "--keep-history",
                    "--workload", workload,
                ],
                &random,
                after: {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []
                    return names.contains { $0.hasPrefix("checkpoint-") }
                })
            if let last = printed.split(separator: "\n").last(where: { $0.hasPrefix("committed ") }),
                let epoch = UInt64(last.dropFirst("committed ".count))
            {
                highestAcknowledged = max(highestAcknowledged, epoch)
            }
            let check = try ToolRunner.run(["soak", store, "--check"])
            #expect(check.status == 0, "\(workload), after kill \(kill): \(check.standardOutput)\(check.standardError)")
            let epochs = try ToolRunner.epochs(try ToolRunner.run(["log", store, "--json"]))
            let numbers = epochs.compactMap { ($0["epoch"] as? NSNumber)?.uint64Value }
            #expect(numbers.first == 1, "after kill \(kill): history starts at epoch \(numbers.first ?? 0)")
            #expect(numbers == Array(1...(numbers.last ?? 1)), "after kill \(kill): a gap in the history")
            #expect((numbers.last ?? 0) >= highestAcknowledged, "after kill \(kill)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: store)
        #expect(names.contains { $0.hasPrefix("checkpoint-") }, "checkpoints were written: \(names.sorted())")
    }
}
