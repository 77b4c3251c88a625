import Foundation
import StateJournal
import StateRestoration
import Testing

/// One sequence of `NSCoder` calls: what it encodes, and what the decode calls give, written out.
///
/// Unchecked: the closures capture Foundation values and are only run on the test's own task.
struct CoderCallSequence: CustomTestStringConvertible, @unchecked Sendable {
    let name: String
    let encode: (NSCoder) -> Void
    let decode: (NSCoder) -> [String]
    var testDescription: String { name }
}

/// What swift-corelibs-foundation's `NSKeyedArchiver` and `NSKeyedUnarchiver` give back for `sequence`.
func foundationResult(_ sequence: CoderCallSequence) throws -> [String] {
    let archiver = NSKeyedArchiver(requiringSecureCoding: false)
    sequence.encode(archiver)
    archiver.finishEncoding()
    let unarchiver = try NSKeyedUnarchiver(forReadingFrom: archiver.encodedData)
    unarchiver.requiresSecureCoding = false
    unarchiver.decodingFailurePolicy = .setErrorAndReturn
    return sequence.decode(unarchiver)
}

/// What the package's coder gives back for `sequence` through an archive of one object's state.
func archiveResult(_ sequence: CoderCallSequence) throws -> (result: [String], diagnostics: [CoderDiagnostic]) {
    var result: [String] = []
    let diagnostics = try archiveRoundTrip({ sequence.encode($0) }, decode: { result = sequence.decode($0) })
    return (result, diagnostics.archived + diagnostics.restored)
}

/// A decoded value written out the same way whichever form it came back in (`Int` or `NSNumber`,
/// `String` or `NSString`…), through the casts an app makes.
func written(_ value: Any?) -> String {
    guard let value else { return "nil" }
    if value is NSNull { return "null" }
    if let array = value as? [Any] { return "[" + array.map(written).joined(separator: ", ") + "]" }
    if let dictionary = value as? [String: Any] {
        return "[" + dictionary.keys.sorted().map { "\($0): \(written(dictionary[$0]))" }.joined(separator: ", ") + "]"
    }
    if let string = value as? String { return "\"\(string)\"" }
    if let url = value as? URL { return "url(\(url.absoluteString))" }
    if let uuid = value as? UUID { return "uuid(\(uuid.uuidString))" }
    if let date = value as? Date { return "date(\(date.timeIntervalSinceReferenceDate))" }
    if let data = value as? Data { return "data(\(Array(data)))" }
    if let indexPath = value as? IndexPath { return "indexPath(\(Array(indexPath)))" }
    if let number = value as? NSNumber { return "number(\(number.doubleValue))" }
    if let value = value as? NSValue { return "value(\(value))" }
    return "\(type(of: value))"
}

