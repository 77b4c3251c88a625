import Foundation
import StateJournal
import StateRestoration
import Testing

/// The coder's typed fast paths for `Data`, `Date`, `URL`, `UUID`, and arrays and dictionaries of
/// them and of the other scalars: how they are stored, and that they come back exactly.
@Suite struct CoderFastPathTests {
    private let date = Date(timeIntervalSinceReferenceDate: 123_456.789_012_345)
    private let url = URL(string: "https://example.com/inbox?q=a%20b#top")!
    private let fileURL = URL(fileURLWithPath: "/var/lib/notes/a b.txt")
    private let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    /// Saves one `Bag` that runs `encode`, and returns the values of its entry.
    private func savedValues(_ encode: @escaping (RestorationCoder) throws -> Void) throws
        -> [String: RestorableValue]
    {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        try manager.preserveState(roots: [Bag("Root", encode: encode)])
        return try #require(try decodedEntries(journal)[RestorationPath("Root")]).values
    }

    @Test func urlsAndUUIDsAreStoredAsStrings() throws {
        let values = try savedValues { coder in
            coder.encode(url, forKey: "url")
            coder.encode(uuid, forKey: "uuid")
            coder.encode([url], forKey: "urls")
            coder.encode(["id": uuid], forKey: "uuids")
        }
        #expect(values["url"] == .string("https://example.com/inbox?q=a%20b#top"))
        #expect(values["uuid"] == .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(values["urls"] == .array([.string("https://example.com/inbox?q=a%20b#top")]))
        #expect(values["uuids"] == .dictionary(["id": .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F")]))
    }

    @Test func urlsNestedInACodableValueAreStoredAsStringsToo() throws {
        struct Link: Codable, Equatable {
            var target: URL
        }
        let values = try savedValues { $0.encode(Link(target: url), forKey: "link") }
        #expect(values["link"] == .dictionary(["target": .string(url.absoluteString)]))
    }

    @Test func arraysAndDictionariesOfScalarsAreStoredAsTheirCodableFormsAre() throws {
        let values = try savedValues { coder in
            coder.encode([true, false], forKey: "bools")
            coder.encode(["a": 1, "b": -2], forKey: "ints")
            coder.encode([Data([1]), Data()], forKey: "datas")
            coder.encode(["at": date], forKey: "dates")
            coder.encode([[1, 2], [3]], forKey: "nested")
        }
        #expect(values["bools"] == .array([.bool(true), .bool(false)]))
        #expect(values["ints"] == .dictionary(["a": .int(1), "b": .int(-2)]))
        #expect(values["datas"] == .array([.data(Data([1])), .data(Data())]))
        #expect(values["dates"] == .dictionary(["at": .date(date)]))
        #expect(values["nested"] == .array([.array([.int(1), .int(2)]), .array([.int(3)])]))
    }

    @Test func dataDatesURLsAndUUIDsRoundTripThroughTheirNamedDecoders() throws {
        var decoded: (Data, Date, URL, URL, UUID)?
        let report = try CoderTests().roundTrip(
            { coder in
                coder.encode(Data([0, 255]), forKey: "data")
                coder.encode(date, forKey: "date")
                coder.encode(url, forKey: "url")
                coder.encode(fileURL, forKey: "file")
                coder.encode(uuid, forKey: "uuid")
            },
            decode: { coder in
                decoded = (
                    try coder.decodeData(forKey: "data"), try coder.decodeDate(forKey: "date"),
                    try coder.decodeURL(forKey: "url"), try coder.decodeURL(forKey: "file"),
                    try coder.decodeUUID(forKey: "uuid")
                )
            })
        #expect(report.diagnostics.isEmpty)
        #expect(decoded?.0 == Data([0, 255]))
        #expect(decoded?.1 == date)
        #expect(decoded?.2 == url)
        #expect(decoded?.3 == fileURL)
        #expect(decoded?.3.path == "/var/lib/notes/a b.txt")
        #expect(decoded?.4 == uuid)
    }

    @Test func arraysAndDictionariesOfEveryFastPathTypeRoundTrip() throws {
        var results: [Bool] = []
        let report = try CoderTests().roundTrip(
            { [date, url, uuid] coder in
                coder.encode([true], forKey: "bools")
                coder.encode([Int8(-1), 2], forKey: "int8s")
                coder.encode(["x": 1.5], forKey: "doubles")
                coder.encode(["s": "t"], forKey: "strings")
                coder.encode([Data([7])], forKey: "datas")
                coder.encode(["d": date], forKey: "dates")
                coder.encode([url], forKey: "urls")
                coder.encode(["u": uuid], forKey: "uuids")
                coder.encode(["k": [1, 2]], forKey: "nested")
            },
            decode: { [date, url, uuid] coder in
                results = [
                    try coder.decode([Bool].self, forKey: "bools") == [true],
                    try coder.decode([Int8].self, forKey: "int8s") == [-1, 2],
                    try coder.decode([String: Double].self, forKey: "doubles") == ["x": 1.5],
                    try coder.decode([String: String].self, forKey: "strings") == ["s": "t"],
                    try coder.decode([Data].self, forKey: "datas") == [Data([7])],
                    try coder.decode([String: Date].self, forKey: "dates") == ["d": date],
                    try coder.decode([URL].self, forKey: "urls") == [url],
                    try coder.decode([String: UUID].self, forKey: "uuids") == ["u": uuid],
                    try coder.decode([String: [Int]].self, forKey: "nested") == ["k": [1, 2]],
                ]
            })
        #expect(report.diagnostics.isEmpty)
        #expect(results == Array(repeating: true, count: 9))
    }

    @Test func aURLSavedInItsCodableDictionaryFormIsStillRead() throws {
        var decoded: URL?
        _ = try CoderTests().roundTrip(
            {
                $0.encode(RestorableValue.dictionary(["relative": .string("https://example.com/a")]), forKey: "url")
            },
            decode: { decoded = try $0.decodeURL(forKey: "url") })
        #expect(decoded == URL(string: "https://example.com/a"))
    }

    @Test func aStringThatIsNotAUUIDThrowsATypedErrorNamingPathAndKey() throws {
        var caught: RestorationError?
        _ = try CoderTests().roundTrip(
            { $0.encode("not a uuid", forKey: "id") },
            decode: { coder in
                do { _ = try coder.decodeUUID(forKey: "id") } catch let error as RestorationError { caught = error }
            })
        #expect(caught?.code == .typeMismatch)
        #expect(caught?.path == RestorationPath("Root"))
        #expect(caught?.key == "id")
    }

    @Test func aWrongElementInAnArrayNamesItsIndex() throws {
        var caught: RestorationError?
        _ = try CoderTests().roundTrip(
            { $0.encode(RestorableValue.array([.int(1), .string("two")]), forKey: "ints") },
            decode: { coder in
                do { _ = try coder.decode([Int].self, forKey: "ints") } catch let error as RestorationError {
                    caught = error
                }
            })
        #expect(caught?.code == .typeMismatch)
        #expect(caught?.key == "ints")
        #expect(caught?.message.contains("at 1") == true)
    }
}
