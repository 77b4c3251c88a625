import Foundation
import StateJournal
import StateRestoration
import Testing

@Suite struct EntryEncodingTests {
    @Test func entriesDecodeWithoutTheAppsTypesAndRenderAsJSON() throws {
        let store = TestStore()
        let journal = try store.open()
        let manager = store.manager(journal, delegate: TestDelegate())
        let delegate = TestDelegate()
        manager.delegate = delegate
        let child = Node("Child", value: 2)
        let root = Bag("Root") { coder in
            coder.encode(["b": 1, "a": 2], forKey: "map")
            coder.encode(child, forKey: "child")
            coder.encode(Date(timeIntervalSince1970: 0), forKey: "when")
            coder.encode(Data([1, 2]), forKey: "blob")
        }
        try manager.preserveState(roots: [root])
        let entry = try RestorableEntry(decoding: try journal.state().entries[RestorationPath("Root")]!)
        #expect(entry.kind == .controller)
        #expect(entry.typeName == "StateRestorationTests.Bag")
        #expect(entry.restorationClassName == nil)
        #expect(entry.values["child"] == .reference(RestorationPath("Root", "Child")))
        #expect(
            entry.jsonText()
                == #"{"kind":"controller","restorationClass":null,"type":"StateRestorationTests.Bag","values":{"#
                + #""blob":{"$data":"AQI="},"child":{"$ref":"Root/Child"},"map":{"a":2,"b":1},"#
                + #""when":{"$date":"1970-01-01T00:00:00.000Z"}}}"#
        )
        let childEntry = try RestorableEntry(decoding: try journal.state().entries[RestorationPath("Root", "Child")]!)
        #expect(childEntry.values == ["value": .int(2), "text": .string("")])
    }

    @Test func theByteLayoutIsPinned() throws {
        let entry = RestorableEntry(
            kind: .object, typeName: "M.T", restorationClassName: "M.R",
            values: ["n": .int(-2), "s": .string("é"), "r": .reference(RestorationPath("A", "B")), "z": .null])
        let expected: [UInt8] = [
            0x01, 0x01, 0x03, 0x4D, 0x2E, 0x54, 0x03, 0x4D, 0x2E, 0x52,  // version, kind, type, class
            0x09, 0x04,  // dictionary of 4
            0x01, 0x6E, 0x03, 0x03,  // "n": int zigzag(-2) = 3
            0x01, 0x72, 0x0A, 0x02, 0x01, 0x41, 0x01, 0x42,  // "r": reference A/B
            0x01, 0x73, 0x05, 0x02, 0xC3, 0xA9,  // "s": string "é"
            0x01, 0x7A, 0x00,  // "z": null
        ]
        #expect(entry.encoded == expected)
        #expect(try RestorableEntry(decoding: expected) == entry)
    }

    @Test func malformedEntriesThrowAndNeverCrash() throws {
        let entry = RestorableEntry(
            kind: .controller, typeName: "Module.Type", restorationClassName: nil,
            values: [
                "a": .array([
                    .int(1), .double(2), .string("x"), .data(Data([1])), .date(Date(timeIntervalSince1970: 1)),
                ]),
                "d": .dictionary(["k": .bool(true)]), "r": .reference(RestorationPath("X")),
            ])
        let bytes = entry.encoded
        for length in 0..<bytes.count {
            #expect(throws: RestorationError.self) { try RestorableEntry(decoding: Array(bytes.prefix(length))) }
        }
        var state: UInt64 = 12345
        for _ in 0..<2000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            var damaged = bytes
            damaged[Int(state >> 33) % damaged.count] = UInt8(truncatingIfNeeded: state >> 17)
            _ = try? RestorableEntry(decoding: damaged)
        }
        #expect(throws: RestorationError.self) {
            try RestorableEntry(decoding: [0x01, 0x00, 0x00, 0x00, 0x09, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
        }
        let deep = [UInt8]([0x01, 0x00, 0x00, 0x00, 0x09, 0x01, 0x01, 0x61]) + [UInt8](repeating: 0x08, count: 5000)
        #expect(throws: RestorationError.self) { try RestorableEntry(decoding: deep) }
        #expect(throws: RestorationError.self) { try RestorableEntry(decoding: [0x02, 0x00]) }
    }
}