/// Both coders, the same calls: what `NSKeyedArchiver` and `NSKeyedUnarchiver` (swift-corelibs-foundation)
/// give back must be what the package's coder gives back, through an archive of one object's state
/// and through a preservation and a restoration.
///
/// Where Foundation on Linux traps (it does not implement `decodeCInt(forKey:)` or
/// `version(forClassName:)`, cannot archive a `Decimal`, and cannot unarchive an
/// `NSAttributedString` without attribute runs), the package's coder is held to what iOS gives, in
/// the tests after the table.
@Suite struct NSCoderDifferentialTests {
    static let date = Date(timeIntervalSinceReferenceDate: 123_456.75)
    static let url = URL(string: "https://example.org/a?b=c")!
    static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    /// Keyed values of every bridged type, encoded as `Any` through `encode(_:forKey:)`, decoded
    /// through `decodeObject(forKey:)` and through `decodeObject(of:forKey:)` with their `NS` class.
    nonisolated(unsafe) static let bridgedValues: [(name: String, value: Any, classes: [AnyClass])] = [
        ("IndexPath", IndexPath(indexes: [1, 4, 2]) as Any, [NSIndexPath.self] as [AnyClass]),
        ("IndexPath of one index", IndexPath(index: 7) as Any, [NSIndexPath.self] as [AnyClass]),
        ("empty IndexPath", IndexPath() as Any, [NSIndexPath.self] as [AnyClass]),
        ("Date", date as Any, [NSDate.self] as [AnyClass]),
        ("URL", url as Any, [NSURL.self] as [AnyClass]),
        ("UUID", uuid as Any, [NSUUID.self] as [AnyClass]),
        ("Data", Data([0, 1, 255]) as Any, [NSData.self] as [AnyClass]),
        ("Int", 42 as Any, [NSNumber.self] as [AnyClass]),
        ("Int8", Int8(-8) as Any, [NSNumber.self] as [AnyClass]),
        ("Int16", Int16(-16) as Any, [NSNumber.self] as [AnyClass]),
        ("Int32", Int32(-32) as Any, [NSNumber.self] as [AnyClass]),
        ("Int64", Int64(-64) as Any, [NSNumber.self] as [AnyClass]),
        ("UInt8", UInt8(8) as Any, [NSNumber.self] as [AnyClass]),
        ("UInt16", UInt16(16) as Any, [NSNumber.self] as [AnyClass]),
        ("UInt32", UInt32(32) as Any, [NSNumber.self] as [AnyClass]),
        ("UInt64", UInt64(64) as Any, [NSNumber.self] as [AnyClass]),
        ("Double", 2.5 as Any, [NSNumber.self] as [AnyClass]),
        ("Float", Float(0.25) as Any, [NSNumber.self] as [AnyClass]),
        ("Bool", true as Any, [NSNumber.self] as [AnyClass]),
        ("String", "héllo" as Any, [NSString.self] as [AnyClass]),
        ("[Int]", [1, 2, 3] as Any, [NSArray.self, NSNumber.self] as [AnyClass]),
        ("[Double]", [0.5, -1] as Any, [NSArray.self, NSNumber.self] as [AnyClass]),
        ("[String]", ["a", "b"] as Any, [NSArray.self, NSString.self] as [AnyClass]),
        ("[URL]", [url] as Any, [NSArray.self, NSURL.self] as [AnyClass]),
        (
            "[IndexPath]", [IndexPath(indexes: [0, 1]), IndexPath(index: 3)] as Any,
            [NSArray.self, NSIndexPath.self] as [AnyClass]
        ),
        ("[String: Int]", ["a": 1, "b": 2] as Any, [NSDictionary.self, NSString.self, NSNumber.self] as [AnyClass]),
        (
            "[String: [Date]]", ["d": [date]] as Any,
            [NSDictionary.self, NSString.self, NSArray.self, NSDate.self] as [AnyClass]
        ),
        ("NSValue of a point", NSValue(point: CGPoint(x: 1.5, y: -2)) as Any, [NSValue.self] as [AnyClass]),
        ("NSValue of a size", NSValue(size: CGSize(width: 3, height: 4)) as Any, [NSValue.self] as [AnyClass]),
        (
            "NSValue of a rect", NSValue(rect: CGRect(x: 1, y: 2, width: 3, height: 4)) as Any,
            [NSValue.self] as [AnyClass]
        ),
        ("NSValue of a range", NSValue(range: NSRange(location: 5, length: 6)) as Any, [NSValue.self] as [AnyClass]),
    ]

    static let sequences: [CoderCallSequence] = bridgedSequences + scalarSequences + unkeyedSequences

