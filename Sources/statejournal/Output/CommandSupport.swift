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

    @Flag(help: "Print one JSON document (schemaVersion 1; see the CommandLineJSON documentation article).")
    var json = false

    var url: URL { URL(fileURLWithPath: directory) }
}

/// Runs a command body, turning its errors into one sentence on standard error and the exit
/// status of ``ExitStatus``.
func reportingErrors(_ body: () throws -> Void) throws {
    StandardStream.prepare()
    do {
        try body()
    } catch let error as JournalError {
        printError(ExitStatus.message(for: error))
        throw ExitCode(ExitStatus(for: error).rawValue)
    } catch let failure as CommandFailure {
        printError(failure.message)
        throw ExitCode(failure.status.rawValue)
    } catch let error as StandardOutputError {
        printError("\(error).")
        throw ExitCode(ExitStatus.ioError.rawValue)
    }
}

func printError(_ message: String) {
    StandardStream.writeError("statejournal: " + escapingControlCharacters(message) + "\n")
}

/// `text` with every control character but the line feed and the tab, and every bidirectional
/// override, written as a `\u{…}` escape: messages quote names and bytes read from stores, buckets and servers, and none of them
/// may move a terminal's cursor, clear its screen or set its title.
func escapingControlCharacters(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: isEscaped) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
        if isEscaped(scalar) {
            result += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}

private func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    return (value < 0x20 && value != 0x0A && value != 0x09) || (0x7F...0x9F).contains(value)
        || (0x2028...0x202E).contains(value) || (0x2066...0x2069).contains(value) || value == 0x200E
        || value == 0x200F
}

/// Prints an `Encodable` value (`bench`'s report) as pretty, key-sorted JSON with
/// `schemaVersion`: added to the value's own fields when it encodes as an object, and beside it,
/// under `value`, when it does not.
func printJSON<Value: Encodable>(_ value: Value) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(date.iso8601)
    }
    let text = String(decoding: try encoder.encode(value), as: UTF8.self)
    let version = "\"schemaVersion\" : \(jsonSchemaVersion)"
    if text.hasPrefix("{\n") {
        print("{\n  " + version + ",\n" + text.dropFirst(2))
    } else if text == "{}" || text == "{\n\n}" {
        print("{\n  " + version + "\n}")
    } else {
        let indented = text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n  ")
        print("{\n  " + version + ",\n  \"value\" : " + indented + "\n}")
    }
}

/// Formats rows as an aligned table; numbers align right. `styles` colour whole columns.
func table(
    _ header: [String], _ rows: [[String]], rightAligned: Set<Int> = [], styles: [Int: Style] = [:]
) -> String {
    let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
    func line(_ cells: [String], isHeader: Bool) -> String {
        let text = cells.enumerated().map { column, cell in
            let padding = String(repeating: " ", count: widths[column] - cell.count)
            let styled = isHeader ? Style.bold.apply(cell) : styles[column].map { $0.apply(cell) } ?? cell
            return rightAligned.contains(column) ? padding + styled : styled + padding
        }.joined(separator: "  ")
        return String(text.reversed().drop { $0 == " " }.reversed())
    }
    return ([line(header, isHeader: true)] + rows.map { line($0, isHeader: false) }).joined(separator: "\n")
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

    /// Parses a time given on the command line: RFC 3339 with or without fractional seconds (with
    /// `Z` or an offset), as the commands print it; `now`; or a time relative to now: a minus sign,
    /// a number and a unit, `s`, `m`, `h`, `d` or `w` (`-30s`, `-5m`, `-2h`, `-1d`, `-1.5h`).
    /// `nil` when it is none of these.
    init?(commandLine text: String, now: Date = Date()) {
        if text == "now" {
            self = now
        } else if let date = try? Date(text, strategy: Self.rfc3339) {
            self = date
        } else if let date = try? Date(text, strategy: .iso8601) {
            self = date
        } else if text.hasPrefix("-"), let unit = text.last,
            let seconds = ["s": 1.0, "m": 60, "h": 3600, "d": 86400, "w": 604_800][String(unit)],
            let amount = Double(text.dropFirst().dropLast()), amount.isFinite, amount >= 0,
            text.dropFirst().dropLast().allSatisfy({ $0.isNumber || $0 == "." })
        {
            self = now.addingTimeInterval(-amount * seconds)
        } else {
            return nil
        }
    }

    /// What a time option takes, for its help and its error message.
    static let commandLineForms =
        "an RFC 3339 time as log prints it (2026-11-21T10:00:00.250Z), or a time before now such as -30s, -5m, "
        + "-2h or -1d"
}

/// Parses a time option's value, or throws a usage error naming the option.
func parseTime(_ text: String, option: String) throws -> Date {
    guard let date = Date(commandLine: text) else {
        throw ValidationError("\(option) takes \(Date.commandLineForms), not \"\(text)\".")
    }
    return date
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
