import Foundation
import StateJournal

/// The keyed coder of one object's state: UIKit's `NSCoder` as restoration uses it, and a keyed
/// subclass of Foundation's `NSCoder`.
///
/// Each object gets its own coder, so the same key in two objects never collides. Values are stored
/// in a self-describing form (``RestorableValue``), so that tools can show them without the app's
/// types. Encoding a restorable object writes a reference (its restoration path) and adds the object
/// to the preservation pass; decoding that key returns the restored object.
///
/// Two surfaces sit side by side:
/// - `NSCoder`'s, with `NSCoder`'s semantics, so that UIKit restoration code ports as written:
///   `encode(_:forKey:)` never throws, `decodeObject(forKey:)` returns values and references alike,
///   `decodeInteger(forKey:)` and its siblings return zero for a missing key. A problem (a type
///   mismatch, a value that cannot be stored) gives the zero value or writes nothing, and is
///   recorded as a ``CoderDiagnostic``: logged at `warning` and listed in the pass's report. Being an
///   `NSCoder`, the coder is what `NSCoding` model objects encode themselves into.
/// - A typed Swift API for new code: ``decode(_:forKey:)``, ``decodeString(forKey:)`` and the other
///   throwing decoders, which stop the decode with a ``RestorationError`` naming the path and key.
///
/// A coder belongs to the pass that created it and is not meant to be kept after the call it was
/// passed to.
public final class RestorationCoder: NSCoder {
    /// The restoration path of the object this coder belongs to. For the application coder, the
    /// reserved path `@application`.
    public let restorationPath: RestorationPath
    /// Why the state is being restored; set on the application coder during restoration, `nil`
    /// otherwise.
    public internal(set) var restorationReason: RestorationReason?

    /// Exempt from dynamic exclusivity checks, which would cost more than storing a value: a coder
    /// is used on one thread, and no access to it spans a call that could reach it again.
    @exclusivity(unchecked) var values: CoderValues
    let isApplicationCoder: Bool
    let resolver: (any ReferenceResolving)?
    /// The coder of the object whose `NSCoding` value this coder encodes or decodes, which keeps
    /// the problems met; `nil` for an object's own coder.
    unowned(unsafe) let owner: RestorationCoder?
    /// The problems met under `NSCoder`'s names, in order, by this coder and the coders it owns.
    private(set) var diagnostics: [CoderDiagnostic] = []
    /// The class instances encoded unconditionally, held so that their identifiers stay theirs,
    /// with their values, for `encodeConditionalObject`.
    var encodedInstances: [ObjectIdentifier: (instance: AnyObject, value: RestorableValue)] = [:]

    init(
        path: RestorationPath, values: [String: RestorableValue] = [:], isApplicationCoder: Bool = false,
        resolver: (any ReferenceResolving)? = nil, owner: RestorationCoder? = nil
    ) {
        self.restorationPath = path
        self.values = CoderValues(values)
        self.isApplicationCoder = isApplicationCoder
        self.resolver = resolver
        self.owner = owner
        super.init()
    }

    /// Records a problem met under `NSCoder`'s names, in the object's own coder.
    func note(_ kind: CoderDiagnostic.Kind, _ key: String, _ message: String) {
        let diagnostic = CoderDiagnostic(path: restorationPath, key: key, kind: kind, message: message)
        if let owner { owner.diagnostics.append(diagnostic) } else { diagnostics.append(diagnostic) }
    }

    /// Always `true`: the coder is keyed, as `NSKeyedArchiver` is.
    public override var allowsKeyedCoding: Bool { true }

    /// The keys that hold a value, in no particular order.
    public var allKeys: [String] { values.keys }

    /// Whether the coder holds a value for `key`, as `NSCoder.containsValue(forKey:)`.
    ///
    /// - Parameter key: The key to look up.
    public override func containsValue(forKey key: String) -> Bool { values[key] != nil }

    // MARK: - NSCoder

    // Overrides of NSCoder live in the class body, as Swift requires; what they share is in
    // RestorationCoder+NSCoder.swift.

    /// Encodes a 32-bit integer; it decodes with any of the integer decoders that can hold it.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public override func encode(_ value: Int32, forKey key: String) { store(.int(Int64(value)), forKey: key) }

    /// Encodes a 64-bit integer; it decodes with any of the integer decoders that can hold it.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public override func encode(_ value: Int64, forKey key: String) { store(.int(value), forKey: key) }

    /// Encodes a single-precision number, stored widened to a `Double`.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public override func encode(_ value: Float, forKey key: String) { store(.double(Double(value)), forKey: key) }

