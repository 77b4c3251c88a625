import StateJournal

/// An error of the restoration model: what happened, where (path and key), and what caused it.
///
/// Modelled on `JournalError`: match on ``code``, show ``description`` to a person.
/// New codes may be added in later releases, so a `switch` over codes needs a `default` case.
public struct RestorationError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. An extensible set: new codes can appear in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable {
            case keyNotFound, typeMismatch, reservedKey, valueOutOfRange, corruptEntry, unsupportedEntryVersion
            case restorationInProgress, duplicateKey, storeUnavailable, notOnMainActor
        }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// The coder holds no value for the key.
        public static let keyNotFound = Code(.keyNotFound)
        /// The value for the key is not of the requested type.
        public static let typeMismatch = Code(.typeMismatch)
        /// The key is one of the archive keys (``ArchiveKey``), which only the manager writes.
        public static let reservedKey = Code(.reservedKey)
        /// A number does not fit the requested type, or cannot be stored (an unsigned value above
        /// `Int64.max`).
        public static let valueOutOfRange = Code(.valueOutOfRange)
        /// The bytes of an entry are not a valid entry.
        public static let corruptEntry = Code(.corruptEntry)
        /// The entry was written by a newer entry format version than this library reads.
        public static let unsupportedEntryVersion = Code(.unsupportedEntryVersion)
        /// The operation is not allowed while a restoration is in progress.
        public static let restorationInProgress = Code(.restorationInProgress)
        /// Two ``Preserved`` properties of one object use the same key.
        public static let duplicateKey = Code(.duplicateKey)
        /// The journal failed to write or sync and has not recovered yet (``StoreHealth``): the
        /// pass was not run, and nothing was saved. ``RestorationError/cause`` holds the journal's
        /// error. Saves succeed again once the store has recovered
        /// (``RestorationManager/waitUntilHealthy(isolation:)``).
        public static let storeUnavailable = Code(.storeUnavailable)
        /// A pass reached a main-actor object (a `UIKitRestoration` controller or object) off the
        /// main thread, where its methods cannot run: run the passes that reach such objects on the
        /// main actor (from main-actor code, or through `StateRestorationService`, whose encode step
        /// runs there).
        public static let notOnMainActor = Code(.notOnMainActor)

        /// The code's name.
        public var description: String { "\(wrapped)" }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened and what to do, in a sentence or two.
    public var message: String
    /// The restoration path of the object concerned, when there is one.
    public var path: RestorationPath?
    /// The coder key concerned, when there is one.
    public var key: String?
    /// The underlying error.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What happened and what to do.
    ///   - path: The restoration path concerned.
    ///   - key: The coder key concerned.
    ///   - cause: The underlying error.
    public init(
        _ code: Code, _ message: String, path: RestorationPath? = nil, key: String? = nil,
        cause: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.key = key
        self.cause = cause
    }

    /// The code, the message, the path and key, and the chain of causes, one per line.
    public var description: String {
        var text = "RestorationError(\(code)): \(message)"
        if let path { text += "\n  path: \(path)" }
        if let key { text += "\n  key: \(key)" }
        if let cause {
            text += "\n  cause: " + "\(cause)".replacingOccurrences(of: "\n", with: "\n  ")
        }
        return text
    }
}
