import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// When human output is coloured.
enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, always, never
}

/// `--color` and `--no-pager`, for the commands that print human output.
struct OutputOptions: ParsableArguments {
    @Option(
        name: .customLong("color"),
        help: "Colour human output: auto (when standard output is a terminal and NO_COLOR is unset), always or never.")
    var color: ColorChoice = .auto

    @Flag(
        name: .customLong("no-pager"),
        help: "Do not page human output on a terminal (default pager: $PAGER, or less -FRX).")
    var noPager = false
}

/// What the process's terminal and environment decide about colour and paging.
enum Terminal {
    /// Whether to colour: `always` and `never` decide; `auto` colours when standard output is a
    /// terminal, `NO_COLOR` is unset or empty (https://no-color.org) and `TERM` is not `dumb`.
    static func colors(_ choice: ColorChoice, outputIsTerminal: Bool, environment: [String: String]) -> Bool {
        switch choice {
        case .always: return true
        case .never: return false
        case .auto:
            return outputIsTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
        }
    }

    /// The pager's shell command, or `nil` for none: human output to a terminal goes through
    /// `PAGER` (none when it is empty or `cat`), or `less -FRX`, which quits at once when the
    /// output fits on one screen, keeps colours and leaves the text on the screen.
    static func pager(disabled: Bool, outputIsTerminal: Bool, environment: [String: String]) -> String? {
        guard !disabled, outputIsTerminal else { return nil }
        if let pager = environment["PAGER"] {
            let trimmed = pager.trimmingCharacters(in: .whitespaces)
            return trimmed.isEmpty || trimmed == "cat" ? nil : trimmed
        }
        return "less -FRX"
    }

    /// Sets up colour and the pager for a command's human output (`json` turns both off) and runs
    /// `body`; the pager is waited for before returning.
    static func withHumanOutput<Result>(_ options: OutputOptions, json: Bool, _ body: () throws -> Result) rethrows
        -> Result
    {
        let environment = ProcessInfo.processInfo.environment
        let isTerminal = isatty(STDOUT_FILENO) == 1
        Style.enabled = !json && colors(options.color, outputIsTerminal: isTerminal, environment: environment)
        let pager =
            json ? nil : pager(disabled: options.noPager, outputIsTerminal: isTerminal, environment: environment)
        let running = pager.flatMap(Pager.start)
        defer { running?.finish() }
        return try body()
    }
}

/// A terminal colour or weight, applied only when colour is on.
enum Style {
    case bold, dim, red, green, yellow, cyan

    nonisolated(unsafe) static var enabled = false

    private var code: String {
        switch self {
        case .bold: "1"
        case .dim: "2"
        case .red: "31"
        case .green: "32"
        case .yellow: "33"
        case .cyan: "36"
        }
    }

    func apply(_ text: String) -> String {
        Self.enabled && !text.isEmpty ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}

/// A pager reading the process's standard output.
final class Pager {
    private let process: Process

    private init(process: Process) { self.process = process }

    /// Starts `command` with `/bin/sh -c` and points standard output at it; `nil` when it cannot
    /// start, and output goes straight to the terminal.
    static func start(_ command: String) -> Pager? {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.standardInput = FileHandle(fileDescriptor: descriptors[0], closeOnDealloc: false)
        var environment = ProcessInfo.processInfo.environment
        if environment["LESS"] == nil { environment["LESS"] = "FRX" }
        process.environment = environment
        do {
            try process.run()
        } catch {
            close(descriptors[0])
            close(descriptors[1])
            return nil
        }
        close(descriptors[0])
        fflush(nil)
        dup2(descriptors[1], STDOUT_FILENO)
        close(descriptors[1])
        return Pager(process: process)
    }

    /// Ends the output and waits for the pager to quit.
    func finish() {
        fflush(nil)
        let null = open("/dev/null", O_WRONLY)
        dup2(null, STDOUT_FILENO)
        close(null)
        process.waitUntilExit()
    }
}

/// Progress for long work, on standard error, only when it is a terminal: the current step and
/// the seconds spent, redrawn on one line until ``finish()`` clears it. Standard output is never
/// touched, so `--json` stays whole.
final class Progress: @unchecked Sendable {
    private let enabled: Bool
    private let lock = NSLock()
    private var message = ""
    private var started = Date()
    private var ticker: Thread?
    private var finished = false

    init(enabled: Bool = isatty(STDERR_FILENO) == 1) { self.enabled = enabled }

    /// Clears the line when the work ends by an error, before the error is printed.
    deinit { finish() }

    /// Shows `text` as the current step, and starts the ticker the first time.
    func update(_ text: String) {
        guard enabled else { return }
        lock.lock()
        message = text
        let start = ticker == nil
        if start {
            started = Date()
            // Holds the progress only while drawing, so that it goes (and clears its line) as soon
            // as the command lets go of it.
            let thread = Thread { [weak self] in
                while self?.draw() == true { Thread.sleep(forTimeInterval: 0.2) }
            }
            ticker = thread
            thread.start()
        }
        lock.unlock()
        _ = draw()
    }

    /// Draws the line; `false` once finished.
    private func draw() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !finished else { return false }
        let seconds = Int(Date().timeIntervalSince(started))
        StandardStream.writeError("\r\u{1B}[2K" + message + (seconds > 0 ? " \(seconds)s" : ""))
        return true
    }

    /// Clears the line; nothing more is drawn.
    func finish() {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        guard !finished else { return }
        finished = true
        StandardStream.writeError("\r\u{1B}[2K")
    }
}