    static let bridgedSequences: [CoderCallSequence] = bridgedValues.map { name, value, classes in
        CoderCallSequence(
            name: "encode(\(name), forKey:)",
            encode: { $0.encode(value, forKey: "v") },
            decode: { coder in
                let plain = coder.decodeObject(forKey: "v")
                let typed = coder.decodeObject(of: classes, forKey: "v")
                let cast: String
                switch value {
                case is IndexPath: cast = written(plain as? IndexPath)
                case is Date: cast = written(plain as? Date)
                case is URL: cast = written(plain as? URL)
                case is UUID: cast = written(plain as? UUID)
                case is Data: cast = written(plain as? Data)
                default: cast = "-"
                }
                let nsClass = typed.map { value in
                    classes.contains { (value as? NSObject)?.isKind(of: $0) == true }
                        ? "an allowed class" : "\(type(of: value))"
                }
                return [written(plain), written(typed), cast, nsClass ?? "nil", "\(coder.containsValue(forKey: "v"))"]
            })
    }

    static let scalarSequences: [CoderCallSequence] = [
        CoderCallSequence(
            name: "every keyed scalar encoder and decoder",
            encode: { coder in
                coder.encode(true, forKey: "bool")
                coder.encode(Int32.min, forKey: "int32")
                coder.encode(Int64.max, forKey: "int64")
                coder.encode(Float(1.25), forKey: "float")
                coder.encode(-0.5, forKey: "double")
                coder.encode(-7, forKey: "int")
                [UInt8]([1, 2, 3]).withUnsafeBufferPointer {
                    coder.encodeBytes($0.baseAddress, length: 3, forKey: "bytes")
                }
                coder.encode(nil as Any?, forKey: "nil")
                coder.encodeConditionalObject("never encoded" as NSString, forKey: "conditional")
                let shared = NSDate(timeIntervalSinceReferenceDate: 9)
                coder.encode(shared, forKey: "shared")
                coder.encodeConditionalObject(shared, forKey: "sharedConditional")
                coder.encode(CGPoint(x: 1, y: 2), forKey: "point")
                coder.encode(CGSize(width: 3, height: 4), forKey: "size")
                coder.encode(CGRect(x: 1, y: 2, width: 3, height: 4), forKey: "rect")
                coder.encodePropertyList("plist" as NSString)
            },
            decode: { coder in
                let cInt =
                    (coder as? RestorationCoder)?.decodeCInt(forKey: "int32") ?? coder.decodeInt32(forKey: "int32")
                return [
                    "\(coder.decodeBool(forKey: "bool"))", "\(coder.decodeInt32(forKey: "int32"))", "\(cInt)",
                    "\(coder.decodeInt64(forKey: "int64"))", "\(coder.decodeFloat(forKey: "float"))",
                    "\(coder.decodeDouble(forKey: "double"))", "\(coder.decodeInteger(forKey: "int"))",
                    "\(coder.decodeInt64(forKey: "int"))", "\(coder.decodeDouble(forKey: "int"))",
                    coder.withDecodedUnsafeBytes(forKey: "bytes") { "\($0.map(Array.init) ?? [])" },
                    coder.withDecodedUnsafeBytes(forKey: "missing") { "\($0 == nil)" },
                    written(coder.decodeObject(forKey: "nil")), "\(coder.containsValue(forKey: "nil"))",
                    written(coder.decodeObject(forKey: "sharedConditional")),
                    "\(coder.decodePoint(forKey: "point"))", "\(coder.decodeSize(forKey: "size"))",
                    "\(coder.decodeRect(forKey: "rect"))", written(coder.decodePropertyList()),
                    "\(coder.allowsKeyedCoding)", "\(coder.systemVersion)", "\(coder.requiresSecureCoding)",
                    "\(coder.allowedClasses == nil)",
                    // Last: NSKeyedUnarchiver on Linux sets an error for an object key that holds nothing
                    // (iOS does not), and gives nothing after an error.
                    written(coder.decodeObject(forKey: "conditional")),
                    "\(coder.decodeBool(forKey: "missing"))", "\(coder.decodeInteger(forKey: "missing"))",
                    "\(coder.decodeDouble(forKey: "missing"))", written(coder.decodeObject(forKey: "missing")),
                    "\(coder.containsValue(forKey: "missing"))",
                ]
            }),
        CoderCallSequence(
            name: "a class list is ignored without secure coding",
            encode: { coder in
                coder.encode([1, 2], forKey: "ints")
                coder.encode("text", forKey: "string")
                coder.encode(IndexPath(indexes: [1, 2]), forKey: "path")
            },
            decode: { coder in
                [
                    written(coder.decodeObject(of: [NSNumber.self], forKey: "ints")),
                    written(coder.decodeObject(of: [NSNumber.self], forKey: "string")),
                    written(coder.decodeObject(of: [NSString.self], forKey: "path")),
                ]
            }),
    ]

