import Foundation
import StateJournal

// Foundation's value types that bridge to an NS class, saved through NSCoder's `encode(_:forKey:)`
// with that class, as NSKeyedArchiver saves them, and given back in either form: as the Swift value
// by `decodeObject(forKey:)` (which casts to the NS class too), as the NS class by
// `decodeObject(of:forKey:)` when the list names it. Values saved in their `Codable` form (by the
// typed API, or before they were saved with their class) decode as the NS class too when the list
// names it.

extension FoundationArchive {
    /// An `NSValue` holding a point, a size, a rectangle or a range, as its kind and its numbers
    /// (`x y`, `width height`, `x y width height`, `location length`).
    struct Geometry: Equatable {
        let kind: String
        let numbers: [RestorableValue]

        /// The geometry `value` holds; `nil` for any other `NSValue`.
        init?(_ value: NSValue) {
            let type = String(cString: value.objCType)
            if type.hasPrefix("{CGPoint=") {
                let point = value.pointValue
                (kind, numbers) = ("point", [.double(Double(point.x)), .double(Double(point.y))])
            } else if type.hasPrefix("{CGSize=") {
                let size = value.sizeValue
                (kind, numbers) = ("size", [.double(Double(size.width)), .double(Double(size.height))])
            } else if type.hasPrefix("{CGRect=") {
                let rect = value.rectValue
                kind = "rect"
                numbers = [rect.origin.x, rect.origin.y, rect.size.width, rect.size.height].map { .double(Double($0)) }
            } else if type.hasPrefix("{_NSRange=") {
                let range = value.rangeValue
                guard let location = Int64(exactly: range.location), let length = Int64(exactly: range.length) else {
                    return nil
                }
                (kind, numbers) = ("range", [.int(location), .int(length)])
            } else {
                return nil
            }
        }

        /// A saved geometry; `nil` when the kind is unknown or the numbers do not fit it.
        init?(_ kind: String, _ numbers: [RestorableValue]) {
            let expected = ["point": 2, "size": 2, "rect": 4, "range": 2][kind]
            guard numbers.count == expected else { return nil }
            for number in numbers {
                switch number {
                case .int: continue
                case .double where kind != "range": continue
                default: return nil
                }
            }
            (self.kind, self.numbers) = (kind, numbers)
        }

        /// The `NSValue` it describes.
        var value: NSValue {
            let doubles = numbers.map { number -> Double in
                switch number {
                case .int(let int): Double(int)
                case .double(let double): double
                default: 0
                }
            }
            switch kind {
            case "point": return NSValue(point: CGPoint(x: doubles[0], y: doubles[1]))
            case "size": return NSValue(size: CGSize(width: doubles[0], height: doubles[1]))
            case "rect":
                return NSValue(rect: CGRect(x: doubles[0], y: doubles[1], width: doubles[2], height: doubles[3]))
            default:
                let ints = numbers.map { if case .int(let int) = $0 { Int(clamping: int) } else { 0 } }
                return NSValue(range: NSRange(location: ints[0], length: ints[1]))
            }
        }
    }

    /// The decimal a saved description holds (`NaN` included), read as the POSIX locale writes it.
    static func decimal(_ string: String) -> Decimal? {
        if string == Decimal.nan.description { return Decimal.nan }
        return Decimal(string: string, locale: Locale(identifier: "en_US_POSIX"))
    }

    /// The saved form of `object` when it is one of the bridged values saved with their class
    /// (an `IndexPath`, a `Decimal` or their `NS` forms, an `NSValue` holding geometry); `nil`
    /// otherwise.
    init?(bridging object: Any) {
        let objectType = type(of: object)
        if objectType == Decimal.self, let decimal = object as? Decimal {
            self = .decimal(decimal)
        } else if objectType is NSDecimalNumber.Type, let number = object as? NSDecimalNumber {
            self = .decimal(number.decimalValue)
        } else if objectType == IndexPath.self || objectType is NSIndexPath.Type, let indexPath = object as? IndexPath {
            self = .indexPath(indexPath)
        } else if objectType is NSValue.Type, !(objectType is NSNumber.Type), let value = object as? NSValue,
            let geometry = Geometry(value)
        {
            self = .geometry(geometry)
        } else {
            return nil
        }
    }
}

extension RestorationCoder {
    /// A dictionary saved in the `Codable` form of `IndexPath` or `Decimal` (by the typed API, or by
    /// versions that saved them so through `encode(_:forKey:)`) as the `NS` class that `classes`
    /// names; `nil` when the list names neither, or the dictionary is not that form.
    func codableBridged(_ dictionary: [String: RestorableValue], allowing classes: [AnyClass], _ key: String) -> Any? {
        let value = RestorableValue.dictionary(dictionary)
        if classes.contains(where: { Self.isClass(NSIndexPath.self, kindOf: $0) }), Set(dictionary.keys) == ["indexes"],
            let indexPath = try? ValueDecoding.decode(IndexPath.self, from: value, path: restorationPath, key: key)
        {
            return indexPath as NSIndexPath
        }
        if classes.contains(where: { Self.isClass(NSDecimalNumber.self, kindOf: $0) }),
            Set(dictionary.keys) == ["exponent", "length", "isNegative", "isCompact", "mantissa"],
            let decimal = try? ValueDecoding.decode(Decimal.self, from: value, path: restorationPath, key: key)
        {
            return NSDecimalNumber(decimal: decimal)
        }
        return nil
    }
}
