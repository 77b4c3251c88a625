/// An error thrown by the journal: what happened, what to do about it, and what caused it.
///
/// Match on ``code`` to react to a kind of failure; show ``message`` to a person. New codes may be
/// added in later releases, so a `switch` over codes needs a `default` case.
public struct JournalError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. An extensible set: new codes can appear in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable {
            case storeLocked, notAStore, unsupportedFormat, damaged, ioFailure, storePoisoned
            case limitExceeded, invalidPath, epochInProgress, closed, noSuchEpoch, readOnly
            case precedingEpochFailed, storeReplaced
        }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// Another writer holds the store's lock.
        public static let storeLocked = Code(.storeLocked)
        /// The directory exists but does not hold a store.
        public static let notAStore = Code(.notAStore)
        /// The store was written by a format version this library cannot read.
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// Bytes on disk failed a checksum or a structural check (strict mode, or nothing consistent).
        public static let damaged = Code(.damaged)
        /// A system call failed; ``JournalError/cause`` holds the `errno`.
        public static let ioFailure = Code(.ioFailure)
        /// A sync failed earlier, so the store refuses commits until it is reopened.
        public static let storePoisoned = Code(.storePoisoned)
        /// A path, entry or metadata item is larger than the documented limits.
        public static let limitExceeded = Code(.limitExceeded)
        /// A restoration path could not be parsed or is not allowed.
        public static let invalidPath = Code(.invalidPath)
        /// The operation needs the epoch that is being written to be committed or aborted first.
        public static let epochInProgress = Code(.epochInProgress)
        /// The journal or epoch was already closed, committed or aborted.
        public static let closed = Code(.closed)
        /// The requested epoch is not retained in the store.
        public static let noSuchEpoch = Code(.noSuchEpoch)
        /// The operation needs a writer, but the store was opened read-only.
        public static let readOnly = Code(.readOnly)
        /// An epoch submitted with ``Journal/submit(_:metadata:after:)`` was not written because the
        /// epoch it was submitted after failed; ``JournalError/cause`` holds that failure.
        public static let precedingEpochFailed = Code(.precedingEpochFailed)
        /// ``Journal/reopen()`` found another store in the journal's directory (its store ID
        /// differs): the directory was replaced while the journal was open, and the journal will
        /// not write into a store it did not open.
        public static let storeReplaced = Code(.storeReplaced)

        /// The code's name.
        public var description: String { "\(wrapped)" }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened and what to do, in a sentence or two.
    public var message: String
    /// The underlying error, such as an ``SystemError`` carrying an `errno`.
    public var cause: (any Error & Sendable)?
    /// The file involved, when there is one.
    public var file: String?
    /// The byte offset in ``file`` involved, when there is one.
    public var offset: Int64?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, cause: (any Error & Sendable)? = nil, file: String? = nil,
        offset: Int64? = nil
    ) {
        self.code = code
        self.message = message
        self.cause = cause
        self.file = file
        self.offset = offset
    }

    /// The `errno` of the first ``SystemError`` in the chain of causes, if there is one.
    public var errno: Int32? {
        var next: (any Error)? = self
        while let error = next {
            if let system = error as? SystemError { return system.errno }
            next = (error as? JournalError)?.cause
        }
        return nil
    }

    /// Whether the failure may clear by itself while the app runs, so that reopening the store later
    /// (``Journal/reopen()``) is worth trying.
    ///
    /// Transient: a failed write, sync or open (``Code/ioFailure``, ``Code/storePoisoned``, and
    /// ``Code/precedingEpochFailed`` caused by one) whose `errno` says the disk is full or over
    /// quota (`ENOSPC`, `EDQUOT`), failing (`EIO`, `ETIMEDOUT`, `ENXIO`, `ENODEV`), read-only for
    /// now (`EROFS`), busy or interrupted (`EBUSY`, `EAGAIN`, `EINTR`), or that the store's
    /// directory is gone for now (`ENOENT`, `ENOTDIR`, `ESTALE`: removed, unmounted, or remounted),
    /// and a failed sync that names no `errno`.
    ///
    /// Permanent: everything else, which needs a person: another writer holds the lock, the
    /// directory holds another store (``Code/storeReplaced``) or no store, a format this library
    /// cannot read, damage in strict mode, a permission denied, too many open files, an invalid
    /// path or an entry over the limits.
    public var isTransient: Bool {
        switch code {
        case .precedingEpochFailed:
            return (cause as? JournalError)?.isTransient ?? false
        case .ioFailure, .storePoisoned:
            guard let errno else { return code == .storePoisoned }
            return Self.transientErrnos.contains(errno)
        default:
            return false
        }
    }

    /// The `errno` values of ``isTransient``.
    static let transientErrnos: Set<Int32> = [
        ENOSPC, EDQUOT, EIO, ETIMEDOUT, ENXIO, ENODEV, EROFS, EBUSY, EAGAIN, EINTR, ENOENT, ENOTDIR, ESTALE,
    ]

    /// The code, the message, the location and the chain of causes, one per line.
    public var description: String {
        var text = "JournalError(\(code)): \(message)"
        if let file {
            text += "\n  at: \(file)" + (offset.map { " offset \($0)" } ?? "")
        }
        if let cause {
            text += "\n  cause: " + "\(cause)".replacingOccurrences(of: "\n", with: "\n  ")
        }
        return text
    }
}

/// A failed system call: its name, the `errno` it set, and the file it concerned.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call, such as `"fdatasync"`.
    public var call: String
    /// The `errno` value.
    public var errno: Int32
    /// The file the call concerned, when known.
    public var path: String?

    /// Creates a system error.
    public init(call: String, errno: Int32, path: String? = nil) {
        self.call = call
        self.errno = errno
        self.path = path
    }

    /// The failure in a line: the call, its file, the error's text and number.
    public var description: String {
        "\(call)(\(path ?? "")) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
