import StateJournal

/// A problem a coder met under `NSCoder`'s names, where `NSCoder` neither throws nor stops: the
/// value was not written, or the zero value was returned instead of the saved one.
///
/// Every diagnostic is logged at `warning` and listed in the pass's report
/// (``PreservationProblem/coder(_:)`` or ``RestorationDiagnostic/coder(_:)``), so that a value
/// lost this way is never lost silently.
public struct CoderDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: String, Sendable, Hashable {
        /// The saved value is of another kind than the one asked for; the zero value was returned.
        case typeMismatch
        /// The saved number does not fit the type asked for, or the value to encode does not fit
        /// a 64-bit signed integer; the zero value was returned, or nothing was written.
        case valueOutOfRange
        /// The application coder was asked to write an ``ArchiveKey``, which only the manager
        /// writes; nothing was written.
        case reservedKey
        /// The value to encode is neither a value the coder stores, nor a restorable object, nor
        /// an `NSCoding` object, or its own encoding failed; nothing was written.
        case unsupportedValue
        /// The saved object's class is not among the classes allowed by
        /// `decodeObject(of:forKey:)`, or cannot be found by its saved name; `nil` was returned.
        case classNotAllowed
    }

    /// The restoration path of the object whose coder met the problem.
    public var path: RestorationPath
    /// The key concerned.
    public var key: String
    /// What went wrong.
    public var kind: Kind
    /// The problem in a sentence.
    public var message: String

    /// Creates a diagnostic.
    ///
    /// - Parameters:
    ///   - path: The restoration path of the object whose coder met the problem.
    ///   - key: The key concerned.
    ///   - kind: What went wrong.
    ///   - message: The problem in a sentence.
    public init(path: RestorationPath, key: String, kind: Kind, message: String) {
        self.path = path
        self.key = key
        self.kind = kind
        self.message = message
    }

    /// The diagnostic in a sentence, with the path and key.
    public var description: String { "\(path), key \"\(key)\": \(message)" }
}
