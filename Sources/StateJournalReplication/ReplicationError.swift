import StateJournal

/// An error thrown while shipping a store to object storage or restoring it: what happened, what to
/// do about it, and what caused it.
///
/// Match on ``code`` to react to a kind of failure; show ``message`` to a person. New codes may be
/// added in later releases, so a `switch` over codes needs a `default` case. Descriptions never
/// contain a secret key or a session token.
public struct ReplicationError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. An extensible set: new codes can appear in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: Hashable, Sendable {
            case invalidArgument, missingCredentials, accessDenied, noSuchBucket, notS3, unavailable
            case unexpectedResponse, foreignPrefix, otherStore, damagedObject, wrongKey, missingKey
            case noSuchEpoch, nothingShipped, targetNotEmpty, store, cancelled, unauthenticated, tooSlow
            case fenced, diverged, shipperRunning
        }
        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// Another shipper of the same store to the same replica runs on this host: a second one
        /// would take the first one's lease (they have the same holder id) and fence it.
        public static let shipperRunning = Code(.shipperRunning)

        /// An argument (a URL, a key file, an option) is not usable.
        public static let invalidArgument = Code(.invalidArgument)
        /// No credentials were found in the environment or the shared credentials file.
        public static let missingCredentials = Code(.missingCredentials)
        /// The server refused the credentials or the signature (HTTP 403).
        public static let accessDenied = Code(.accessDenied)
        /// The bucket does not exist.
        public static let noSuchBucket = Code(.noSuchBucket)
        /// The endpoint answered, but not as an S3 server does.
        public static let notS3 = Code(.notS3)
        /// The server could not be reached, or kept failing, after every retry.
        public static let unavailable = Code(.unavailable)
        /// The server answered with a status this client does not expect.
        public static let unexpectedResponse = Code(.unexpectedResponse)
        /// The prefix holds objects that are not a StateJournal replica.
        public static let foreignPrefix = Code(.foreignPrefix)
        /// The prefix holds the replica of another store, or the directory a follower or a delta
        /// restore was given holds another store than the replica's.
        public static let otherStore = Code(.otherStore)
        /// An object failed its checksum or its structural checks.
        public static let damagedObject = Code(.damagedObject)
        /// An encrypted object could not be decrypted with the key that has its key id.
        public static let wrongKey = Code(.wrongKey)
        /// An object is encrypted with a key id that no configured key has, or is encrypted and no
        /// key was given.
        public static let missingKey = Code(.missingKey)
        /// An object of a replica read with a key is not sealed by it (it is not encrypted at
        /// all): someone who can write the bucket may have replaced it.
        public static let unauthenticated = Code(.unauthenticated)
        /// A response arrived more slowly than ``S3Configuration/minimumRate`` allows, and its
        /// request was cancelled: the network is congested, or the endpoint (or someone on the path)
        /// is holding the transfer open.
        public static let tooSlow = Code(.tooSlow)
        /// The requested epoch or time is not in the replica.
        public static let noSuchEpoch = Code(.noSuchEpoch)
        /// The prefix holds no replica generation to restore.
        public static let nothingShipped = Code(.nothingShipped)
        /// The directory to restore into exists and is not empty, or cannot be read.
        public static let targetNotEmpty = Code(.targetNotEmpty)
        /// Reading or writing the local store failed; ``ReplicationError/cause`` holds the
        /// ``JournalError``.
        public static let store = Code(.store)
        /// The work was cancelled.
        public static let cancelled = Code(.cancelled)
        /// Another shipper took over the replica's lease in a newer term, so this shipper stopped:
        /// what the store committed after its last generation is not in the replica. The app
        /// decides whether to stop taking writes.
        public static let fenced = Code(.fenced)
        /// The directory a follower was given holds the replica's store, but a history of its own:
        /// epochs the replica does not have, or that contradict the replica's at the same numbers
        /// (a fenced primary's store, a copy someone wrote to). Following would replace them, so
        /// the follower does not start; the message names the epochs. Move the directory away, or
        /// let the follower do it with ``ReplicaFollower/Options/setsAsideDivergedStore``.
        public static let diverged = Code(.diverged)

        /// The code's name.
        public var description: String { "\(wrapped)" }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened and what to do, in a sentence or two.
    public var message: String
    /// The underlying error, when there is one.
    public var cause: (any Error & Sendable)?
    /// The object key involved, when there is one.
    public var key: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil, key: String? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
        self.key = key
    }

    /// The code, the message, the object and the chain of causes, one per line.
    public var description: String {
        var text = "ReplicationError(\(code)): \(message)"
        if let key { text += "\n  object: \(key)" }
        if let cause { text += "\n  cause: " + "\(cause)".replacingOccurrences(of: "\n", with: "\n  ") }
        return text
    }
}
