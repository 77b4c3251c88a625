import Foundation
import StateJournal

/// A `URL` or a `UUID` saved through `NSCoder`'s `encode(_:forKey:)`, with its class, as
/// `NSKeyedArchiver` archives one: `{"$class": "NSURL", "NS.relative": <absolute string>}` and
/// `{"$class": "NSUUID", "NS.uuidbytes": <16 bytes>}`. Saved as a bare string, a URL or a UUID
/// would come back from `decodeObject(forKey:)` as a `String`, at any depth of a list or a
/// dictionary; with its class it comes back as what was encoded.
///
/// The typed Swift API (``RestorationCoder/encode(_:forKey:)-(URL,_)``, `Codable` values) saves
/// strings, which its typed decoders read; every decoder of a URL or a UUID reads both forms.
///
/// An `IndexPath`, a `Decimal` and an `NSValue` holding a point, a size, a rectangle or a range are
/// saved the same way, with the class `NSKeyedArchiver` saves them as (RestorationCoder+ValueBridging.swift):
/// `{"$class": "NSIndexPath", "NS.indexes": [<int>…]}`,
/// `{"$class": "NSDecimalNumber", "NS.decimal": <the decimal's description>}` and
/// `{"$class": "NSValue", "NS.special": "point" | "size" | "rect" | "range", "NS.values": [<number>…]}`.
enum FoundationArchive: Equatable {
    case url(URL)
    case uuid(UUID)
    case indexPath(IndexPath)
    case decimal(Decimal)
    case geometry(Geometry)

    static let urlClassName = "NSURL"
    static let uuidClassName = "NSUUID"
    static let indexPathClassName = "NSIndexPath"
    static let decimalClassName = "NSDecimalNumber"
    static let valueClassName = "NSValue"
    static let relativeKey = "NS.relative"
    static let baseKey = "NS.base"
    static let uuidBytesKey = "NS.uuidbytes"
    static let indexesKey = "NS.indexes"
    static let decimalKey = "NS.decimal"
    static let specialKey = "NS.special"
    static let valuesKey = "NS.values"

    /// The saved form.
    var stored: RestorableValue {
        switch self {
        case .url(let url):
            .dictionary([
                RestorationCoder.classKey: .string(Self.urlClassName), Self.relativeKey: .string(url.absoluteString),
            ])
        case .uuid(let uuid):
            .dictionary([
                RestorationCoder.classKey: .string(Self.uuidClassName),
                Self.uuidBytesKey: .data(withUnsafeBytes(of: uuid.uuid) { Data($0) }),
            ])
        case .indexPath(let indexPath):
            .dictionary([
                RestorationCoder.classKey: .string(Self.indexPathClassName),
                Self.indexesKey: .array(indexPath.map { .int(Int64($0)) }),
            ])
        case .decimal(let decimal):
            .dictionary([
                RestorationCoder.classKey: .string(Self.decimalClassName),
                Self.decimalKey: .string(decimal.description),
            ])
        case .geometry(let geometry):
            .dictionary([
                RestorationCoder.classKey: .string(Self.valueClassName),
                Self.specialKey: .string(geometry.kind), Self.valuesKey: .array(geometry.numbers),
            ])
        }
    }

    /// The URL or UUID a saved dictionary holds; `nil` when it is not one of these forms (an
    /// `NSCoding` object's keys, a plain dictionary, or a damaged form).
    init?(_ dictionary: [String: RestorableValue]) {
        switch dictionary[RestorationCoder.classKey] {
        case .string(Self.urlClassName)?:
            guard case .string(let relative)? = dictionary[Self.relativeKey] else { return nil }
            var base: URL?
            switch dictionary[Self.baseKey] {
            case nil, .null?: base = nil
            case .string(let string)?:
                guard let url = URL(string: string) else { return nil }
                base = url
            default: return nil
            }
            guard let url = URL(string: relative, relativeTo: base) else { return nil }
            self = .url(url)
        case .string(Self.uuidClassName)?:
            guard case .data(let bytes)? = dictionary[Self.uuidBytesKey], bytes.count == 16 else { return nil }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: bytes) }
            self = .uuid(UUID(uuid: uuid))
        case .string(Self.indexPathClassName)?:
            guard case .array(let items)? = dictionary[Self.indexesKey] else { return nil }
            var indexes: [Int] = []
            for item in items {
                guard case .int(let index) = item, let index = Int(exactly: index) else { return nil }
                indexes.append(index)
            }
            self = .indexPath(IndexPath(indexes: indexes))
        case .string(Self.decimalClassName)?:
            guard case .string(let string)? = dictionary[Self.decimalKey], let decimal = Self.decimal(string) else {
                return nil
            }
            self = .decimal(decimal)
        case .string(Self.valueClassName)?:
            guard case .string(let kind)? = dictionary[Self.specialKey],
                case .array(let numbers)? = dictionary[Self.valuesKey], let geometry = Geometry(kind, numbers)
            else { return nil }
            self = .geometry(geometry)
        default:
            return nil
        }
    }

    /// The value as `decodeObject(forKey:)` returns it: a `URL` or a `UUID` (each also casts to
    /// its `NS` form).
    var value: Any {
        switch self {
        case .url(let url): url
        case .uuid(let uuid): uuid
        case .indexPath(let indexPath): indexPath
        case .decimal(let decimal): decimal
        case .geometry(let geometry): geometry.value
        }
    }

    /// The value as an instance of its `NS` class, as `decodeObject(of:forKey:)` returns it.
    var object: NSObject? {
        switch self {
        case .url(let url): NSURL(string: url.absoluteString)
        case .uuid(let uuid): NSUUID(uuidString: uuid.uuidString)
        case .indexPath(let indexPath): indexPath as NSIndexPath
        case .decimal(let decimal): NSDecimalNumber(decimal: decimal)
        case .geometry(let geometry): geometry.value
        }
    }

    /// The `NS` class of the value, which an allowed-classes list must allow.
    var objectClass: AnyClass {
        switch self {
        case .url: NSURL.self
        case .uuid: NSUUID.self
        case .indexPath: NSIndexPath.self
        case .decimal: NSDecimalNumber.self
        case .geometry: NSValue.self
        }
    }
}