    static let unkeyedSequences: [CoderCallSequence] = [
        CoderCallSequence(
            name: "unkeyed objects, data and conditional objects, in order",
            encode: { coder in
                let shared = NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
                coder.encode("first" as NSString)
                coder.encode(shared)
                coder.encode(Data([9, 8]))
                coder.encodeConditionalObject(shared)
                coder.encodeRootObject([1, 2] as NSArray)
                coder.encodeBycopyObject(3.5 as NSNumber)
                coder.encodeByrefObject(nil)
                coder.encode(nil as Any?)
                coder.encode(IndexPath(indexes: [4, 5]))
            },
            decode: { coder in
                [
                    written(coder.decodeObject()), written(coder.decodeObject()), written(coder.decodeData()),
                    written(coder.decodeObject()), written(coder.decodeObject()), written(coder.decodeObject()),
                    written(coder.decodeObject()), written(coder.decodeObject()), written(coder.decodeObject()),
                    written(coder.decodeObject()),
                ]
            }),
        CoderCallSequence(
            name: "encodeValue(ofObjCType:at:) of every type code NSKeyedArchiver codes",
            encode: { coder in
                var int8 = Int8(-3)
                var uint8 = UInt8(250)
                var int32 = Int32(-70_000)
                var uint32 = UInt32(4_000_000_000)
                var long = Int32(-5)
                var ulong = UInt32(5)
                var int64 = Int64.min
                var uint64 = UInt64(1 << 40)
                var float = Float(0.5)
                var double = -1e300
                var bool = true
                var object: Any? = "object" as NSString
                var array: (Int32, Int32, Int32) = (1, -2, 3)
                coder.encodeValue(ofObjCType: "c", at: &int8)
                coder.encodeValue(ofObjCType: "C", at: &uint8)
                coder.encodeValue(ofObjCType: "i", at: &int32)
                coder.encodeValue(ofObjCType: "I", at: &uint32)
                coder.encodeValue(ofObjCType: "l", at: &long)
                coder.encodeValue(ofObjCType: "L", at: &ulong)
                coder.encodeValue(ofObjCType: "q", at: &int64)
                coder.encodeValue(ofObjCType: "Q", at: &uint64)
                coder.encodeValue(ofObjCType: "f", at: &float)
                coder.encodeValue(ofObjCType: "d", at: &double)
                coder.encodeValue(ofObjCType: "B", at: &bool)
                coder.encodeValue(ofObjCType: "@", at: &object)
                withUnsafeBytes(of: &array) { coder.encodeArray(ofObjCType: "i", count: 3, at: $0.baseAddress!) }
                "c string".withCString { string in
                    var pointer: UnsafePointer<CChar>? = string
                    coder.encodeValue(ofObjCType: "*", at: &pointer)
                }
            },
            decode: { coder in
                var int8 = Int8(0)
                var uint8 = UInt8(0)
                var int32 = Int32(0)
                var uint32 = UInt32(0)
                var long = Int32(0)
                var ulong = UInt32(0)
                var int64 = Int64(0)
                var uint64 = UInt64(0)
                var float = Float(0)
                var double = 0.0
                var bool = false
                // Not nil: NSKeyedUnarchiver assigns the object as an `Any` over what is there.
                var object: Any? = "placeholder" as NSString
                var array: (Int32, Int32, Int32) = (0, 0, 0)
                var pointer: UnsafePointer<CChar>? = nil
                coder.decodeValue(ofObjCType: "c", at: &int8)
                coder.decodeValue(ofObjCType: "C", at: &uint8)
                coder.decodeValue(ofObjCType: "i", at: &int32)
                coder.decodeValue(ofObjCType: "I", at: &uint32)
                coder.decodeValue(ofObjCType: "l", at: &long)
                coder.decodeValue(ofObjCType: "L", at: &ulong)
                coder.decodeValue(ofObjCType: "q", at: &int64)
                coder.decodeValue(ofObjCType: "Q", at: &uint64)
                coder.decodeValue(ofObjCType: "f", at: &float)
                coder.decodeValue(ofObjCType: "d", at: &double)
                coder.decodeValue(ofObjCType: "B", at: &bool)
                coder.decodeValue(ofObjCType: "@", at: &object)
                withUnsafeMutableBytes(of: &array) { coder.decodeArray(ofObjCType: "i", count: 3, at: $0.baseAddress!) }
                coder.decodeValue(ofObjCType: "*", at: &pointer)
                return [
                    "\(int8)", "\(uint8)", "\(int32)", "\(uint32)", "\(long)", "\(ulong)", "\(int64)", "\(uint64)",
                    "\(float)", "\(double)", "\(bool)", written(object), "\(array)",
                    pointer.map { String(cString: $0) } ?? "nil",
                ]
            }),
    ]