    /// Encodes any value `NSCoder` can encode, as `NSCoder.encode(_:forKey:)` does, without throwing.
    ///
    /// - a restorable object (``StateRestoring``) is written as a reference, as
    ///   ``encode(_:forKey:)-(StateRestoring?,_)`` writes it;
    /// - `nil` and `NSNull` as null;
    /// - `Bool`, the integer and floating-point types, `NSNumber`, `String`, `Data`, `Date`, `URL`,
    ///   `UUID` (and their `NS` forms), and arrays and string-keyed dictionaries of them, as values; a
    ///   URL and a UUID with their classes, as `NSKeyedArchiver` saves an `NSURL` and an `NSUUID`, so
    ///   that ``decodeObject(forKey:)`` gives them back as a `URL` and a `UUID` at any depth (the
    ///   typed overloads, ``encode(_:forKey:)-(URL,_)`` and ``encode(_:forKey:)-(UUID,_)``, save
    ///   strings);
    /// - an `NSCoding` object by calling its `encode(with:)` on a coder of its own, whose keys are
    ///   saved as a dictionary with the object's class name under `$class`;
    /// - any other `Encodable` value as ``encode(_:forKey:)-(T,_)`` does.
    ///
    /// Anything else is not written, and is recorded as a ``CoderDiagnostic``.
    ///
    /// - Parameters:
    ///   - object: The value or object.
    ///   - key: The key, unique within this object.
    public override func encode(_ object: Any?, forKey key: String) {
        guard let object else {
            store(.null, forKey: key)
            return
        }
        guard let value = storedValue(of: object, key) else { return }
        if type(of: object) is AnyClass {
            let instance = object as AnyObject
            encodedInstances[ObjectIdentifier(instance)] = (instance, value)
        }
        store(value, forKey: key)
    }

    /// Encodes an object only if something encodes it unconditionally, as `NSCoder` does.
    ///
    /// A restorable object is written as a reference when the pass saves it anyway (it is in the
    /// walked hierarchy, or registered under an object that is), and as null otherwise: unlike
    /// ``encode(_:forKey:)-(StateRestoring?,_)``, it never adds the object to the pass. Any other
    /// object is written when this coder already encoded the same instance unconditionally, and as
    /// null otherwise, as `NSKeyedArchiver` decodes an object encoded nowhere else.
    ///
    /// - Parameters:
    ///   - object: The object, or `nil`.
    ///   - key: The key, unique within this object.
    public override func encodeConditionalObject(_ object: Any?, forKey key: String) {
        guard let object else {
            store(.null, forKey: key)
            return
        }
        if let restorable = object as? any StateRestoring {
            store(resolver?.savedPath(of: restorable).map(RestorableValue.reference) ?? .null, forKey: key)
            return
        }
        guard type(of: object) is AnyClass else {
            store(.null, forKey: key)
            return
        }
        store(encodedInstances[ObjectIdentifier(object as AnyObject)]?.value ?? .null, forKey: key)
    }

    /// Decodes what was saved under `key`, whatever it is: a value or a restored object, as
    /// `NSCoder.decodeObject(forKey:)` does, so that `decodeObject(forKey: "title") as? String` works.
    ///
    /// Integers come back as `Int`, floating-point numbers as `Double` and Booleans as `Bool` (each
    /// also casts to `NSNumber`); strings as `String`; a URL or a UUID encoded through
    /// ``encode(_:forKey:)-(Any?,_)`` (`NSCoder`'s) as `URL` or `UUID` (each also casts to its `NS`
    /// form), inside a list or a dictionary too; bytes as `Data`, dates as `Date`, lists as `[Any]`,
    /// dictionaries as `[String: Any]`; an `NSCoding` object as a new instance made with its
    /// `init(coder:)`; a reference as the object restored at its path. A URL or a UUID saved as a
    /// string (by the typed overloads, or by versions before they were saved with their classes)
    /// comes back as a `String`: read those with `decodeObject(of:forKey:)`.
    ///
    /// Returns `nil` when the key is missing or holds null, or when the referenced object was not
    /// restored (skipped, pruned or not found).
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The value or object, or `nil`.
    public override func decodeObject(forKey key: String) -> Any? {
        guard let value = values[key] else { return nil }
        return plainObject(value, key)
    }

