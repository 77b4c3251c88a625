import Foundation
import StateJournal
import StateRestoration
import Testing

/// One object's restorable state as `Data` and back, outside any journal.
@Suite struct RestorableStateArchiveTests {
    final class SurveyTask: StateRestoring {
        var step = 0
        var answers: [String] = []
        var note: CodedNote?
        var related: (any StateRestoring)?

        func encodeRestorableState(with coder: RestorationCoder) throws {
            coder.encode(step, forKey: "step")
            coder.encode(answers, forKey: "answers")
            coder.encode(note, forKey: "note")
            if let related { coder.encode(related, forKey: "related") }
        }

        func decodeRestorableState(with coder: RestorationCoder) throws {
            step = coder.decodeInteger(forKey: "step")
            answers = coder.decodeObject(forKey: "answers") as? [String] ?? []
            note = coder.decodeObject(of: CodedNote.self, forKey: "note")
        }
    }

    @Test func anObjectsStateArchivesToDataAndRestoresIntoAnotherInstance() throws {
        let task = SurveyTask()
        task.step = 3
        task.answers = ["yes", "no"]
        task.note = CodedNote(title: "Pain level", pinned: true)
        let archive = try RestorableStateArchive(archiving: task)
        #expect(archive.diagnostics.isEmpty)
        let resumed = SurveyTask()
        let diagnostics = try RestorableStateArchive.restore(resumed, from: archive.data)
        #expect(diagnostics.isEmpty)
        #expect(resumed.step == 3)
        #expect(resumed.answers == ["yes", "no"])
        #expect(resumed.note?.title == "Pain level")
    }

    @Test func theArchiveIsOneEntryThatToolsCanRead() throws {
        let task = SurveyTask()
        task.step = 7
        let entry = try RestorableEntry(decoding: Array(try RestorableStateArchive(archiving: task).data))
        #expect(entry.values["step"] == .int(7))
        #expect(entry.typeName.hasSuffix("SurveyTask"))
    }

    @Test func aReferenceToAnotherObjectIsSavedAsNullAndListed() throws {
        let task = SurveyTask()
        task.related = SurveyTask()
        let archive = try RestorableStateArchive(archiving: task)
        #expect(archive.diagnostics.map(\.key) == ["related"])
        #expect(try RestorableEntry(decoding: Array(archive.data)).values["related"] == .null)
    }

    @Test func bytesThatAreNotAnArchiveThrow() {
        #expect(throws: (any Error).self) {
            try RestorableStateArchive.restore(SurveyTask(), from: Data([0xFF, 1, 2]))
        }
    }
}
