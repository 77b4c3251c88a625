import Foundation
import StateJournal
import StateRestoration
import Testing

struct Preferences: Codable, Equatable {
    var theme: String
    var sizes: [Int]
    var nested: Nested?
    var ratio: Float
    var big: UInt64

    struct Nested: Codable, Equatable {
        var flag: Bool
        var when: Date
        var blob: Data
    }
}

/// An object that encodes whatever a test gives it and decodes with a closure.
final class Bag: RestorableController {
    let id: String
    var encodeBody: (RestorationCoder) throws -> Void
    var decodeBody: (RestorationCoder) throws -> Void = { _ in }
    init(_ id: String, encode: @escaping (RestorationCoder) throws -> Void) {
        self.id = id
        self.encodeBody = encode
    }
    var restorationIdentifier: String? { id }
    func encodeRestorableState(with coder: RestorationCoder) throws { try encodeBody(coder) }
    func decodeRestorableState(with coder: RestorationCoder) throws { try decodeBody(coder) }
}

@Suite struct CoderTests {
    /// Saves one Bag, restores into a fresh Bag found in the hierarchy, and returns what decoding gave.
    func roundTrip(
        _ encode: @escaping (RestorationCoder) throws -> Void, decode: @escaping (RestorationCoder) throws -> Void,
        codingClasses: [any (NSObject & NSCoding).Type] = []
    ) throws
        -> RestorationReport
    {
        let store = TestStore()
        do {
            let journal = try store.open()
            let manager = store.manager(journal, delegate: TestDelegate())
            let delegate = TestDelegate()
            manager.delegate = delegate
            try manager.preserveState(roots: [Bag("Root", encode: encode)])
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        for codingClass in codingClasses { manager.registerCodingClass(codingClass) }
        let bag = Bag("Root") { _ in }
        bag.decodeBody = decode
        return try manager.restoreState(roots: [bag])
    }

    @Test func scalarsStringsDataDatesAndArraysRoundTripExactly() throws {
        let date = Date(timeIntervalSinceReferenceDate: 123_456.789_012_345)
        var decoded: [String] = []
        let report = try roundTrip(
            { coder in
                coder.encode(true, forKey: "bool")
                coder.encode(-42, forKey: "int")
                coder.encode(0.1, forKey: "double")
                coder.encode("héllo/\\", forKey: "string")
                coder.encode(Data([0, 1, 255]), forKey: "data")
                coder.encode(date, forKey: "date")
                coder.encode([1, 2, 3], forKey: "ints")
                coder.encode(["a", "b"], forKey: "strings")
                coder.encode([1.5], forKey: "doubles")
            },
            decode: { coder in
                decoded.append("\(coder.decodeBool(forKey: "bool"))")
                decoded.append("\(try coder.decodeInt(forKey: "int"))")
                decoded.append("\(coder.decodeDouble(forKey: "double"))")
                decoded.append(try coder.decodeString(forKey: "string"))
                decoded.append("\(try coder.decode(Data.self, forKey: "data") == Data([0, 1, 255]))")
                decoded.append("\(try coder.decode(Date.self, forKey: "date") == date)")
                decoded.append("\(try coder.decode([Int].self, forKey: "ints"))")
                decoded.append("\(try coder.decode([String].self, forKey: "strings"))")
                decoded.append("\(try coder.decode([Double].self, forKey: "doubles"))")
            })
        #expect(report.diagnostics.isEmpty)
        #expect(decoded == ["true", "-42", "0.1", "héllo/\\", "true", "true", "[1, 2, 3]", "[\"a\", \"b\"]", "[1.5]"])
    }

    @Test func anyCodableValueRoundTrips() throws {
        let value = Preferences(
            theme: "dark", sizes: [10, 12],
            nested: .init(flag: true, when: Date(timeIntervalSince1970: 5), blob: Data([9])),
            ratio: 0.5, big: 7)
        var decoded: Preferences?
        _ = try roundTrip(
            { $0.encode(value, forKey: "prefs") },
            decode: { decoded = try $0.decode(Preferences.self, forKey: "prefs") })
        #expect(decoded == value)
    }

    @Test func missingKeyThrowsATypedErrorNamingPathAndKey() throws {
        var caught: RestorationError?
        let report = try roundTrip(
            { $0.encode(1, forKey: "present") },
            decode: { coder in
                do { _ = try coder.decodeInt(forKey: "absent") } catch let error as RestorationError {
                    caught = error; throw error
                }
            })
        #expect(caught?.code == .keyNotFound)
        #expect(caught?.path == RestorationPath("Root"))
        #expect(caught?.key == "absent")
        #expect(report.diagnostics.count == 1)
    }

    @Test func wrongTypeThrowsATypedErrorNamingPathAndKey() throws {
        var caught: RestorationError?
        var nested: RestorationError?
        _ = try roundTrip(
            { coder in
                coder.encode("text", forKey: "name")
                coder.encode(RestorableValue.dictionary(["theme": .int(3)]), forKey: "prefs")
            },
            decode: { coder in
                do { _ = try coder.decodeInt(forKey: "name") } catch let error as RestorationError { caught = error }
                do { _ = try coder.decode(Preferences.self, forKey: "prefs") } catch let error as RestorationError {
                    nested = error
                }
            })
        #expect(caught?.code == .typeMismatch)
        #expect(caught?.path == RestorationPath("Root"))
        #expect(caught?.key == "name")
        #expect(nested?.code == .typeMismatch)
        #expect(nested?.key == "prefs")
        #expect(nested?.message.contains("theme") == true)
    }

    @Test func containsValueTellsWhetherAKeyWasEncoded() throws {
        var answers: [Bool] = []
        _ = try roundTrip(
            { $0.encode(1, forKey: "here") },
            decode: { coder in
                answers = [coder.containsValue(forKey: "here"), coder.containsValue(forKey: "gone")]
            })
        #expect(answers == [true, false])
    }

    @Test func theSameKeyInTwoObjectsNeverCollides() throws {
        let store = TestStore()
        let journal = try store.open()
        let manager = store.manager(journal, delegate: TestDelegate())
        let delegate = TestDelegate()
        manager.delegate = delegate
        try manager.preserveState(roots: [Node("A", value: 1), Node("B", value: 2)])
        let entries = try decodedEntries(journal)
        #expect(entries[RestorationPath("A")]?.values["value"] == .int(1))
        #expect(entries[RestorationPath("B")]?.values["value"] == .int(2))
    }

    @Test func unsignedValuesAboveInt64MaxAreNotWrittenAndReportedAsOutOfRange() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let report = try manager.preserveState(roots: [
            Bag("Root") { coder in
                coder.encode(UInt64.max, forKey: "big")
                coder.encode(1, forKey: "small")
            }
        ])
        guard case .coder(let diagnostic)? = report.problems.first else {
            Issue.record("expected a coder problem, got \(report.problems)")
            return
        }
        #expect(diagnostic.kind == .valueOutOfRange)
        #expect(diagnostic.key == "big")
        #expect(diagnostic.path == RestorationPath("Root"))
        let entries = try decodedEntries(journal)
        #expect(entries[RestorationPath("Root")]?.values["big"] == nil)
        #expect(entries[RestorationPath("Root")]?.values["small"] == .int(1))
    }

    @Test func archiveKeysCannotBeOverwrittenByTheApp() throws {
        final class Overwriter: TestDelegate {
            override func willEncodeRestorableState(_ coder: RestorationCoder) {
                coder.encode("999", forKey: ArchiveKey.bundleVersion)
            }
        }
        let store = TestStore()
        let journal = try store.open()
        let delegate = Overwriter()
        let manager = store.manager(journal, delegate: delegate)
        let report = try manager.preserveState(roots: [Node("A")])
        #expect(report.problems.map(\.reservedKeyProblem) == [ArchiveKey.bundleVersion])
        #expect(try journal.history().last?.metadata[EpochMetadataKey.bundleVersion] == "1")
    }
}

extension PreservationProblem {
    /// The key of a reserved-key problem, `nil` for any other problem.
    fileprivate var reservedKeyProblem: String? {
        guard case .coder(let diagnostic) = self, diagnostic.kind == .reservedKey else { return nil }
        return diagnostic.key
    }

}
