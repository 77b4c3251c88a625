import Foundation
import StateJournal
import StateRestoration
import Testing

/// Saves what `encode` writes into a standalone archive and restores it into `decode`: the coder's
/// in-memory round trip, through the entry encoding, without a journal.
func archiveRoundTrip(
    codingClasses: [any (NSObject & NSCoding).Type] = [],
    _ encode: @escaping (RestorationCoder) throws -> Void, decode: @escaping (RestorationCoder) throws -> Void
) throws -> (archived: [CoderDiagnostic], restored: [CoderDiagnostic]) {
    let archive = try RestorableStateArchive(archiving: Bag("Archived", encode: encode))
    let target = Bag("Archived") { _ in }
    target.decodeBody = decode
    let restored = try RestorableStateArchive.restore(target, from: archive.data, allowingCodingClasses: codingClasses)
    return (archive.diagnostics, restored)
}

/// Three calls ported UIKit code makes that stopped the process (Foundation's `NSCoder` traps in every
/// method a subclass does not implement), each run in a child process so that a trap fails the
/// test instead of ending the run, then run again here to check what it gives back.
@Suite struct NSCoderReportedTrapTests {
    @Test func decodeCIntReturnsTheSavedIntegerInsteadOfStoppingTheProcess() async throws {
        await #expect(processExitsWith: .success) {
            _ = try archiveRoundTrip({ $0.encode(Int32(-7), forKey: "position") }) { coder in
                _ = coder.decodeCInt(forKey: "position")
            }
        }
        var decoded: [Int32] = []
        let diagnostics = try archiveRoundTrip({ $0.encode(Int32(-7), forKey: "position") }) { coder in
            decoded = [coder.decodeCInt(forKey: "position"), coder.decodeCInt(forKey: "missing")]
        }
        #expect(decoded == [-7, 0])
        #expect(diagnostics.restored.isEmpty)
    }

    @Test func aRegisteredNSAttributedStringDecodesThroughAllowedClassesInsteadOfStoppingTheProcess() async throws {
        await #expect(processExitsWith: .success) {
            let text = NSAttributedString(string: "Hello", attributes: [.init("NSLink"): "https://example.org"])
            _ = try archiveRoundTrip(codingClasses: [NSAttributedString.self], { $0.encode(text, forKey: "text") }) {
                _ = $0.decodeObject(forKey: "text")
            }
        }
        let runs = NSMutableAttributedString(string: "Hello, world")
        runs.addAttribute(.init("NSLink"), value: "https://example.org", range: NSRange(location: 0, length: 5))
        let text = NSAttributedString(attributedString: runs)
        var restored: NSAttributedString?
        var secure: NSAttributedString?
        let diagnostics = try archiveRoundTrip(
            codingClasses: [NSAttributedString.self], { $0.encode(text, forKey: "text") }
        ) {
            coder in
            restored = coder.decodeObject(forKey: "text") as? NSAttributedString
            secure = coder.decodeObject(of: NSAttributedString.self, forKey: "text")
        }
        #expect(restored?.string == "Hello, world")
        #expect(restored?.attribute(.init("NSLink"), at: 0, effectiveRange: nil) as? String == "https://example.org")
        #expect(restored?.attribute(.init("NSLink"), at: 7, effectiveRange: nil) == nil)
        #expect(secure?.isEqual(to: text) == true)
        #expect(diagnostics.archived.isEmpty)
        #expect(diagnostics.restored.isEmpty)
    }

    @Test func anUnkeyedEncodeOfAnObjectIsSavedAndDecodedInOrderInsteadOfStoppingTheProcess() async throws {
        await #expect(processExitsWith: .success) {
            _ = try archiveRoundTrip({ $0.encode("first" as NSString) }) { _ = $0.decodeObject() }
        }
        var decoded: [Any?] = []
        let diagnostics = try archiveRoundTrip(
            { coder in
                coder.encode("first" as NSString)
                coder.encode(NSNumber(value: 2))
                coder.encode(nil as Any?)
                coder.encode(["a", "b"] as NSArray)
            },
            decode: { coder in decoded = (0..<5).map { _ in coder.decodeObject() } })
        #expect(decoded[0] as? String == "first")
        #expect(decoded[1] as? Int == 2)
        #expect(decoded[2] == nil)
        #expect(decoded[3] as? [String] == ["a", "b"])
        #expect(decoded[4] == nil, "past the last unkeyed value")
        #expect(diagnostics.archived.isEmpty)
    }
}
