import ArgumentParser
import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#endif

/// The store directory every inspecting command takes, and `--json`.
struct StoreOptions: ParsableArguments {
    @Argument(help: "The store directory.", completion: .directory)
    var directory: String

    @Flag(help: "Print JSON (field names are stable and documented in the README).")
    var json = false

    var url: URL { URL(fileURLWithPath: directory) }
}

/// Runs a command body, turning a `JournalError` into one clear sentence on standard error and an
/// exit status: 2 when the directory holds no store, 1 otherwise.
func reportingErrors(_ body: () throws -> Void) throws {
    StandardStream.prepare()
    do {
        try body()
    } catch let error as JournalError {
        printError(error.message)
        throw ExitCode(error.code == .notAStore || error.code == .unsupportedFormat ? 2 : 1)
    }
}

func printError(_ message: String) {
    StandardStream.writeError("statejournal: " + message + "\n")
}

/// Prints a value as pretty, key-sorted JSON.
func printJSON<Value: Encodable>(_ value: Value) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(date.iso8601)
    }
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// Progress lines for long work, on standard error, only when it is a terminal.
struct Progress {
    let enabled = isatty(STDERR_FILENO) != 0

    func update(_ text: String) {
        guard enabled else { return }
        StandardStream.writeError("\r\u{1B}[2K" + text)
    }

    func finish() {
        guard enabled else { return }
        StandardStream.writeError("\r\u{1B}[2K")
    }
}

/// Formats rows as an aligned table; numbers align right.
func table(_ header: [String], _ rows: [[String]], rightAligned: Set<Int> = []) -> String {
    let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { column, cell in
            let padding = String(repeating: " ", count: widths[column] - cell.count)
            return rightAligned.contains(column) ? padding + cell : cell + padding
        }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
    }
    return ([line(header)] + rows.map(line)).joined(separator: "\n")
}

extension Date {
    /// RFC 3339 in UTC with milliseconds, the precision of commit times: what `log`, `show` and
    /// `history` print, and what `--at` takes back.
    var iso8601: String {
        // Rounded to the millisecond here, not by the formatter, which truncates: a commit time of
        // .928 s is stored as a Double just below it.
        let milliseconds = Int64((timeIntervalSince1970 * 1000).rounded())
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let whole = fraction < 0 ? seconds - 1 : seconds
        let text = Date(timeIntervalSince1970: Double(whole)).formatted(.iso8601)
        return String(text.dropLast()) + String(format: ".%03dZ", (fraction + 1000) % 1000)
    }

    static let rfc3339 = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// Parses a time given on the command line: RFC 3339 with or without fractional seconds, as
    /// the commands print it; `nil` when it is neither.
    init?(commandLine text: String) {
        if let date = try? Date(text, strategy: Self.rfc3339) {
            self = date
        } else if let date = try? Date(text, strategy: .iso8601) {
            self = date
        } else {
            return nil
        }
    }
}

/// Parses a restoration path given on the command line.
func parsePath(_ text: String) throws -> RestorationPath {
    do {
        return try RestorationPath(parsing: text)
    } catch let error as JournalError {
        throw ValidationError(error.message)
    }
}

extension String {
    /// The string right-aligned in `width` columns.
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
