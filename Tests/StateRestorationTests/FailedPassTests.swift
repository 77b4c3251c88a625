import Foundation
import StateJournal
import StateRestoration
import Testing

@Suite struct FailedPassTests {
    @Test func aPassWhoseEpochIsAbortedLeavesThePreviousEpochExactly() throws {
        let store = TestStore()
        let fileSystem = FailingFileSystem()
        let journal = try Journal.open(
            path: store.url.path, options: JournalOptions(durability: .none), fileSystem: fileSystem)
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        let nodes = (0..<5).map { Node("N\($0)", value: $0) }
        try manager.preserveState(roots: nodes)
        let before = try journal.state().entries
        for node in nodes {
            node.value += 10
            manager.invalidateRestorableState(for: node)
        }
        fileSystem.failsWrites = true
        #expect(throws: JournalError.self) { try manager.preserveState(roots: nodes) }
        fileSystem.failsWrites = false
        #expect(try journal.state().entries == before)
        #expect(try journal.history().count == 1)
        let retry = try manager.preserveState(roots: nodes)
        #expect(retry.mode == .full)
        #expect(retry.writtenPaths.count == 5)
        try journal.close()

        let reopened = try store.open()
        let fresh = (0..<5).map { Node("N\($0)") }
        let restorer = store.manager(reopened, delegate: delegate)
        try restorer.restoreState(roots: fresh)
        #expect(fresh.map(\.value) == [10, 11, 12, 13, 14])
    }

    @Test func anOversizedStateIsReportedAndThePassGoesOn() throws {
        let store = TestStore()
        let journal = try store.open()
        let delegate = TestDelegate()
        let manager = store.manager(journal, delegate: delegate)
        var huge = false
        let bag = Bag("Big") { coder in
            coder.encode(Data(count: huge ? JournalLimits.maximumStateSize + 1 : 1), forKey: "blob")
        }
        let other = Node("Other", value: 1)
        try manager.preserveState(roots: [bag, other])
        huge = true
        other.value = 2
        let report = try manager.preserveState(roots: [bag, other], mode: .full)
        #expect(report.problems.count == 1)
        #expect(report.writtenPaths == [RestorationPath("Other")])
        #expect(try decodedEntries(journal)[RestorationPath("Big")]?.values["blob"] == .data(Data(count: 1)))
    }
}