    @Test(arguments: sequences)
    func theCoderGivesBackWhatNSKeyedUnarchiverGivesBackThroughAnArchive(_ sequence: CoderCallSequence) throws {
        let expected = try foundationResult(sequence)
        let got = try archiveResult(sequence)
        #expect(got.result == expected)
        #expect(got.diagnostics.isEmpty)
    }

    @Test func theCoderGivesBackWhatNSKeyedUnarchiverGivesBackThroughAPreservationAndARestoration() throws {
        for sequence in Self.sequences {
            let expected = try foundationResult(sequence)
            var got: [String] = []
            let report = try CoderTests().roundTrip({ sequence.encode($0) }, decode: { got = sequence.decode($0) })
            #expect(got == expected, "\(sequence.name)")
            #expect(report.diagnostics.isEmpty, "\(sequence.name)")
        }
    }

    @Test func aDecimalComesBackAsDecimalOrAsNSDecimalNumberAsOnIOS() throws {
        // swift-corelibs-foundation's NSKeyedArchiver recurses without end on a Decimal; iOS gives
        // an NSDecimalNumber back, which casts to Decimal.
        let decimals = ["12.345", "-0.000123", "1e30", "0", "NaN"].map {
            $0 == "NaN" ? Decimal.nan : Decimal(string: $0)!
        }
        var plain: [Decimal?] = []
        var typed: [NSDecimalNumber?] = []
        var numbers: [NSNumber?] = []
        var fromNS: Decimal?
        var legacy: NSDecimalNumber?
        let diagnostics = try archiveRoundTrip(
            { coder in
                for (index, decimal) in decimals.enumerated() { coder.encode(decimal as Any, forKey: "d\(index)") }
                coder.encode(NSDecimalNumber(string: "3.14159"), forKey: "ns")
                coder.encode(Decimal(string: "2.5")!, forKey: "codable")
            },
            decode: { coder in
                for index in decimals.indices {
                    plain.append(coder.decodeObject(forKey: "d\(index)") as? Decimal)
                    typed.append(coder.decodeObject(of: NSDecimalNumber.self, forKey: "d\(index)"))
                    numbers.append(coder.decodeObject(of: [NSNumber.self], forKey: "d\(index)") as? NSNumber)
                }
                fromNS = coder.decodeObject(forKey: "ns") as? Decimal
                legacy = coder.decodeObject(of: NSDecimalNumber.self, forKey: "codable")
            })
        #expect(plain.map { $0?.description } == decimals.map(\.description))
        #expect(typed.map { $0?.decimalValue.description } == decimals.map(\.description))
        #expect(numbers.allSatisfy { $0 is NSDecimalNumber })
        #expect(fromNS == Decimal(string: "3.14159"))
        #expect(legacy?.decimalValue == Decimal(string: "2.5"), "a Decimal saved in its Codable form")
        #expect(diagnostics.archived.isEmpty && diagnostics.restored.isEmpty)
    }

