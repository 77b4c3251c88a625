import Foundation
import StateJournal
import StateRestoration
import Testing

/// A controller whose state is only `@Preserved` properties.
final class DraftController: RestorableController {
    var restorationIdentifier: String? { "Draft" }
    @Preserved("draft") var draft = ""
    @Preserved("recipients") var recipients: [String] = []
    @Preserved("attachment") var attachment: URL? = nil
    @Preserved("sentAt") var sentAt: Date? = nil
}

/// A controller that writes its own keys and includes its `@Preserved` properties with the helper.
final class MixedController: RestorableController {
    var restorationIdentifier: String? { "Mixed" }
    @Preserved("page") var page = 1
    var scroll = 0.0

    func encodeRestorableState(with coder: RestorationCoder) throws {
        try encodePreservedProperties(with: coder)
        coder.encode(scroll, forKey: "scroll")
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        try decodePreservedProperties(with: coder)
        scroll = coder.decodeDouble(forKey: "scroll")
    }
}

/// Two properties with one key.
final class ClashingController: RestorableController {
    var restorationIdentifier: String? { "Clash" }
    @Preserved("name") var first = ""
    @Preserved("name") var second = ""
}

/// `@Preserved` properties: saved and restored without coding methods, and invalidating their
/// owner when they change.
@Suite struct PreservedPropertyTests {
    @Test func preservedPropertiesAreEncodedAndDecodedWithoutCodingMethods() throws {
        let store = TestStore()
        let sentAt = Date(timeIntervalSinceReferenceDate: 1_000.5)
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let manager = store.manager(journal, delegate: delegate)
            let draft = DraftController()
            draft.draft = "Hello"
            draft.recipients = ["ada@example.com"]
            draft.sentAt = sentAt
            try manager.preserveState(roots: [draft], mode: .incremental)
            #expect(
                try decodedEntries(journal)[RestorationPath("Draft")]?.values == [
                    "draft": .string("Hello"), "recipients": .array([.string("ada@example.com")]),
                    "attachment": .null, "sentAt": .date(sentAt),
                ])
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let restored = DraftController()
        restored.attachment = URL(string: "file:///tmp/stale")
        let report = try manager.restoreState(roots: [restored])
        #expect(report.diagnostics.isEmpty)
        #expect(restored.draft == "Hello")
        #expect(restored.recipients == ["ada@example.com"])
        #expect(restored.attachment == nil)
        #expect(restored.sentAt == sentAt)
    }

    @Test func changingAPreservedPropertyInvalidatesItsOwner() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let draft = DraftController()
        let root = Node("Main", children: [Node("Other")])
        try manager.preserveState(roots: [root, draft], mode: .incremental)

        draft.draft = "Changed"
        let report = try manager.preserveState(roots: [root, draft], mode: .incremental)
        #expect(report.mode == .incremental)
        #expect(report.encodedObjects == 1)
        #expect(report.writtenPaths == [RestorationPath("Draft")])
        #expect(try decodedEntries(journal)[RestorationPath("Draft")]?.values["draft"] == .string("Changed"))
    }

    @Test func restoringAPreservedPropertyDoesNotInvalidateItsOwner() throws {
        let store = TestStore()
        do {
            let journal = try store.open()
            let delegate = TestDelegate()
            let draft = DraftController()
            draft.draft = "Saved"
            try store.manager(journal, delegate: delegate).preserveState(roots: [draft], mode: .incremental)
            try journal.close()
        }
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let restored = DraftController()
        try manager.restoreState(roots: [restored])
        try manager.preserveState(roots: [restored], mode: .incremental)
        let report = try manager.preserveState(roots: [restored], mode: .incremental)
        #expect(restored.draft == "Saved")
        #expect(report.outcome == .unchanged)
        #expect(report.encodedObjects == 0)
    }

    @Test func aKeyMissingFromTheSavedStateLeavesThePropertyAtItsInitialValue() throws {
        var decoded: MixedController?
        _ = try CoderTests().roundTrip(
            { $0.encode(2.5, forKey: "scroll") },
            decode: { coder in
                let mixed = MixedController()
                try mixed.decodeRestorableState(with: coder)
                decoded = mixed
            })
        #expect(decoded?.page == 1)
        #expect(decoded?.scroll == 2.5)
    }

    @Test func anExplicitImplementationIncludesPreservedPropertiesThroughTheHelper() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let mixed = MixedController()
        mixed.page = 4
        mixed.scroll = 80
        try manager.preserveState(roots: [mixed], mode: .incremental)
        #expect(
            try decodedEntries(journal)[RestorationPath("Mixed")]?.values == [
                "page": .int(4), "scroll": .double(80),
            ])
    }

    @Test func aPreservedValueOfTheWrongTypeThrowsATypedErrorNamingPathAndKey() throws {
        var caught: RestorationError?
        _ = try CoderTests().roundTrip(
            { $0.encode("three", forKey: "page") },
            decode: { coder in
                do { try MixedController().decodePreservedProperties(with: coder) } catch let error as RestorationError
                {
                    caught = error
                }
            })
        #expect(caught?.code == .typeMismatch)
        #expect(caught?.key == "page")
        #expect(caught?.path == RestorationPath("Root"))
    }

    @Test func twoPreservedPropertiesWithOneKeyFailToEncodeWithADuplicateKeyError() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let report = try manager.preserveState(roots: [ClashingController()], mode: .incremental)
        guard case .encodingFailed(let path, let message)? = report.problems.first else {
            Issue.record("expected an encoding failure, got \(report.problems)")
            return
        }
        #expect(path == RestorationPath("Clash"))
        #expect(message.contains("duplicateKey"))
        #expect(message.contains("\"name\""))
    }

    @Test func aSubclassWithItsOwnPreservedPropertyKeepsBoth() throws {
        let pane = FindPane()
        pane.zoom = 1.5
        pane.query = "needle"
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        try manager.preserveState(roots: [pane], mode: .incremental)
        pane.query = "haystack"
        let report = try manager.preserveState(roots: [pane], mode: .incremental)
        #expect(report.writtenPaths == [RestorationPath("Find")])
        #expect(
            try decodedEntries(journal)[RestorationPath("Find")]?.values == [
                "zoom": .double(1.5), "query": .string("haystack"),
            ])
    }
}
