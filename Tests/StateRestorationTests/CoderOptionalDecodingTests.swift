import Foundation
import StateJournal
import StateRestoration
import Testing

/// Decoding keys that may be missing, as `NSCoder` users expect: `nil` or a default for a missing
/// key, and still a typed error for a value of the wrong type.
@Suite struct CoderOptionalDecodingTests {
    private func roundTrip(
        _ encode: @escaping (RestorationCoder) throws -> Void, decode: @escaping (RestorationCoder) throws -> Void
    ) throws -> RestorationReport {
        try CoderTests().roundTrip(encode, decode: decode)
    }

    @Test func decodeIfPresentReturnsNilForAMissingKey() throws {
        var int: Int?? = .none
        var strings: [String]?? = .none
        var url: URL?? = .none
        let report = try roundTrip(
            { $0.encode(1, forKey: "present") },
            decode: { coder in
                int = try coder.decodeIfPresent(Int.self, forKey: "absent")
                strings = try coder.decodeIfPresent([String].self, forKey: "absent")
                url = try coder.decodeIfPresent(URL.self, forKey: "absent")
            })
        #expect(report.diagnostics.isEmpty)
        #expect(int == .some(nil))
        #expect(strings == .some(nil))
        #expect(url == .some(nil))
    }

    @Test func decodeIfPresentReturnsNilForANullValue() throws {
        var decoded: Int?? = .none
        _ = try roundTrip(
            { $0.encode(RestorableValue.null, forKey: "nothing") },
            decode: { decoded = try $0.decodeIfPresent(Int.self, forKey: "nothing") })
        #expect(decoded == .some(nil))
    }

    @Test func decodeIfPresentReturnsAPresentValue() throws {
        var decoded: [Int: Any] = [:]
        _ = try roundTrip(
            { coder in
                coder.encode(7, forKey: "int")
                coder.encode(false, forKey: "bool")
                coder.encode(Preferences(theme: "t", sizes: [], nested: nil, ratio: 1, big: 2), forKey: "prefs")
            },
            decode: { coder in
                decoded[0] = try coder.decodeIfPresent(Int.self, forKey: "int")
                decoded[1] = try coder.decodeIfPresent(Bool.self, forKey: "bool")
                decoded[2] = try coder.decodeIfPresent(Preferences.self, forKey: "prefs")?.theme
            })
        #expect(decoded[0] as? Int == 7)
        #expect(decoded[1] as? Bool == false)
        #expect(decoded[2] as? String == "t")
    }

    @Test func decodeIfPresentThrowsATypedErrorNamingPathAndKeyForAValueOfTheWrongType() throws {
        var caught: RestorationError?
        let report = try roundTrip(
            { $0.encode("text", forKey: "count") },
            decode: { coder in
                do { _ = try coder.decodeIfPresent(Int.self, forKey: "count") } catch let error as RestorationError {
                    caught = error
                    throw error
                }
            })
        #expect(caught?.code == .typeMismatch)
        #expect(caught?.path == RestorationPath("Root"))
        #expect(caught?.key == "count")
        #expect(report.diagnostics.count == 1)
    }

    @Test func decodeWithADefaultReturnsTheDefaultOnlyForAMissingKey() throws {
        var missing = 0
        var present = 0
        var inferred = ""
        var evaluated = false
        _ = try roundTrip(
            { $0.encode(5, forKey: "present") },
            decode: { coder in
                missing = try coder.decode(Int.self, forKey: "absent", default: 42)
                present = try coder.decode(
                    Int.self, forKey: "present",
                    default: {
                        evaluated = true; return 0
                    }())
                inferred = try coder.decode(forKey: "title", default: "Untitled")
            })
        #expect(missing == 42)
        #expect(present == 5)
        #expect(!evaluated)
        #expect(inferred == "Untitled")
    }

    @Test func decodeWithADefaultStillThrowsForAValueOfTheWrongType() throws {
        var caught: RestorationError?
        _ = try roundTrip(
            { $0.encode(3.5, forKey: "count") },
            decode: { coder in
                do { _ = try coder.decode(Int.self, forKey: "count", default: 0) } catch let error as RestorationError {
                    caught = error
                }
            })
        #expect(caught?.code == .typeMismatch)
        #expect(caught?.key == "count")
        #expect(caught?.path == RestorationPath("Root"))
    }

    @Test func decodeIfPresentReportsAnIntegerThatDoesNotFitAsOutOfRange() throws {
        var caught: RestorationError?
        _ = try roundTrip(
            { $0.encode(300, forKey: "small") },
            decode: { coder in
                do { _ = try coder.decodeIfPresent(UInt8.self, forKey: "small") } catch let error as RestorationError {
                    caught = error
                }
            })
        #expect(caught?.code == .valueOutOfRange)
        #expect(caught?.key == "small")
    }

    @Test func aMissingObjectReferenceDecodesAsNilAndTheRestOfTheDecodeRuns() throws {
        var object: (any StateRestoring)?? = .none
        var typed: Node?? = .none
        var objects: [any StateRestoring]? = nil
        var title: String?
        let report = try roundTrip(
            { $0.encode("Inbox", forKey: "title") },
            decode: { coder in
                object = coder.decodeObject(forKey: "presented") as? any StateRestoring
                typed = coder.decodeObject(of: Node.self, forKey: "presented")
                objects = try coder.decodeObjects(forKey: "children")
                title = try coder.decodeString(forKey: "title")
            })
        #expect(report.diagnostics.isEmpty)
        #expect(object.map { $0 == nil } == true)
        #expect(typed.map { $0 == nil } == true)
        #expect(objects?.isEmpty == true)
        #expect(title == "Inbox")
    }

    @Test func aValueThatIsNotAReferenceDecodesAsThatValueAsNSCoderDoes() throws {
        var object: Any?
        var typed: Node?? = .none
        let report = try roundTrip(
            { $0.encode(3, forKey: "presented") },
            decode: { coder in
                object = coder.decodeObject(forKey: "presented")
                typed = coder.decodeObject(of: Node.self, forKey: "presented")
            })
        #expect(object as? Int == 3)
        #expect(typed.map { $0 == nil } == true)
        guard case .coder(let diagnostic)? = report.diagnostics.first else {
            Issue.record("expected a coder diagnostic, got \(report.diagnostics)")
            return
        }
        #expect(diagnostic.kind == .classNotAllowed)
        #expect(diagnostic.key == "presented")
    }
}