    @Test func anIndexPathSavedInItsCodableFormStillDecodesAsNSIndexPath() throws {
        var legacy: NSIndexPath?
        var typed: IndexPath?
        let diagnostics = try archiveRoundTrip(
            { $0.encode(IndexPath(indexes: [3, 1]) as IndexPath, forKey: "path") },  // the typed, Codable overload
            decode: { coder in
                legacy = coder.decodeObject(of: NSIndexPath.self, forKey: "path")
                typed = coder.decodeObject(of: IndexPath.self, forKey: "path")
            })
        #expect(legacy.map { $0 as IndexPath } == IndexPath(indexes: [3, 1]))
        #expect(typed == IndexPath(indexes: [3, 1]))
        #expect(diagnostics.restored.isEmpty)
    }

    @Test func bridgedValuesAreSavedWithTheirClassesAsTheEntryEncodingArticleDescribes() throws {
        let archive = try RestorableStateArchive(
            archiving: Bag("Archived") { coder in
                coder.encode(IndexPath(indexes: [2, 0]) as Any, forKey: "path")
                coder.encode(Decimal(string: "-1.50")! as Any, forKey: "decimal")
                coder.encode(NSValue(point: CGPoint(x: 1, y: 2.5)), forKey: "point")
                coder.encode(NSValue(range: NSRange(location: 3, length: 4)), forKey: "range")
                coder.encode(IndexPath(index: 1), forKey: "codable")  // the typed overload: Codable form
            })
        let values = try RestorableEntry(decoding: Array(archive.data)).values
        #expect(
            values["path"]
                == .dictionary(["$class": .string("NSIndexPath"), "NS.indexes": .array([.int(2), .int(0)])]))
        #expect(
            values["decimal"] == .dictionary(["$class": .string("NSDecimalNumber"), "NS.decimal": .string("-1.5")]))
        #expect(
            values["point"]
                == .dictionary([
                    "$class": .string("NSValue"), "NS.special": .string("point"),
                    "NS.values": .array([.double(1), .double(2.5)]),
                ]))
        #expect(
            values["range"]
                == .dictionary([
                    "$class": .string("NSValue"), "NS.special": .string("range"),
                    "NS.values": .array([.int(3), .int(4)]),
                ]))
        #expect(values["codable"] == .dictionary(["indexes": .array([.int(1)])]))
    }

    @Test func anUnkeyedConditionalObjectEncodedNowhereElseDecodesAsNilInItsPlace() throws {
        // As NSCoder documents it; NSKeyedArchiver on Linux writes nothing, so that the values after
        // it are read one place early.
        var decoded: [String] = []
        _ = try archiveRoundTrip(
            { coder in
                coder.encodeConditionalObject(NSDate())
                coder.encode("after" as NSString)
            },
            decode: { coder in decoded = [written(coder.decodeObject()), written(coder.decodeObject())] })
        #expect(decoded == ["nil", "\"after\""])
    }

    @Test func theKeyedArchiveFormatQueriesAnswerAsAKeyedArchiverDoes() throws {
        var answers: [String] = []
        _ = try archiveRoundTrip({ _ in }) { coder in
            answers = [
                "\(coder.version(forClassName: "NSString"))", "\(coder.decodingFailurePolicy == .setErrorAndReturn)",
                "\(coder.error == nil)",
            ]
        }
        #expect(answers == ["0", "true", "true"])
    }
}
