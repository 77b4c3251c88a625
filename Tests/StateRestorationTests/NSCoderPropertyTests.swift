import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import Testing

/// Random objects write random subsets of keys with random types, some keys only in one of two
/// saves; decoding through `NSCoder`'s names and through the typed API returns what the last save
/// wrote, or the zero value with a diagnostic, never a thrown error and never a silent loss.
@Suite struct NSCoderPropertyTests {
    enum Written: Equatable {
        case bool(Bool)
        case int(Int)
        case double(Double)
        case string(String)

        static func random(using random: inout SplitMix64) -> Written {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: .bool(Bool.random(using: &random))
            case 1: .int(Int.random(in: -5...5, using: &random))
            case 2: .double([0, 1.5, -2.25, 3, 1e300].randomElement(using: &random)!)
            default: .string(["", "a", "Ünïcödé", "a longer string"].randomElement(using: &random)!)
            }
        }

        func encode(into coder: RestorationCoder, forKey key: String) {
            switch self {
            case .bool(let value): coder.encode(value, forKey: key)
            case .int(let value): coder.encode(value, forKey: key)
            case .double(let value): coder.encode(value, forKey: key)
            case .string(let value): coder.encode(value, forKey: key)
            }
        }
    }

    enum Read: CaseIterable {
        case integer, bool, double, string, object
    }

    /// What a read under `NSCoder`'s names gives for a written value, and whether it records a
    /// diagnostic.
    static func expected(_ read: Read, _ written: Written?) -> (value: String, diagnostic: Bool) {
        switch (read, written) {
        case (.integer, nil): ("0", false)
        case (.integer, .int(let value)?): ("\(value)", false)
        case (.integer, .bool(let value)?): (value ? "1" : "0", false)
        case (.integer, .double(let value)?):
            Int(exactly: value.rounded(.towardZero)).map { ("\($0)", false) } ?? ("0", true)
        case (.integer, .string?): ("0", true)
        case (.bool, nil): ("false", false)
        case (.bool, .bool(let value)?): ("\(value)", false)
        case (.bool, .int(let value)?): ("\(value != 0)", false)
        case (.bool, .double(let value)?): ("\(value != 0)", false)
        case (.bool, .string?): ("false", true)
        case (.double, nil): ("0.0", false)
        case (.double, .double(let value)?): ("\(value)", false)
        case (.double, .int(let value)?): ("\(Double(value))", false)
        case (.double, .bool(let value)?): (value ? "1.0" : "0.0", false)
        case (.double, .string?): ("0.0", true)
        case (.string, nil): ("nil", false)
        case (.string, .string(let value)?): (value, false)
        case (.string, _?): ("nil", true)
        case (.object, nil): ("nil", false)
        case (.object, .bool(let value)?): ("\(value)", false)
        case (.object, .int(let value)?): ("\(value)", false)
        case (.object, .double(let value)?): ("\(value)", false)
        case (.object, .string(let value)?): (value, false)
        }
    }

    static func read(_ read: Read, _ key: String, from coder: RestorationCoder) -> String {
        switch read {
        case .integer: "\(coder.decodeInteger(forKey: key))"
        case .bool: "\(coder.decodeBool(forKey: key))"
        case .double: "\(coder.decodeDouble(forKey: key))"
        case .string: coder.decodeObject(of: String.self, forKey: key) ?? "nil"
        case .object: coder.decodeObject(forKey: key).map { "\($0)" } ?? "nil"
        }
    }

    /// What the typed API gives for the written type: the value, or `nil` for a missing key.
    static func typedRead(_ written: Written?, _ key: String, from coder: RestorationCoder) throws -> Written? {
        switch written {
        case nil: try coder.decodeIfPresent(Int.self, forKey: key).map(Written.int)
        case .bool?: try coder.decodeIfPresent(Bool.self, forKey: key).map(Written.bool)
        case .int?: try coder.decodeIfPresent(Int.self, forKey: key).map(Written.int)
        case .double?: try coder.decodeIfPresent(Double.self, forKey: key).map(Written.double)
        case .string?: try coder.decodeIfPresent(String.self, forKey: key).map(Written.string)
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func decodingReturnsWhatTheLastSaveWroteOrTheZeroValueWithADiagnostic(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let keys = (0..<8).map { "k\($0)" }
        let identifiers = (0..<12).map { "O\($0)" }
        func draw() -> [String: [String: Written]] {
            var all: [String: [String: Written]] = [:]
            for id in identifiers {
                var values: [String: Written] = [:]
                for key in keys where Bool.random(using: &random) { values[key] = Written.random(using: &random) }
                all[id] = values
            }
            return all
        }
        let first = draw()
        let last = draw()
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            var current = first
            let roots = identifiers.map { id in
                Bag(id) { coder in
                    for (key, value) in current[id] ?? [:] { value.encode(into: coder, forKey: key) }
                }
            }
            try manager.preserveState(roots: roots)
            current = last
            let report = try manager.preserveState(roots: roots)
            #expect(report.problems.isEmpty)
            withExtendedLifetime(delegate) {}
        }
        let reads = identifiers.map { _ in keys.map { _ in Read.allCases.randomElement(using: &random)! } }
        var got: [String: [String]] = [:]
        var typed: [String: [Written?]] = [:]
        var thrown: [String] = []
        let roots = identifiers.enumerated().map { index, id in
            let bag = Bag(id) { _ in }
            bag.decodeBody = { coder in
                got[id] = zip(keys, reads[index]).map { key, read in Self.read(read, key, from: coder) }
                typed[id] = keys.map { key in
                    do { return try Self.typedRead(last[id]?[key], key, from: coder) } catch {
                        thrown.append("\(id).\(key): \(error)")
                        return nil
                    }
                }
            }
            return bag
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let report = try store.manager(journal, delegate: delegate).restoreState(roots: roots)
        var expectedDiagnostics: [String] = []
        for (index, id) in identifiers.enumerated() {
            let expected = zip(keys, reads[index]).map { key, read in Self.expected(read, last[id]?[key]) }
            #expect(got[id] == expected.map(\.value), "\(id), seed \(seed)")
            for (key, item) in zip(keys, expected) where item.diagnostic { expectedDiagnostics.append("\(id).\(key)") }
            #expect(typed[id] == keys.map { last[id]?[$0] }, "\(id), seed \(seed)")
        }
        let diagnostics = report.diagnostics.compactMap { diagnostic -> String? in
            guard case .coder(let coder) = diagnostic else { return nil }
            return "\(coder.path.components.joined(separator: "/")).\(coder.key)"
        }
        #expect(diagnostics.sorted() == expectedDiagnostics.sorted(), "seed \(seed)")
        #expect(report.diagnostics.count == diagnostics.count)
        #expect(thrown.isEmpty)
    }
}
