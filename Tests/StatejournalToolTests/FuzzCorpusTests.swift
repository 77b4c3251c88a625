import Foundation
import StateJournalTestSupport
import Testing

/// The fuzz harnesses' seed corpus, and every reproducer kept in it, replayed by the
/// `StateJournalFuzz` binary built without libFuzzer (`.ci/fuzz` runs the fuzzers themselves).
@Suite struct FuzzCorpusTests {
    static let binary = ToolRunner.binary.deletingLastPathComponent().appendingPathComponent("StateJournalFuzz")

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: FuzzCorpusTests.binary.path),
            "StateJournalFuzz is not built"))
    func everyCorpusInputReplaysWithoutACrash() throws {
        let process = Process()
        process.executableURL = Self.binary
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(printed)")
        #expect(printed.contains("none crashed"), "\(printed)")
    }
}
