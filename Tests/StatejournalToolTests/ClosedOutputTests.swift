import Foundation
import StateJournalTestSupport
import Testing

/// `soak` and the other streaming commands stop cleanly when their standard output goes away:
/// a clear message, exit status 74 (EX_IOERR), and a store that checks clean. Never a trap.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct ClosedOutputTests {
    @Test func soakStartedWithoutStandardOutputSaysSoAndWritesNothing() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec \"$0\" soak \"$1\" --seconds 5 >&-", ToolRunner.binary.path, store]
        let error = Pipe()
        process.standardError = error
        try process.run()
        let message = String(decoding: error.fileHandleForReading.readToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 74, "\(message)")
        #expect(message.contains("standard output is closed"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test func soakWhoseReaderStopsReadingAFullPipeStopsWithAMessageAndLeavesAGoodStore() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let process = Process()
        process.executableURL = ToolRunner.binary
        process.arguments = ["soak", store, "--seconds", "30", "--durability", "none"]
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Let the pipe fill (nobody reads it), then go away.
        Thread.sleep(forTimeInterval: 1.5)
        try output.fileHandleForReading.close()
        let message = String(decoding: error.fileHandleForReading.readToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 74, "\(message)")
        #expect(message.contains("stopped after epoch"), "\(message)")
        let check = try ToolRunner.run(["soak", store, "--check"])
        #expect(check.status == 0, "\(check.standardOutput) \(check.standardError)")
    }
}
