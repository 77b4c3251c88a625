import Foundation
import StateJournal

/// The keyed coder of one object's state: UIKit's `NSCoder` as restoration uses it.
///
/// Each object gets its own coder, so the same key in two objects never collides. Values are stored
/// in a self-describing form (``RestorableValue``), so that tools can show them without the app's
/// types. Encoding a restorable object writes a reference (its restoration path) and adds the object
/// to the preservation pass; decoding that key returns the restored object.
///
/// A coder belongs to the pass that created it and is not meant to be kept after the call it was
/// passed to.
public final class RestorationCoder {
    /// The restoration path of the object this coder belongs to. For the application coder, the
    /// reserved path `@application`.
    public let restorationPath: RestorationPath
    /// Why the state is being restored; set on the application coder during restoration, `nil`
    /// otherwise.
    public internal(set) var restorationReason: RestorationReason?

    var values: [String: RestorableValue]
    let isApplicationCoder: Bool
    let resolver: (any ReferenceResolving)?

    init(
        path: RestorationPath, values: [String: RestorableValue] = [:], isApplicationCoder: Bool = false,
        resolver: (any ReferenceResolving)? = nil
    ) {
        self.restorationPath = path
        self.values = values
        self.isApplicationCoder = isApplicationCoder
        self.resolver = resolver
    }

    /// The keys that hold a value, in no particular order.
    public var allKeys: [String] { Array(values.keys) }

    /// Whether the coder holds a value for `key`.
    ///
    /// - Parameter key: The key to look up.
    public func containsValue(forKey key: String) -> Bool { values[key] != nil }

    // MARK: - Archive keys

    /// The saved bundle version (``ArchiveKey/bundleVersion``), when the coder holds one.
    public var bundleVersion: String? { string(ArchiveKey.bundleVersion) }
    /// The saved interface idiom (``ArchiveKey/interfaceIdiom``), when the coder holds one.
    public var interfaceIdiom: String? { string(ArchiveKey.interfaceIdiom) }
    /// The saved system version (``ArchiveKey/systemVersion``), when the coder holds one.
    public var systemVersion: String? { string(ArchiveKey.systemVersion) }
    /// When the state was saved (``ArchiveKey/timestamp``), when the coder holds it.
    public var timestamp: Date? {
        if case .date(let date) = values[ArchiveKey.timestamp] { return date }
        return nil
    }

    private func string(_ key: String) -> String? {
        if case .string(let string) = values[key] { return string }
        return nil
    }

    func setReserved(_ key: String, _ value: RestorableValue?) { values[key] = value }

    // MARK: - Storing

    func store(_ value: RestorableValue, forKey key: String) throws {
        if isApplicationCoder && ArchiveKey.all.contains(key) {
            throw RestorationError(
                .reservedKey, "\"\(key)\" is an archive key that only the restoration manager writes; use another key.",
                path: restorationPath, key: key)
        }
        values[key] = value
    }

    func value(forKey key: String) throws -> RestorableValue {
        guard let value = values[key] else {
            throw RestorationError(
                .keyNotFound,
                """
                The state of \(restorationPath) has no value for \"\(key)\"; check containsValue(forKey:) first for \
                optional keys.
                """,
                path: restorationPath, key: key)
        }
        return value
    }

    func mismatch(_ expected: String, _ found: RestorableValue, _ key: String) -> RestorationError {
        RestorationError(
            .typeMismatch, "The value for \"\(key)\" in \(restorationPath) is \(found.kindName), not \(expected).",
            path: restorationPath, key: key)
    }
}

@available(*, unavailable, message: "A coder belongs to the pass that created it.")
extension RestorationCoder: Sendable {}

/// What a coder asks of the pass that owns it about restorable objects.
protocol ReferenceResolving: AnyObject {
    /// The restoration path a reference to `object` written by `coder` records, adding the object to
    /// the pass when needed; `nil` when the object cannot be preserved.
    func referencePath(for object: any StateRestoring, encodedBy coder: RestorationCoder) throws -> RestorationPath?
    /// The object restored at `path`, if any.
    func restoredObject(at path: RestorationPath) -> (any StateRestoring)?
}
