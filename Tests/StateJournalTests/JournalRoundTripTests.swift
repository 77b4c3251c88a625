import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@Suite struct JournalRoundTripTests {
    @Test func committedEpochsReplayAfterReopening() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        do {
            let journal = try Journal.open(at: URL(fileURLWithPath: store))
            try journal.commit(
                [
                    .put(RestorationPath("Main"), Array("hello".utf8)),
                    .put(RestorationPath("Main", "Inbox"), [1, 2, 3]),
                ], metadata: ["v": "1"])
            try journal.commit(
                [.put(RestorationPath("Main"), Array("hello, world".utf8)), .remove(RestorationPath("Main", "Inbox"))],
                metadata: ["v": "1"])
            try journal.close()
        }
        let journal = try Journal.open(at: URL(fileURLWithPath: store))
        #expect(journal.recoveredState.epoch?.epoch == 2)
        #expect(journal.recoveredState.entries == [RestorationPath("Main"): Array("hello, world".utf8)])
        #expect(try journal.state(through: 1).entries.count == 2)
        #expect(try journal.history().map(\.epoch) == [1, 2])
        #expect(try journal.history().map(\.metadata) == [["v": "1"], ["v": "1"]])
        try journal.close()
    }
}
