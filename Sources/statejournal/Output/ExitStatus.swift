import ArgumentParser
import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#endif

/// The tool's exit statuses: the same meaning in every command. Above 63 they are the BSD
/// `sysexits.h` codes.
enum ExitStatus: Int32, CaseIterable {
    /// Done; for `verify`, the store is clean.
    case success = 0
    /// Damage found: `verify` found damage that replay stops at (the store is usable up to a
    /// consistent epoch), `show` read a latest state whose replay stopped at damage, or
    /// `soak --check` found an epoch that does not hold what the writer committed.
    case damage = 1
    /// The command line is wrong: an unknown command or option, a malformed value, or an epoch,
    /// time or path this store does not hold.
    case usage = 2
    /// EX_DATAERR: the store's data cannot be used: it was written in a newer format, or nothing
    /// consistent is left to replay.
    case dataError = 65
    /// EX_NOINPUT: there is no store: the directory does not exist or holds no MANIFEST.
    case noInput = 66
    /// EX_SOFTWARE: an internal error of the tool.
    case software = 70
    /// EX_CANTCREAT: `rewind` cannot create its new store (the directory is not empty, or its
    /// parent does not exist).
    case cannotCreate = 73
    /// EX_IOERR: a read, write or sync failed, or standard output went away.
    case ioError = 74
    /// EX_TEMPFAIL: a writer holds the store's lock (`compact`, `soak`); try again once it closed
    /// the store. For `replicate`: another `replicate` of the store to the same replica runs on
    /// this host.
    case locked = 75
    /// EX_PROTOCOL: `replicate` (or `promote`, `follow --failover`) was fenced: another shipper took
    /// over the replica's lease in a newer term, so the epochs this store committed after its last
    /// shipped generation are not in the replica; or the store does not continue the history
    /// another host shipped (it diverged, or ends before it), so it is not shipped; or `follow` found
    /// a store with a history of its own in its directory, and did not overwrite it.
    case fenced = 76
    /// EX_NOPERM: permission to read or write the store was denied.
    case noPermission = 77
    /// Stopped by SIGTERM or SIGINT before it finished (`replicate` ships what is committed first
    /// and exits 0; `restore` removes what it wrote): 128 plus SIGTERM's number, as a shell reports it.
    case interrupted = 143

    /// The name of the code in `sysexits.h`, when it is one.
    var sysexitsName: String? {
        switch self {
        case .dataError: "EX_DATAERR"
        case .noInput: "EX_NOINPUT"
        case .software: "EX_SOFTWARE"
        case .cannotCreate: "EX_CANTCREAT"
        case .ioError: "EX_IOERR"
        case .locked: "EX_TEMPFAIL"
        case .fenced: "EX_PROTOCOL"
        case .noPermission: "EX_NOPERM"
        default: nil
        }
    }

    /// A line of the table in `statejournal --help`.
    var summary: String {
        switch self {
        case .success: "success; verify: the store is clean"
        case .damage: "damage found (verify, show), or soak --check found a mismatch"
        case .usage: "usage: bad option or value, or an epoch, time or path not in the store"
        case .dataError: "unusable store data (a newer format, nothing consistent)"
        case .noInput: "no store: the directory does not exist or holds no MANIFEST"
        case .software: "internal error of statejournal"
        case .cannotCreate: "rewind cannot create its new store"
        case .ioError: "a read, write or sync failed, or standard output went away"
        case .locked: "a writer holds the store's lock, or another replicate ships it there; try again later"
        case .fenced: "replicate was fenced (another shipper took over), or its store does not continue the replica"
        case .noPermission: "permission denied"
        case .interrupted: "restore stopped by SIGTERM or SIGINT; it removed what it wrote"
        }
    }

    /// The exit statuses as the root command's help shows them.
    static var helpTable: String {
        "Exit status:\n"
            + allCases.map { status in
                let code = String(status.rawValue).leftPadded(3)
                return "  \(code)  \(status.sysexitsName.map { "\($0): " } ?? "")\(status.summary)"
            }.joined(separator: "\n")
    }

    /// The status for a library error.
    init(for error: JournalError) {
        switch error.code {
        case .notAStore: self = .noInput
        case .unsupportedFormat, .damaged, .limitExceeded: self = .dataError
        case .storeLocked: self = .locked
        case .noSuchEpoch, .invalidPath: self = .usage
        case .ioFailure, .storePoisoned:
            let errno = (error.cause as? SystemError)?.errno
            self = errno == EACCES || errno == EPERM || errno == EROFS ? .noPermission : .ioError
        default: self = .software
        }
    }

    /// A library message without the names of library functions it gives for code.
    static func clean(_ message: String) -> String {
        message.replacingOccurrences(of: " (or `history()` in code)", with: "")
            .replacingOccurrences(of: "`statejournal log`", with: "statejournal log")
    }

    /// A library error's message in the tool's terms: no names of library functions.
    static func message(for error: JournalError) -> String {
        var message = clean(error.message)
        if let cause = error.cause as? SystemError, !message.contains(String(cString: strerror(cause.errno))) {
            message += " (\(String(cString: strerror(cause.errno))))"
        }
        return message
    }
}

/// An error the tool reports itself: one sentence (or a sentence and suggestions), and its status.
struct CommandFailure: Error {
    var status: ExitStatus
    var message: String

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }
}

extension StateJournalCommand {
    /// Parses and runs the command; every error ends the process with its ``ExitStatus``.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            finish(with: error)
        }
    }

    private static func finish(with error: any Error) -> Never {
        StandardStream.prepare()
        switch error {
        case let failure as CommandFailure:
            printError(failure.message)
            Glibc.exit(failure.status.rawValue)
        case let error as JournalError:
            printError(ExitStatus.message(for: error))
            Glibc.exit(ExitStatus(for: error).rawValue)
        case let error as StandardOutputError:
            printError("\(error).")
            Glibc.exit(ExitStatus.ioError.rawValue)
        case is ExitCode, is CleanExit:
            exit(withError: error)
        default:
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            if code == .validationFailure {
                // Usage errors exit with 2, as POSIX tools do; sysexits' EX_USAGE (64) is not used.
                StandardStream.writeError(fullMessage(for: error) + "\n")
                Glibc.exit(ExitStatus.usage.rawValue)
            }
            if error is CocoaError || error is SystemError {
                printError("\(error)")
                Glibc.exit(ExitStatus.ioError.rawValue)
            }
            printError("internal error: \(error). Please report it with the command that failed.")
            Glibc.exit(ExitStatus.software.rawValue)
        }
    }

    /// The root command's discussion in `--help`.
    static let helpDiscussion = """
        Every read command opens the store read-only, beside a live writer if there is one. Times are RFC 3339 \
        in UTC with milliseconds, as log prints them; every option that takes a time also takes a time before \
        now, such as -5m. Human output is coloured on a terminal (--color, NO_COLOR) and paged through \
        $PAGER or less -FRX (--no-pager); --json prints one document with a schemaVersion.

        \(ExitStatus.helpTable)
        """
}
