import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// Random sequences of `NSCoder` calls, keyed and unkeyed, of mixed types, read back with the
/// matching decoders, with decoders of other types and under keys never written: nothing traps,
/// every matching decoder gives back what was encoded last under its key (or in its place), and a
/// missing key gives the zero value without a diagnostic.
@Suite struct NSCoderCallSequencePropertyTests {
    /// One value an encode call writes, and how to write it.
    enum Value: CaseIterable {
        case int, int32, int64, bool, double, float, string, data, bytes, date, url, uuid, indexPath, decimal
        case ints, dictionary, point, null

        /// The value, as the encode call takes it.
        func make(using random: inout SplitMix64) -> Any? {
            let small = Int.random(in: -1_000...1_000, using: &random)
            switch self {
            case .int: return small
            case .int32: return Int32.random(in: .min ... .max, using: &random)
            case .int64: return Int64.random(in: .min ... .max, using: &random)
            case .bool: return Bool.random(using: &random)
            case .double: return ([0, -0.5, 1e300, Double(small) / 8] as [Double]).randomElement(using: &random)!
            case .float: return Float(small) / 4
            case .string: return ["", "a", "Ünïcödé", "$0", "\(small)"].randomElement(using: &random)!
            case .data, .bytes: return Data((0..<Int.random(in: 0..<5, using: &random)).map { UInt8($0 * 51) })
            case .date: return Date(timeIntervalSinceReferenceDate: Double(small) * 1_000.25)
            case .url: return URL(string: "https://example.org/\(small)")!
            case .uuid:
                return UUID(uuid: (UInt8(truncatingIfNeeded: small), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
            case .indexPath:
                return IndexPath(indexes: (0..<Int.random(in: 0..<4, using: &random)).map { $0 + small & 0xFF })
            case .decimal: return Decimal(small) / 100
            case .ints: return (0..<Int.random(in: 0..<4, using: &random)).map { $0 * small }
            case .dictionary: return ["a": small, "b": -small]
            case .point: return NSValue(point: CGPoint(x: Double(small), y: 0.5))
            case .null: return nil
            }
        }

        /// Encodes `value` under `key`, through the method a UIKit app calls for it.
        func encode(_ value: Any?, into coder: NSCoder, forKey key: String) {
            switch self {
            case .int: coder.encode(value as! Int, forKey: key)
            case .int32: coder.encode(value as! Int32, forKey: key)
            case .int64: coder.encode(value as! Int64, forKey: key)
            case .bool: coder.encode(value as! Bool, forKey: key)
            case .double: coder.encode(value as! Double, forKey: key)
            case .float: coder.encode(value as! Float, forKey: key)
            case .bytes:
                let data = value as! Data
                data.withUnsafeBytes {
                    coder.encodeBytes($0.bindMemory(to: UInt8.self).baseAddress, length: data.count, forKey: key)
                }
            default: coder.encode(value, forKey: key)
            }
        }

        /// What the matching decoder gives back, written out.
        func decodeMatching(from coder: NSCoder, forKey key: String) -> String {
            switch self {
            case .int: "\(coder.decodeInteger(forKey: key))"
            case .int32: "\(coder.decodeCInt(forKey: key))"
            case .int64: "\(coder.decodeInt64(forKey: key))"
            case .bool: "\(coder.decodeBool(forKey: key))"
            case .double: "\(coder.decodeDouble(forKey: key))"
            case .float: "\(coder.decodeFloat(forKey: key))"
            case .bytes, .data: coder.withDecodedUnsafeBytes(forKey: key) { "\($0.map(Array.init) ?? [])" }
            case .string: written(coder.decodeObject(of: NSString.self, forKey: key))
            case .date: written(coder.decodeObject(of: NSDate.self, forKey: key))
            case .url: written(coder.decodeObject(of: NSURL.self, forKey: key))
            case .uuid: written(coder.decodeObject(of: NSUUID.self, forKey: key))
            case .indexPath: written(coder.decodeObject(of: NSIndexPath.self, forKey: key))
            case .decimal: coder.decodeObject(of: NSDecimalNumber.self, forKey: key)?.decimalValue.description ?? "nil"
            case .ints, .dictionary, .null: written(coder.decodeObject(forKey: key))
            case .point: written(coder.decodeObject(of: NSValue.self, forKey: key))
            }
        }

        /// What the matching decoder should give for `value`, written out.
        func expected(_ value: Any?) -> String {
            switch self {
            case .int, .int32, .int64, .bool, .double, .float: "\(value!)"
            case .bytes, .data: "\(Array(value as! Data))"
            case .decimal: (value as! Decimal).description
            case .point, .string, .date, .url, .uuid, .indexPath, .ints, .dictionary, .null: written(value)
            }
        }
    }

    /// Every decoder under a key, whatever was saved there: none may trap.
    static func decodeEverything(from coder: NSCoder, forKey key: String) -> String {
        var bytes = 0
        let restorationCoder = coder as? RestorationCoder
        let pointer = restorationCoder?.decodeBytes(forKey: key, returnedLength: &bytes)
        return [
            written(coder.decodeObject(forKey: key)), "\(coder.decodeBool(forKey: key))",
            "\(coder.decodeInteger(forKey: key))", "\(coder.decodeCInt(forKey: key))",
            "\(coder.decodeInt32(forKey: key))", "\(coder.decodeInt64(forKey: key))",
            "\(coder.decodeFloat(forKey: key))", "\(coder.decodeDouble(forKey: key))",
            coder.withDecodedUnsafeBytes(forKey: key) { "\($0?.count ?? -1)" }, "\(pointer == nil)",
            written(coder.decodeObject(of: [NSNumber.self], forKey: key)),
            written(coder.decodeObject(of: [NSString.self, NSArray.self], forKey: key)),
            written(coder.decodeObject(of: NSIndexPath.self, forKey: key)),
            written(coder.decodeObject(of: NSDecimalNumber.self, forKey: key)),
            written(coder.decodePropertyList(forKey: key)), "\(coder.containsValue(forKey: key))",
        ].joined(separator: "|")
    }

    /// The zero values `decodeEverything` gives for a key that holds nothing.
    static let missing = "nil|false|0|0|0|0|0.0|0.0|-1|true|nil|nil|nil|nil|nil|false"

    @Test(arguments: 0..<4)
    func randomCallSequencesNeverTrapAndDecodeWhatWasEncoded(chunk: Int) throws {
        let sequences = 750
        for index in 0..<sequences {
            let seed = UInt64(chunk * sequences + index)
            var random = SplitMix64(seed: seed)
            var keyed: [String: (Value, Any?)] = [:]
            var unkeyed: [(Value, Any?)?] = []  // nil: a structure, which is not encoded
            var calls: [(NSCoder) -> Void] = []
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                let kind = Value.allCases.randomElement(using: &random)!
                let value = kind.make(using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<6:
                    let key = "k\(Int.random(in: 0..<6, using: &random))"
                    keyed[key] = (kind, value)
                    calls.append { kind.encode(value, into: $0, forKey: key) }
                case 6..<9:
                    unkeyed.append((kind == .bytes ? .data : kind, value))
                    calls.append { coder in
                        if kind == .bytes || kind == .data { coder.encode(value as! Data) } else { coder.encode(value) }
                    }
                default:
                    unkeyed.append(nil)
                    calls.append { coder in
                        var point = CGPoint(x: 1, y: 2)
                        coder.encodeValue(ofObjCType: "{CGPoint=dd}", at: &point)
                    }
                }
            }
            var matching: [String: String] = [:]
            var everything: [String: String] = [:]
            var inOrder: [String] = []
            var error: (any Error)?
            let diagnostics = try archiveRoundTrip(
                { coder in for call in calls { call(coder) } },
                decode: { coder in
                    for (key, saved) in keyed { matching[key] = saved.0.decodeMatching(from: coder, forKey: key) }
                    for key in (0..<8).map({ "k\($0)" }) {
                        everything[key] = Self.decodeEverything(from: coder, forKey: key)
                    }
                    for slot in unkeyed {
                        switch slot?.0 {
                        case .data?: inOrder.append(coder.decodeData().map { "\(Array($0))" } ?? "nil")
                        case nil:
                            var point = CGPoint.zero
                            coder.decodeValue(ofObjCType: "{CGPoint=dd}", at: &point)
                            inOrder.append("\(point)")
                        default: inOrder.append(written(coder.decodeObject()))
                        }
                    }
                    inOrder.append(written(coder.decodeObject()))
                    error = coder.error
                })
            for (key, saved) in keyed {
                #expect(matching[key] == saved.0.expected(saved.1), "seed \(seed), \(key): \(saved.0)")
            }
            for key in (6..<8).map({ "k\($0)" }) { #expect(everything[key] == Self.missing, "seed \(seed)") }
            let expectedInOrder = unkeyed.map { slot -> String in
                guard let (kind, value) = slot else { return "\(CGPoint.zero)" }
                return kind == .data ? "\(Array(value as! Data))" : written(value)
            }
            #expect(inOrder == expectedInOrder + ["nil"], "seed \(seed)")
            let structures = unkeyed.filter { $0 == nil }.count
            #expect(diagnostics.archived.count == structures, "seed \(seed): one diagnostic per structure encoded")
            #expect((error != nil) == (structures > 0), "seed \(seed): a structure decoded fails through failWithError")
            #expect(
                diagnostics.restored.allSatisfy { !["k6", "k7"].contains($0.key) },
                "seed \(seed): a missing key is no problem")
        }
    }
}
