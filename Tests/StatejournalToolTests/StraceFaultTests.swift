import Foundation
import StateJournalTestSupport
import Testing

/// The real system calls fail, not only the engine's seam: `statejournal soak` runs under
/// `strace -f -e inject=...`, which makes the chosen call fail with the chosen `errno` at its N-th
/// occurrence (or from it on, with `N+`). The tool must end with a clear error or carry on, never
/// crash; afterwards `soak --check` must pass, the store must hold every epoch the tool
/// acknowledged, and a new writer must continue on it.
///
/// CI runs the first cases; `STATEJOURNAL_STRACE_ALL=1` runs them all. Skipped, with a message, when
/// `strace` is missing or cannot trace (install it with `apt-get install strace`, as `.ci/deps` does).
@Suite(.serialized, .enabled(if: Strace.path != nil, "strace is not installed or cannot trace here"))
struct StraceFaultTests {
    struct Case: CustomStringConvertible, Sendable {
        var call: String
        var error: String
        var when: String
        var durability: String
        var description: String { "\(call) \(error) at \(when) under \(durability)" }
    }

    static let cases: [Case] = [
        // A commit's sync fails: the journal refuses further commits.
        Case(call: "fdatasync", error: "EIO", when: "15", durability: "everyCommit"),
        // The sync of a file that structures the store (a new segment, checkpoint or manifest) fails.
        Case(call: "fsync", error: "EIO", when: "3", durability: "everyCommit"),
        // Replacing the manifest fails, once and for good.
        Case(call: "rename", error: "ENOSPC", when: "1", durability: "interval"),
        // The disk fills while a record is written, once and for good.
        Case(call: "pwrite64", error: "ENOSPC", when: "120", durability: "everyCommit"),
        Case(call: "pwrite64", error: "ENOSPC", when: "300+", durability: "none"),
        // The rest run with STATEJOURNAL_STRACE_ALL=1. The dynamic loader makes about 100 `openat` calls
        // before the tool starts, so the `openat` faults come later.
        Case(call: "fdatasync", error: "EIO", when: "4", durability: "interval"),
        Case(call: "fdatasync", error: "ENOSPC", when: "40+", durability: "everyCommit"),
        Case(call: "fsync", error: "EIO", when: "10+", durability: "none"),
        Case(call: "rename", error: "EIO", when: "3+", durability: "everyCommit"),
        Case(call: "pwrite64", error: "EIO", when: "500", durability: "interval"),
        Case(call: "pwrite64", error: "EDQUOT", when: "50", durability: "everyCommit"),
        Case(call: "openat", error: "EMFILE", when: "130+", durability: "everyCommit"),
        Case(call: "openat", error: "ENOSPC", when: "110", durability: "interval"),
        Case(call: "unlink", error: "EIO", when: "2+", durability: "none"),
        Case(call: "ftruncate", error: "EIO", when: "1+", durability: "everyCommit"),
        Case(call: "pread64", error: "EIO", when: "5", durability: "none"),
    ]

    static var selectedCases: [Case] {
        ProcessInfo.processInfo.environment["STATEJOURNAL_STRACE_ALL"] == "1" ? cases : Array(cases.prefix(5))
    }

    @Test(arguments: StraceFaultTests.selectedCases)
    func aFailingSystemCallEndsWithAClearErrorAndLosesNothingAcknowledged(_ fault: Case) throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let trace = directory.appending("trace")
        var highestAcknowledged: UInt64 = 0
        // A first run without faults, so that the faulty one reopens a store with history.
        let first = try ToolRunner.run([
            "soak", store, "--seconds", "0.3", "--objects", "30", "--durability", fault.durability,
        ])
        #expect(first.status == 0, "\(first.standardError)")
        highestAcknowledged = Self.lastCommitted(first.standardOutput)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Strace.path!)
        process.arguments = [
            "-f", "-o", trace, "-e", "trace=\(fault.call)",
            "-e", "inject=\(fault.call):error=\(fault.error):when=\(fault.when)",
            // Enough commits for the call to be reached however loaded the machine is.
            ToolRunner.binary.path, "soak", store, "--seconds", "1.5", "--at-least", "700", "--objects", "30",
            "--durability", fault.durability,
        ]
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readToEndOfFile(), as: UTF8.self)
        let complaint = String(decoding: error.fileHandleForReading.readToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        highestAcknowledged = max(highestAcknowledged, Self.lastCommitted(printed))
        let injected =
            (try? String(contentsOfFile: trace, encoding: .utf8))?.components(separatedBy: "(INJECTED)").count ?? 1
        #expect(injected > 1, "strace injected no fault into \(fault.call); the tool made too few calls")

        #expect(
            process.terminationReason == .exit, "the tool died of signal \(process.terminationStatus): \(complaint)")
        #expect(!complaint.contains("Fatal error"), "\(complaint)")
        if process.terminationStatus != 0 {
            // EX_IOERR: a read, write or sync failed.
            #expect(process.terminationStatus == 74, "exit status \(process.terminationStatus): \(complaint)")
            #expect(complaint.hasPrefix("statejournal: "), "an unclear error: \(complaint)")
        }

        if ProcessInfo.processInfo.environment["STATEJOURNAL_TEST_VERBOSE"] == "1" {
            let firstLine = complaint.split(separator: "\n").first.map(String.init) ?? ""
            print(
                """
                strace \(fault): \(injected - 1) injected, exit \(process.terminationStatus), acknowledged \
                \(highestAcknowledged) \(firstLine)
                """
            )
        }
        try Self.expectIntact(store, acknowledged: highestAcknowledged, after: "the faulty run")
        // A new writer continues from what reached the disk.
        let next = try ToolRunner.run([
            "soak", store, "--seconds", "0.3", "--objects", "30", "--durability", fault.durability,
        ])
        #expect(next.status == 0, "the writer after the faulty run failed: \(next.standardError)")
        highestAcknowledged = max(highestAcknowledged, Self.lastCommitted(next.standardOutput))
        try Self.expectIntact(store, acknowledged: highestAcknowledged, after: "the next run")
    }

    static func lastCommitted(_ printed: String) -> UInt64 {
        printed.split(separator: "\n").last(where: { $0.hasPrefix("committed ") }).flatMap {
            UInt64($0.dropFirst("committed ".count))
        } ?? 0
    }

    static func expectIntact(_ store: String, acknowledged: UInt64, after: String) throws {
        let check = try ToolRunner.run(["soak", store, "--check"])
        #expect(check.status == 0, "soak --check after \(after): \(check.standardOutput)\(check.standardError)")
        let log = try ToolRunner.run(["log", store, "--json"])
        let epochs = try ToolRunner.epochs(log)
        let latest = (epochs.last?["epoch"] as? NSNumber)?.uint64Value ?? 0
        #expect(
            latest >= acknowledged,
            "after \(after) the store ends at epoch \(latest), but \(acknowledged) was acknowledged")
    }
}

/// The `strace` binary, when one is installed and can trace here (ptrace may be forbidden in a container).
enum Strace {
    static let path: String? = {
        for candidate in ["/usr/bin/strace", "/bin/strace", "/usr/local/bin/strace"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            let probe = Process()
            probe.executableURL = URL(fileURLWithPath: candidate)
            probe.arguments = ["-f", "-o", "/dev/null", "/bin/true"]
            probe.standardError = FileHandle.nullDevice
            guard (try? probe.run()) != nil else { return nil }
            probe.waitUntilExit()
            return probe.terminationStatus == 0 ? candidate : nil
        }
        return nil
    }()
}
