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
enum FoundationArchive: Equatable {
    case url(URL)
    case uuid(UUID)

    static let urlClassName = "NSURL"
    static let uuidClassName = "NSUUID"
    static let relativeKey = "NS.relative"
    static let baseKey = "NS.base"
    static let uuidBytesKey = "NS.uuidbytes"

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
        }
    }

    /// The value as an instance of its `NS` class, as `decodeObject(of:forKey:)` returns it.
    var object: NSObject? {
        switch self {
        case .url(let url): NSURL(string: url.absoluteString)
        case .uuid(let uuid): NSUUID(uuidString: uuid.uuidString)
        }
    }

    /// The `NS` class of the value, which an allowed-classes list must allow.
    var objectClass: AnyClass {
        switch self {
        case .url: NSURL.self
        case .uuid: NSUUID.self
        }
    }
}
