import Foundation
import StateJournal

// NSCoder's surface, with NSCoder's semantics: nothing throws, a missing key decodes as the zero
// value, and a problem gives the zero value (or writes nothing) and a CoderDiagnostic.

extension RestorationCoder {
    /// The key under which an `NSCoding` object's entry records its class name, as
    /// `NSKeyedArchiver` records `$class`.
    static let classKey = "$class"

    // MARK: - Encoding

    // MARK: - Decoding

    // MARK: - Conversions

    func integer<N: FixedWidthInteger>(_ key: String) -> N? { integer(values[key], key) }

    /// `value` (saved under `key`) as an `N`, as `NSNumber`'s accessors convert; `nil` (with a
    /// diagnostic) when it is not a number or does not fit, and for a missing or null value.
    func integer<N: FixedWidthInteger>(_ value: RestorableValue?, _ key: String) -> N? {
        let found: N?
        switch value {
        case nil, .null?: return nil
        case .int(let int)?: found = N(exactly: int)
        case .bool(let bool)?: found = bool ? 1 : 0
        case .double(let double)?: found = double.isFinite ? N(exactly: double.rounded(.towardZero)) : nil
        case let other?:
            note(.typeMismatch, key, "the saved \(other.kindName) is not a number")
            return nil
        }
        if found == nil { note(.valueOutOfRange, key, "the saved number does not fit in \(N.self)") }
        return found
    }

    func floatingPoint(_ key: String) -> Double? { floatingPoint(values[key], key) }

    /// `value` (saved under `key`) as a `Double`; `nil` (with a diagnostic) when it is not a
    /// number, and for a missing or null value.
    func floatingPoint(_ value: RestorableValue?, _ key: String) -> Double? {
        switch value {
        case nil, .null?: return nil
        case .double(let double)?: return double
        case .int(let int)?: return Double(int)
        case .bool(let bool)?: return bool ? 1 : 0
        case let other?:
            note(.typeMismatch, key, "the saved \(other.kindName) is not a number")
            return nil
        }
    }

    func typedValue<D: Decodable>(_ type: D.Type, _ value: RestorableValue, _ key: String) -> D? {
        try? ValueDecoding.decode(type, from: value, path: restorationPath, key: key)
    }

    /// A saved value as `decodeObject(forKey:)` returns it.
    func plainObject(_ value: RestorableValue, _ key: String) -> Any? {
        switch value {
        case .null: nil
        case .bool(let bool): bool
        case .int(let int): Int(int)
        case .double(let double): double
        case .string(let string): string
        case .data(let data): data
        case .date(let date): date
        case .array(let items): items.map { plainObject($0, key) ?? NSNull() } as [Any]
        case .dictionary(let dictionary):
            if let archived = FoundationArchive(dictionary) {
                archived.value
            } else if case .string(let name)? = dictionary[Self.classKey] {
                unarchive(dictionary, className: name, key, allowing: nil)
            } else {
                dictionary.mapValues { plainObject($0, key) ?? NSNull() } as [String: Any]
            }
        case .reference(let path): resolver?.restoredObject(at: path)
        }
    }

    /// The value `encode(_:forKey:)` stores for `object`; `nil` (with a diagnostic) when it stores
    /// nothing.
    func storedValue(of object: Any, _ key: String) -> RestorableValue? {
        if let restorable = object as? any StateRestoring { return reference(to: restorable, key) }
        // With their classes, as NSKeyedArchiver saves them (before NSNumber: an NSDecimalNumber is one).
        if let bridged = FoundationArchive(bridging: object) { return bridged.stored }
        if type(of: object) is NSNumber.Type, let number = object as? NSNumber { return storedValue(of: number, key) }
        switch object {
        case is NSNull: return .null
        case let value as Bool: return .bool(value)
        case let value as Int: return .int(Int64(value))
        case let value as Int64: return .int(value)
        case let value as Int32: return .int(Int64(value))
        case let value as Int16: return .int(Int64(value))
        case let value as Int8: return .int(Int64(value))
        case let value as Double: return .double(value)
        case let value as Float: return .double(Double(value))
        case let value as String: return .string(value)
        case let value as Data: return .data(value)
        case let value as Date: return .date(value)
        // With their classes, so that `decodeObject(forKey:)` gives them back as they were, at any
        // depth (`NSURL` and `NSUUID` match these cases too).
        case let value as URL: return FoundationArchive.url(value).stored
        case let value as UUID: return FoundationArchive.uuid(value).stored
        case let value as [Any]:
            var items: [RestorableValue] = []
            items.reserveCapacity(value.count)
            for item in value {
                guard let stored = storedValue(of: item, key) else { return nil }
                items.append(stored)
            }
            return .array(items)
        case let value as [String: Any]:
            var entries: [String: RestorableValue] = [:]
            for (name, item) in value {
                guard let stored = storedValue(of: item, key) else { return nil }
                entries[name] = stored
            }
            return .dictionary(entries)
        case let value as NSObject & NSCoding: return archive(value, key)
        case let value as any Encodable:
            do {
                return try ValueEncoding.encode(value, path: restorationPath, key: key)
            } catch {
                note(.unsupportedValue, key, "\(type(of: value)) could not be encoded: \(error)")
                return nil
            }
        default:
            note(
                .unsupportedValue, key,
                "\(type(of: object)) is neither a value the coder stores, a restorable object, NSCoding nor Encodable")
            return nil
        }
    }

