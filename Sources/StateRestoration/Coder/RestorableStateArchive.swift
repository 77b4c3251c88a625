import Foundation
import StateJournal

/// One object's restorable state as bytes, and back: for apps that save and resume a single task
/// outside the journal, as ResearchKit's `restorationData` does with `NSKeyedArchiver`.
///
/// The object encodes into a ``RestorationCoder`` as in a preservation pass, and decodes from one
/// as in a restoration, so the same `encodeRestorableState(with:)` and
/// `decodeRestorableState(with:)` serve both. The bytes are one entry in the entry encoding (see
/// the article "Entry Encoding"), readable by ``RestorableEntry/init(decoding:)`` and by tools.
///
/// An archive holds no other object: a reference to a restorable object is saved as null and
/// listed in ``diagnostics``, as every problem met under `NSCoder`'s names is.
///
/// ```swift
/// import StateRestoration
///
/// final class SurveyTask: StateRestoring {
///     var step = 0
///     func encodeRestorableState(with coder: RestorationCoder) throws { coder.encode(step, forKey: "step") }
///     func decodeRestorableState(with coder: RestorationCoder) throws { step = coder.decodeInteger(forKey: "step") }
/// }
///
/// func saveAndResume() throws {
///     let task = SurveyTask()
///     task.step = 3
///     let archive = try RestorableStateArchive(archiving: task)
///     let resumed = SurveyTask()
///     try RestorableStateArchive.restore(resumed, from: archive.data)
///     print(resumed.step)  // 3
/// }
/// ```
public struct RestorableStateArchive: Sendable {
    /// The restoration path the coder of an archived object has.
    public static let path = RestorationPath(["@archive"])

    /// The archived state.
    public var data: Data
    /// What could not be archived as asked (values not written, references saved as null).
    public var diagnostics: [CoderDiagnostic]

    /// Archives the restorable state of `object`: calls its `encodeRestorableState(with:)` and
    /// keeps what it encoded.
    ///
    /// - Parameter object: The object.
    /// - Throws: What the object's `encodeRestorableState(with:)` throws.
    public init(archiving object: any StateRestoring) throws {
        let coder = RestorationCoder(path: Self.path, resolver: StandaloneReferences())
        try object.encodeRestorableState(with: coder)
        var writer = EntryWriter()
        writer.writeHeader(kind: .object, typeName: TypeNames.name(of: type(of: object)), restorationClassName: nil)
        writer.writeDictionary(coder.values)
        data = Data(writer.bytes)
        diagnostics = coder.diagnostics
    }

    /// Restores the state archived in `data` into `object`: calls its
    /// `decodeRestorableState(with:)` with a coder holding the archived values.
    ///
    /// - Parameters:
    ///   - object: The object, of the archived type or another: the values are read by key.
    ///   - data: The ``data`` of an archive.
    ///   - codingClasses: The `NSCoding` classes `decodeObject(forKey:)` may make from the archive,
    ///     as `RestorationManager.registerCodingClass(_:)` allows them for state restoration; no
    ///     other class is ever made from a name the archive holds.
    /// - Returns: What could not be decoded as asked under `NSCoder`'s names (zero values given).
    /// - Throws: ``RestorationError/Code/corruptEntry`` (or another entry decoding error) when the
    ///   bytes are not an archive; what the object's `decodeRestorableState(with:)` throws.
    @discardableResult
    public static func restore(
        _ object: any StateRestoring, from data: Data,
        allowingCodingClasses codingClasses: [any (NSObject & NSCoding).Type] = []
    ) throws -> [CoderDiagnostic] {
        let entry = try RestorableEntry(decoding: Array(data))
        let references = StandaloneReferences(
            codingClasses: Dictionary(codingClasses.map { (TypeNames.name(of: $0), $0) }, uniquingKeysWith: { $1 }))
        let coder = RestorationCoder(path: path, values: entry.values, resolver: references)
        try object.decodeRestorableState(with: coder)
        return coder.diagnostics
    }
}

/// The references of a standalone archive: none can be kept, and each attempt is listed.
private final class StandaloneReferences: ReferenceResolving {
    let codingClasses: [String: any (NSObject & NSCoding).Type]

    init(codingClasses: [String: any (NSObject & NSCoding).Type] = [:]) { self.codingClasses = codingClasses }

    func registeredCodingClass(named name: String) -> (any (NSObject & NSCoding).Type)? { codingClasses[name] }

    func referencePath(for object: any StateRestoring, encodedBy coder: RestorationCoder) throws -> RestorationPath? {
        throw RestorationError(
            .typeMismatch,
            "An archive of one object's state holds no other object; \(type(of: object)) was saved as null.",
            path: coder.restorationPath)
    }

    func savedPath(of object: any StateRestoring) -> RestorationPath? { nil }

    func restoredObject(at path: RestorationPath) -> (any StateRestoring)? { nil }
}