    /// Decodes what was saved under `key` when it is an instance of one of `classes` (or of a
    /// subclass), as `NSKeyedUnarchiver` decodes with an allowed-classes list.
    ///
    /// Values are matched through their `NS` forms: `NSString` allows a string, `NSNumber` a number
    /// or a Boolean, `NSData` bytes, `NSDate` a date, `NSArray` a list, `NSDictionary` a dictionary,
    /// `NSURL` and `NSUUID` a URL or a UUID, or a string holding one (returned as `NSURL` or
    /// `NSUUID`), `NSNull` a null inside a list. Inside a list or a dictionary every element must be allowed too, as secure
    /// coding checks every object of an archive. An `NSCoding` object is created only when its
    /// class is allowed; a reference gives the restored object when it is of an allowed class.
    ///
    /// Anything else returns `nil` and records a ``CoderDiagnostic`` (the saved value is not of an
    /// allowed class); a missing key or a null value returns `nil` alone.
    ///
    /// - Parameters:
    ///   - classes: The allowed classes; `nil` allows everything, as ``decodeObject(forKey:)``.
    ///   - key: The key it was encoded under.
    /// - Returns: The value or object, or `nil`.
    public override func decodeObject(of classes: [AnyClass]?, forKey key: String) -> Any? {
        guard let classes else { return decodeObject(forKey: key) }
        guard let value = values[key] else { return nil }
        if case .null = value { return nil }
        let noted = diagnostics.count
        let found = secureObject(value, allowing: classes, key)
        if found == nil, diagnostics.count == noted {
            let names = classes.map { "\($0)" }.joined(separator: ", ")
            note(.classNotAllowed, key, "the saved \(value.kindName) is not an instance of an allowed class (\(names))")
        }
        return found
    }

    /// `value` as an instance of one of `classes`, and, inside an array or a dictionary, every
    /// element too, as secure coding checks every object of an archive; `nil` when one is not.
    private func secureObject(_ value: RestorableValue, allowing classes: [AnyClass], _ key: String) -> Any? {
        func allows(_ cls: AnyClass) -> Bool { classes.contains { Self.isClass(cls, kindOf: $0) } }
        switch value {
        case .null: return allows(NSNull.self) ? NSNull() : nil
        case .bool(let bool): return allows(NSNumber.self) ? NSNumber(value: bool) : nil
        case .int(let int): return allows(NSNumber.self) ? NSNumber(value: int) : nil
        case .double(let double): return allows(NSNumber.self) ? NSNumber(value: double) : nil
        case .data(let data): return allows(NSData.self) ? NSData(data: data) : nil
        case .date(let date):
            return allows(NSDate.self)
                ? NSDate(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate) : nil
        case .string(let string):
            if allows(NSString.self) { return NSString(string: string) }
            if allows(NSURL.self), let url = NSURL(string: string) { return url }
            if allows(NSUUID.self), let uuid = NSUUID(uuidString: string) { return uuid }
            return nil
        case .array(let items):
            guard allows(NSArray.self) else { return nil }
            var elements: [Any] = []
            for item in items {
                guard let element = secureObject(item, allowing: classes, key) else { return nil }
                elements.append(element)
            }
            return elements
        case .dictionary(let dictionary):
            if let archived = FoundationArchive(dictionary) {
                return allows(archived.objectClass) ? archived.object : nil
            }
            if case .string(let name)? = dictionary[Self.classKey] {
                return unarchive(dictionary, className: name, key, allowing: classes)
            }
            guard allows(NSDictionary.self) else { return nil }
            var elements: [String: Any] = [:]
            for (name, item) in dictionary {
                guard let element = secureObject(item, allowing: classes, key) else { return nil }
                elements[name] = element
            }
            return elements
        case .reference(let path):
            guard let object = resolver?.restoredObject(at: path) else { return nil }
            return allows(type(of: object)) ? object : nil
        }
    }

    /// Decodes a Boolean, as `NSCoder.decodeBool(forKey:)`: `false` for a missing key; a saved
    /// number converts as `NSNumber.boolValue` does (non-zero is `true`).
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The value; `false` and a ``CoderDiagnostic`` for a value that is not a Boolean or
    ///   a number.
    public override func decodeBool(forKey key: String) -> Bool {
        switch values[key] {
        case nil, .null?: return false
        case .bool(let bool)?: return bool
        case .int(let int)?: return int != 0
        case .double(let double)?: return double != 0
        case let other?:
            note(.typeMismatch, key, "the saved \(other.kindName) is not a Bool")
            return false
        }
    }

    /// Decodes an integer, as `NSCoder.decodeInteger(forKey:)`: `0` for a missing key.
    ///
    /// Saved numbers convert as `NSNumber`'s accessors do: a floating-point number is truncated
    /// toward zero, a Boolean is 1 or 0.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The value; `0` and a ``CoderDiagnostic`` for a value that is not a number, or does
    ///   not fit.
    public override func decodeInteger(forKey key: String) -> Int { integer(key) ?? 0 }

    /// Decodes a 32-bit integer, as `NSCoder.decodeInt32(forKey:)`: `0` for a missing key.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The value; `0` and a ``CoderDiagnostic`` for a value that is not a number, or does
    ///   not fit.
    public override func decodeInt32(forKey key: String) -> Int32 { integer(key) ?? 0 }

