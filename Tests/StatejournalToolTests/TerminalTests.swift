import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the tool does only on a terminal: colour, the pager and progress, run on a real
/// pseudo-terminal, and never on a pipe.
@Suite(.serialized, .timeLimit(.minutes(10))) struct TerminalTests {
    static let escape = "\u{1B}["

    @Test func colourOnATerminalUnlessNoColorOrNeverAndOnAPipeOnlyWithAlways() throws {
        let directory = TemporaryDirectory()
        let (store, _) = try ReadCommandTests.soakedStore(directory)
        let terminal = try PseudoTerminal.run(["log", store, "--no-pager"])
        #expect(terminal.status == 0)
        #expect(terminal.output.contains(Self.escape), "\(terminal.output.prefix(200))")
        let noColor = try PseudoTerminal.run(["log", store, "--no-pager"], environment: ["NO_COLOR": "1"])
        #expect(!noColor.output.contains(Self.escape))
        #expect(
            !(try PseudoTerminal.run(["log", store, "--no-pager", "--color", "never"])).output.contains(Self.escape))
        #expect(!(try ToolRunner.run(["log", store])).standardOutput.contains(Self.escape))
        #expect((try ToolRunner.run(["log", store, "--color", "always"])).standardOutput.contains(Self.escape))
        // JSON is never coloured.
        let json = try PseudoTerminal.run(["log", store, "--json", "--color", "always"])
        #expect(!json.output.contains(Self.escape))
    }

    @Test func humanOutputOnATerminalGoesThroughThePagerUnlessNoPager() throws {
        let directory = TemporaryDirectory()
        let (store, last) = try ReadCommandTests.soakedStore(directory)
        let paged = directory.appending("paged")
        let pager = "sh -c 'cat > \(paged)'"
        let run = try PseudoTerminal.run(["log", store], environment: ["PAGER": pager])
        #expect(run.status == 0)
        let captured = try String(contentsOfFile: paged, encoding: .utf8)
        #expect(captured.contains("EPOCH"))
        #expect(captured.contains(String(last)))
        #expect(!run.output.contains("EPOCH"), "the output went to the terminal, not the pager")
        try FileManager.default.removeItem(atPath: paged)
        let direct = try PseudoTerminal.run(["log", store, "--no-pager"], environment: ["PAGER": pager])
        #expect(direct.output.contains("EPOCH"))
        #expect(!FileManager.default.fileExists(atPath: paged))
        // Not for JSON, nor when standard output is a pipe, nor with PAGER=cat or empty.
        _ = try PseudoTerminal.run(["log", store, "--json"], environment: ["PAGER": pager])
        #expect(!FileManager.default.fileExists(atPath: paged))
        #expect(try PseudoTerminal.run(["log", store], environment: ["PAGER": ""]).output.contains("EPOCH"))
        _ = try ToolRunner.run(["log", store])
        #expect(!FileManager.default.fileExists(atPath: paged))
        // The default pager is less -FRX: output that fits on a screen is printed and less quits.
        let less = try PseudoTerminal.run(["show", store], environment: ["PAGER": nil])
        #expect(less.status == 0)
        #expect(less.output.contains("Soak/Epoch"))
    }

    @Test func progressGoesToAStandardErrorTerminalAndNeverIntoJSON() throws {
        let directory = TemporaryDirectory()
        let (store, _) = try ReadCommandTests.soakedStore(directory)
        for command in [["verify", store, "--json"], ["soak", store, "--check"], ["compact", store, "--json"]] {
            let run = try PseudoTerminal.run(command, terminalStreams: [.error])
            #expect(run.status == 0, "\(command): \(run.error)")
            #expect(run.error.contains("\r"), "\(command): no progress on the terminal: \(run.error)")
            if command.last == "--json" {
                #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(run.output.utf8)) }
            }
            let piped = try ToolRunner.run(command)
            #expect(piped.standardError.isEmpty, "\(command): progress on a pipe: \(piped.standardError)")
        }
    }
}

/// Runs the tool with standard output, standard error or both on a new pseudo-terminal.
enum PseudoTerminal {
    enum Stream { case output, error }

    struct Result {
        var status: Int32
        /// What reached standard output (the terminal's text when it is on the terminal).
        var output: String
        /// What reached standard error.
        var error: String
    }

    static func run(
        _ arguments: [String], environment changes: [String: String?] = [:], terminalStreams: Set<Stream> = [.output]
    ) throws -> Result {
        // posix_openpt, unlockpt and ptsname, as glibc makes them on Linux (Swift's Glibc module
        // does not declare them): the multiplexer, then TIOCSPTLCK and TIOCGPTN.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, UInt(0x4004_5431), &unlock) == 0,
            ioctl(master, UInt(0x8004_5430), &number) == 0
        else { throw SystemFailure(call: "open /dev/ptmx") }
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw SystemFailure(call: "open") }
        var size = winsize(ws_row: 50, ws_col: 200, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(slave, UInt(TIOCSWINSZ), &size)
        let process = Process()
        process.executableURL = ToolRunner.binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm"
        environment["NO_COLOR"] = nil
        for (key, value) in changes { environment[key] = value }
        process.environment = environment
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        let output = Pipe()
        let error = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = terminalStreams.contains(.output) ? terminal : output
        process.standardError = terminalStreams.contains(.error) ? terminal : error
        try process.run()
        close(slave)
        // Read the terminal until the tool and its pager have closed it (EIO), and the pipes to their end.
        nonisolated(unsafe) var pipedOutput = Data()
        nonisolated(unsafe) var pipedError = Data()
        let group = DispatchGroup()
        let piped = [(output, true), (error, false)].filter { !terminalStreams.contains($0.1 ? .output : .error) }
        for (pipe, isOutput) in piped {
            DispatchQueue.global().async(group: group) {
                let data = pipe.fileHandleForReading.readToEndOfFile()
                if isOutput { pipedOutput = data } else { pipedError = data }
            }
        }
        var screen = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(master, &buffer, buffer.count)
            if count > 0 {
                screen += buffer[0..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        close(master)
        process.waitUntilExit()
        group.wait()
        let text = String(decoding: screen, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        return Result(
            status: process.terminationStatus,
            output: terminalStreams.contains(.output) ? text : String(decoding: pipedOutput, as: UTF8.self),
            error: terminalStreams.contains(.error) && !terminalStreams.contains(.output)
                ? text : String(decoding: pipedError, as: UTF8.self))
    }

    struct SystemFailure: Error {
        var call: String
    }
}

extension TerminalTests {
    @Test func anErrorAfterProgressStartedIsTheLastThingOnTheTerminal() throws {
        let directory = TemporaryDirectory()
        let (store, _) = try ReadCommandTests.soakedStore(directory)
        let journal = try Journal.open(at: URL(fileURLWithPath: store))
        defer { try? journal.close() }
        let run = try PseudoTerminal.run(["compact", store], terminalStreams: [.error])
        #expect(run.status == 75)
        // The progress line was cleared before the message, and nothing was drawn after it.
        let lastLine = run.error.split(separator: "\r").last.map(String.init) ?? ""
        #expect(lastLine.hasPrefix("\u{1B}[2Kstatejournal: ") || lastLine.hasPrefix("statejournal: "), "\(run.error)")
        Thread.sleep(forTimeInterval: 0.1)
    }
}