    func storedValue(of number: NSNumber, _ key: String) -> RestorableValue? {
        switch String(cString: number.objCType) {
        case "B": return .bool(number.boolValue)
        case "f", "d": return .double(number.doubleValue)
        case "Q", "L", "I", "S", "C":
            guard let int = Int64(exactly: number.uint64Value) else {
                note(.valueOutOfRange, key, "\(number) does not fit in a 64-bit signed integer")
                return nil
            }
            return .int(int)
        default: return .int(number.int64Value)
        }
    }

    /// An `NSCoding` object's keys, encoded on a coder of its own, with its class name.
    func archive(_ object: NSObject & NSCoding, _ key: String) -> RestorableValue {
        let coder = RestorationCoder(
            path: restorationPath, isApplicationCoder: isApplicationCoder, resolver: resolver,
            owner: owner ?? self)
        coder.failureKey = key
        object.encode(with: coder)
        var entries = coder.values.asDictionary
        // The type's full Swift name, never looked up by name again: decoding matches it against
        // the classes the app allowed (`NSStringFromClass` traps on a private or nested class).
        entries[Self.classKey] = .string(TypeNames.name(of: type(of: object)))
        return .dictionary(entries)
    }

    /// An `NSCoding` object made again from its saved keys, when its class is allowed.
    ///
    /// Nothing is instantiated by a name read from disk: the saved name must be the name of one of
    /// `classes` (`decodeObject(of:forKey:)`, as secure coding requires), or, without a list
    /// (`decodeObject(forKey:)`), of a class the app registered with
    /// `RestorationManager.registerCodingClass(_:)`. Any other name is skipped with a diagnostic.
    func unarchive(
        _ entries: [String: RestorableValue], className: String, _ key: String, allowing classes: [AnyClass]?
    ) -> Any? {
        let codingClass: (any (NSObject & NSCoding).Type)?
        if let classes {
            // Without secure coding, the list names classes that may be made besides the registered ones.
            codingClass =
                classes.first { TypeNames.name(of: $0) == className } as? any (NSObject & NSCoding).Type
                ?? (secureCodingRequired ? nil : resolver?.registeredCodingClass(named: className))
            guard codingClass != nil else {
                let names = classes.map { "\($0)" }.joined(separator: ", ")
                note(.classNotAllowed, key, "\(className) is not among the allowed classes (\(names))")
                return nil
            }
        } else {
            codingClass = resolver?.registeredCodingClass(named: className)
            guard codingClass != nil else {
                note(
                    .classNotAllowed, key,
                    "\(className) is not a registered NSCoding class: register it with registerCodingClass(_:), or decode it with decodeObject(of:forKey:); nothing is made from a class name in saved state otherwise"
                )
                return nil
            }
        }
        guard let codingClass else { return nil }
        var values = entries
        values[Self.classKey] = nil
        let coder = RestorationCoder(
            path: restorationPath, values: values, isApplicationCoder: isApplicationCoder, resolver: resolver,
            owner: owner ?? self)
        coder.secureCodingRequired = secureCodingRequired
        coder.allowedClassLists = allowedClassLists
        coder.failureKey = key
        guard let object = codingClass.init(coder: coder) else {
            note(.unsupportedValue, key, "\(className).init(coder:) returned nil")
            return nil
        }
        return object
    }

    /// Whether `cls` is `ancestor` or one of its subclasses, for Swift and Objective-C classes alike.
    static func isClass(_ cls: AnyClass, kindOf ancestor: AnyClass) -> Bool {
        var current: AnyClass? = cls
        while let next = current {
            if ObjectIdentifier(next) == ObjectIdentifier(ancestor) { return true }
            current = _getSuperclass(next)
        }
        return false
    }
}