    /// Decodes a 64-bit integer, as `NSCoder.decodeInt64(forKey:)`: `0` for a missing key.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The value; `0` and a ``CoderDiagnostic`` for a value that is not a number, or does
    ///   not fit.
    public override func decodeInt64(forKey key: String) -> Int64 { integer(key) ?? 0 }

    /// Decodes a single-precision number, as `NSCoder.decodeFloat(forKey:)`: `0` for a missing key;
    /// an integer converts.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The value; `0` and a ``CoderDiagnostic`` for a value that is not a number.
    public override func decodeFloat(forKey key: String) -> Float { floatingPoint(key).map(Float.init) ?? 0 }

    /// Decodes a floating-point number, as `NSCoder.decodeDouble(forKey:)`: `0` for a missing key;
    /// an integer converts.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The value; `0` and a ``CoderDiagnostic`` for a value that is not a number.
    public override func decodeDouble(forKey key: String) -> Double { floatingPoint(key) ?? 0 }

    /// Encodes a Boolean.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public override func encode(_ value: Bool, forKey key: String) { store(.bool(value), forKey: key) }

    /// Encodes an integer.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public override func encode(_ value: Int, forKey key: String) { store(.int(Int64(value)), forKey: key) }

    /// Encodes a floating-point number.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key, unique within this object.
    public override func encode(_ value: Double, forKey key: String) { store(.double(value), forKey: key) }

    /// Decodes what was saved under `key` as a `T`: a value type (`String`, `Int`, `URL`, `[String]`…),
    /// a restorable class, or any type the saved value casts to.
    ///
    /// `nil` when the key is missing or holds null, or when the referenced object was not restored;
    /// `nil` and a ``CoderDiagnostic`` when the saved value is not a `T`. An `NSCoding` object is
    /// created only when it is a `T`, as `NSCoder.decodeObject(of:forKey:)` allows only that class.
    ///
    /// - Parameters:
    ///   - type: The expected type.
    ///   - key: The key it was encoded under.
    /// - Returns: The value or object, or `nil`.
    public override func decodeObject<T>(of type: T.Type, forKey key: String) -> T? {
        guard let value = values[key] else { return nil }
        switch value {
        case .null: return nil
        case .reference(let path):
            guard let object = resolver?.restoredObject(at: path) else { return nil }
            if let typed = object as? T { return typed }
        default:
            // A class (NSString, NSURL, an NSCoding class) is matched as an allowed class is.
            if let cls = T.self as? AnyClass { return decodeObject(of: [cls], forKey: key) as? T }
            if let typed = plainObject(value, key) as? T { return typed }
            if let decodable = T.self as? any Decodable.Type, let typed = typedValue(decodable, value, key) as? T {
                return typed
            }
        }
        note(.typeMismatch, key, "the saved \(value.kindName) is not a \(T.self)")
        return nil
    }

    // MARK: - Archive keys

    /// The saved bundle version (``ArchiveKey/bundleVersion``), when the coder holds one.
    public var bundleVersion: String? { string(ArchiveKey.bundleVersion) }
    /// The saved interface idiom (``ArchiveKey/interfaceIdiom``), when the coder holds one.
    public var interfaceIdiom: String? { string(ArchiveKey.interfaceIdiom) }
    /// The saved system version (``ArchiveKey/systemVersion``), when the coder holds one.
    ///
    /// Not `systemVersion`, which `NSCoder` already has (the version of the coder's format).
    public var savedSystemVersion: String? { string(ArchiveKey.systemVersion) }
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

    /// Stores a value; an ``ArchiveKey`` in the application coder is recorded as a problem and not
    /// written.
    func store(_ value: RestorableValue, forKey key: String) {
        if isApplicationCoder && ArchiveKey.isReserved(key) {
            note(
                .reservedKey, key,
                "\"\(key)\" is an archive key that only the restoration manager writes; use another key.")
            return
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
    /// The path of `object` when the pass saves it anyway, without adding it to the pass (for
    /// `encodeConditionalObject`); `nil` otherwise.
    func savedPath(of object: any StateRestoring) -> RestorationPath?
    /// The object restored at `path`, if any.
    func restoredObject(at path: RestorationPath) -> (any StateRestoring)?
    /// The `NSCoding` class the app registered under `name` (``TypeNames/name(of:)``), if any: the
    /// only classes `decodeObject(forKey:)` makes from a saved name.
    func registeredCodingClass(named name: String) -> (any (NSObject & NSCoding).Type)?
}

extension ReferenceResolving {
    func registeredCodingClass(named name: String) -> (any (NSObject & NSCoding).Type)? { nil }
}
