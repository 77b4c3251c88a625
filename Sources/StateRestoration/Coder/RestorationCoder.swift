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
    /// How many values the unkeyed methods encoded and decoded: the next one goes under, or is read
    /// from, `$<count>`, as `NSKeyedArchiver` names them (RestorationCoder+Unkeyed.swift).
    var unkeyedEncodeCount = 0
    var unkeyedDecodeCount = 0
    /// The class lists of the `decodeObject(of:forKey:)` calls under way, the innermost last, which
    /// ``allowedClasses`` reports (an `NSCoding` object's `init(coder:)` reads them).
    var allowedClassLists: [[AnyClass]] = []
    /// Whether ``requiresSecureCoding`` was set.
    var secureCodingRequired = false
    /// The first error `failWithError(_:)` was given, which ``error`` reports.
    var failure: (any Error)?
    /// The key of the `NSCoding` object this coder encodes or decodes, which a failure reported by
    /// its `encode(with:)` or `init(coder:)` is recorded under; empty for an object's own coder.
    var failureKey = ""
    /// The buffers handed out by the decoders that return pointers (`decodeBytes`, a C string of
    /// `decodeValue(ofObjCType:at:)`), freed with the coder, as `NSCoder` frees them with its
    /// autorelease pool.
    var heldBuffers: [UnsafeMutableRawBufferPointer] = []

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

    deinit {
        for buffer in heldBuffers { buffer.deallocate() }
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

    /// Decodes what was saved under `key` as an instance of one of `classes` (or of a subclass), as
    /// `NSKeyedUnarchiver` decodes with an allowed-classes list.
    ///
    /// Values are matched through their `NS` forms: `NSString` allows a string, `NSNumber` a number
    /// or a Boolean, `NSData` bytes, `NSDate` a date, `NSArray` a list, `NSDictionary` a dictionary,
    /// `NSURL` and `NSUUID` a URL or a UUID, or a string holding one (returned as `NSURL` or
    /// `NSUUID`), `NSIndexPath` an index path, `NSDecimalNumber` (and `NSNumber`) a decimal, each
    /// also in the `Codable` form the typed API saves, `NSValue` a point, a size, a rectangle or a
    /// range, `NSNull` a null inside a list. Inside a list or a dictionary every element must be
    /// allowed too, as secure coding checks every object of an archive. An `NSCoding` object is
    /// created when its class is listed (or registered); a reference gives the restored object.
    ///
    /// The list is held to only when ``requiresSecureCoding`` is set, as `NSCoder` ignores it
    /// otherwise: then a value of no listed class returns `nil` and records a ``CoderDiagnostic``
    /// (the saved value is not of an allowed class), and only listed `NSCoding` classes are made.
    /// Without it, such a value comes back as ``decodeObject(forKey:)`` gives it. A missing key or a
    /// null value returns `nil` alone. While it decodes, ``allowedClasses`` is `classes`.
    ///
    /// - Parameters:
    ///   - classes: The allowed classes; `nil` allows everything, as ``decodeObject(forKey:)``.
    ///   - key: The key it was encoded under.
    /// - Returns: The value or object, or `nil`.
    public override func decodeObject(of classes: [AnyClass]?, forKey key: String) -> Any? {
        guard let classes else { return decodeObject(forKey: key) }
        guard let value = values[key] else { return nil }
        if case .null = value { return nil }
        allowedClassLists.append(classes)
        defer { allowedClassLists.removeLast() }
        let noted = (owner ?? self).diagnostics.count
        let found = secureObject(value, allowing: classes, key)
        // Without secure coding the list is ignored, as NSCoder ignores it: a value of no listed
        // class comes back as decodeObject(forKey:) gives it.
        if found == nil, !secureCodingRequired, (owner ?? self).diagnostics.count == noted {
            return plainObject(value, key)
        }
        if found == nil, (owner ?? self).diagnostics.count == noted {
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
            if let bridged = codableBridged(dictionary, allowing: classes, key) { return bridged }
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
            if let cls = T.self as? AnyClass {
                // Held to the class, as if secure coding were required: what is not a T cannot be
                // returned anyway, and no other NSCoding class is made.
                let noted = (owner ?? self).diagnostics.count
                let wasRequired = secureCodingRequired
                secureCodingRequired = true
                defer { secureCodingRequired = wasRequired }
                if let typed = decodeObject(of: [cls], forKey: key) as? T { return typed }
                if (owner ?? self).diagnostics.count == noted {
                    note(.classNotAllowed, key, "the saved \(value.kindName) is not an instance of \(T.self)")
                }
                return nil
            }
            if let typed = plainObject(value, key) as? T { return typed }
            if let decodable = T.self as? any Decodable.Type, let typed = typedValue(decodable, value, key) as? T {
                return typed
            }
        }
        note(.typeMismatch, key, "the saved \(value.kindName) is not a \(T.self)")
        return nil
    }

    /// Decodes a C `int`, as `NSKeyedUnarchiver`'s `decodeInt(forKey:)`: the same as
    /// ``decodeInt32(forKey:)``, `0` for a missing key.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The value; `0` and a ``CoderDiagnostic`` for a value that is not a number, or does
    ///   not fit.
    public override func decodeCInt(forKey key: String) -> Int32 { integer(key) ?? 0 }

    /// Encodes `length` bytes from `bytes`, as `NSKeyedArchiver` does: they decode with
    /// ``decodeBytes(forKey:returnedLength:)``, `withDecodedUnsafeBytes(forKey:body:)`, and as `Data`.
    ///
    /// - Parameters:
    ///   - bytes: The first byte; `nil` (with any length) encodes no bytes.
    ///   - length: How many bytes to encode.
    ///   - key: The key, unique within this object.
    public override func encodeBytes(_ bytes: UnsafePointer<UInt8>?, length: Int, forKey key: String) {
        store(.data(Self.data(bytes.map(UnsafeRawPointer.init), length)), forKey: key)
    }

    /// Calls `body` with the bytes saved under `key`, or with `nil` when the key is missing or does
    /// not hold bytes (with a ``CoderDiagnostic`` for the latter), as `NSKeyedUnarchiver` does.
    ///
    /// - Parameters:
    ///   - key: The key it was encoded under.
    ///   - body: What to do with the bytes, which are valid only during the call.
    /// - Returns: What `body` returns.
    public override func withDecodedUnsafeBytes<ResultType>(
        forKey key: String, body: (UnsafeRawBufferPointer?) throws -> ResultType
    ) rethrows -> ResultType {
        guard let data = bytes(key) else { return try body(nil) }
        return try data.withUnsafeBytes { try body($0) }
    }

    /// Calls `body` with the bytes saved under `key`, as ``withDecodedUnsafeBytes(forKey:body:)``.
    ///
    /// - Parameters:
    ///   - key: The key it was encoded under.
    ///   - body: What to do with the bytes, which are valid only during the call.
    /// - Returns: What `body` returns.
    @available(swift, deprecated: 9999, renamed: "withDecodedUnsafeBytes(forKey:body:)")
    public override func withDecodedUnsafeBufferPointer<ResultType>(
        forKey key: String, body: (UnsafeBufferPointer<UInt8>?) throws -> ResultType
    ) rethrows -> ResultType {
        guard let data = bytes(key) else { return try body(nil) }
        return try data.withUnsafeBytes { try body($0.bindMemory(to: UInt8.self)) }
    }

    /// Decodes a property list saved under `key` (strings, numbers, dates, bytes, and lists and
    /// dictionaries of them), as `decodeObject(forKey:)` does.
    ///
    /// - Parameter key: The key it was encoded under.
    /// - Returns: The value, or `nil` when the key is missing or holds null.
    public override func decodePropertyList(forKey key: String) -> Any? { decodeObject(forKey: key) }

    // Unkeyed coding, in the order of the calls (RestorationCoder+Unkeyed.swift).

    /// Encodes a value or an object without a key, as `NSKeyedArchiver` does: under the next of the
    /// keys `$0`, `$1`…, which ``decodeObject()`` reads back in the same order. Anything
    /// ``encode(_:forKey:)-(Any?,_)`` encodes, it encodes.
    ///
    /// - Parameter object: The value or object, or `nil`.
    public override func encode(_ object: Any?) { encode(object, forKey: nextUnkeyedEncodeKey()) }

    /// Encodes an object without a key only if something encodes it unconditionally, as
    /// ``encodeConditionalObject(_:forKey:)`` does, under the next unkeyed key.
    ///
    /// - Parameter object: The object, or `nil`.
    public override func encodeConditionalObject(_ object: Any?) {
        encodeConditionalObject(object, forKey: nextUnkeyedEncodeKey())
    }

    /// Encodes bytes without a key, under the next unkeyed key; ``decodeData()`` reads them back.
    ///
    /// - Parameter data: The bytes.
    public override func encode(_ data: Data) { store(.data(data), forKey: nextUnkeyedEncodeKey()) }

    /// Encodes `length` bytes without a key, under the next unkeyed key;
    /// ``decodeBytes(withReturnedLength:)`` and ``decodeData()`` read them back.
    ///
    /// - Parameters:
    ///   - bytes: The first byte; `nil` encodes no bytes.
    ///   - length: How many bytes to encode.
    public override func encodeBytes(_ bytes: UnsafeRawPointer?, length: Int) {
        store(.data(Self.data(bytes, length)), forKey: nextUnkeyedEncodeKey())
    }

    /// Encodes a property list without a key, as ``encode(_:)-(Any?)`` does.
    ///
    /// - Parameter propertyList: Strings, numbers, dates, bytes, and lists and dictionaries of them.
    public override func encodePropertyList(_ propertyList: Any) { encode(propertyList) }

    /// Encodes the value at `address` whose Objective-C type is `type`, without a key, as
    /// `NSKeyedArchiver` does: `@` an object, `#` a class (its name), `c` `C` `s` `S` `i` `I` `l`
    /// `L` `q` `Q` `f` `d` `B` the numbers, `*` a C string, `[<count><type>]` a C array of one of
    /// these. It is read back by ``decodeValue(ofObjCType:at:)`` with the same type.
    ///
    /// A structure (`{…}`) or any other type is not encoded: the call fails through
    /// ``failWithError(_:)``, which records a ``CoderDiagnostic``; nothing traps.
    ///
    /// - Parameters:
    ///   - type: One type code, as `@encode` writes it.
    ///   - address: The value.
    public override func encodeValue(ofObjCType type: UnsafePointer<CChar>, at address: UnsafeRawPointer) {
        encodeValue(String(cString: type), at: address)
    }

    /// Decodes the next unkeyed value as a value of Objective-C type `type` into `address`, which
    /// must have room for one: the counterpart of ``encodeValue(ofObjCType:at:)``.
    ///
    /// A type it does not decode, or a saved value that is not of that type, fails through
    /// ``failWithError(_:)`` and leaves `address` as it was; nothing traps.
    ///
    /// - Parameters:
    ///   - type: One type code, as `@encode` writes it.
    ///   - address: Where to put the value.
    public override func decodeValue(ofObjCType type: UnsafePointer<CChar>, at address: UnsafeMutableRawPointer) {
        decodeValue(String(cString: type), at: address, size: nil)
    }

    /// Decodes the next unkeyed value, as `NSKeyedUnarchiver` does: what ``encode(_:)-(Any?)`` (or
    /// another unkeyed encoder) wrote, in the same order, as ``decodeObject(forKey:)`` returns it;
    /// `nil` past the last one.
    ///
    /// - Returns: The value or object, or `nil`.
    public override func decodeObject() -> Any? { decodeObject(forKey: nextUnkeyedDecodeKey()) }

    /// Decodes the next unkeyed value as bytes, as `NSKeyedUnarchiver` does.
    ///
    /// - Returns: The bytes; `nil` when the next value is not bytes (with a ``CoderDiagnostic``),
    ///   or past the last one.
    public override func decodeData() -> Data? { bytes(nextUnkeyedDecodeKey()) }

    /// Decodes the next unkeyed value as a property list, as ``decodeObject()`` does.
    ///
    /// - Returns: The value, or `nil`.
    public override func decodePropertyList() -> Any? { decodeObject() }

    // Coder state (RestorationCoder+Failure.swift).

    /// The version of the coder's format, as `NSKeyedArchiver` gives it (2000).
    public override var systemVersion: UInt32 { 2000 }

    /// The version of a class in the saved state: always 0, as a keyed archive records no class
    /// versions, and every class reads as its first version.
    ///
    /// - Parameter className: The class name.
    /// - Returns: 0.
    public override func version(forClassName className: String) -> Int { 0 }

    /// The classes allowed by the `decodeObject(of:forKey:)` call under way (its list, added to
    /// those of the calls it is nested in, innermost last), as `NSKeyedUnarchiver` gives them to an
    /// `NSCoding` object's `init(coder:)`; `nil` outside such a call.
    public override var allowedClasses: [AnyClass]? { allowedClassLists.last }

    /// Whether `decodeObject(of:forKey:)` holds saved values to its list of classes, as
    /// `NSKeyedUnarchiver` does when it requires secure coding. `false` unless set: the list then
    /// only says which form to give a value in (`NSIndexPath` or `IndexPath`), and which `NSCoding`
    /// classes may be made besides the registered ones, as `NSCoder` ignores it.
    ///
    /// Once set, it stays set, as `NSKeyedUnarchiver`'s does: unsetting it is ignored and recorded
    /// as a ``CoderDiagnostic``. The coders of the `NSCoding` objects decoded from this one inherit it.
    public override var requiresSecureCoding: Bool {
        get { secureCodingRequired }
        set { setRequiresSecureCoding(newValue) }
    }

    /// Always `.setErrorAndReturn`: a decoding failure (``failWithError(_:)``) sets ``error``,
    /// records a ``CoderDiagnostic`` and returns; the coder never stops the process.
    public override var decodingFailurePolicy: NSCoder.DecodingFailurePolicy { .setErrorAndReturn }

    /// The first error given to ``failWithError(_:)`` by this coder or by an `NSCoding` object
    /// decoding from it, or `nil`.
    public override var error: (any Error)? { failure }

    /// Records a failure, as an `NSCoding` object's `init(coder:)` reports damaged state: sets
    /// ``error`` (when it is not set yet) and records a ``CoderDiagnostic`` with the error's
    /// description; decoding goes on, under the `.setErrorAndReturn` policy.
    ///
    /// - Parameter error: What went wrong.
    public override func failWithError(_ error: any Error) { fail(error) }

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
