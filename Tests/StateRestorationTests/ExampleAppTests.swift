import Foundation
import StateJournal
import StateRestoration
import StateRestorationExample
import Testing

@Suite struct ExampleAppTests {
    @Test func theSimulationIsDeterministicForASeed() throws {
        let store = TestStore()
        let journal = try store.open()
        let first = MailApp(journal: journal).simulate(steps: 50, seed: 7)
        try journal.close()
        let other = TestStore()
        let second = MailApp(journal: try other.open()).simulate(steps: 50, seed: 7)
        #expect(first == second)
        #expect(Set(first).count > 10)
    }

    @Test func theAppComesBackExactlyAfterEverySavedStep() throws {
        let store = TestStore()
        var snapshots: [UInt64: MailSnapshot] = [:]
        do {
            let journal = try store.open()
            let app = MailApp(journal: journal)
            for step in 0..<40 {
                app.simulate(steps: 3, seed: UInt64(step))
                let report = try app.save()
                #expect(report.problems.isEmpty)
                if let epoch = report.epoch?.epoch { snapshots[epoch] = app.snapshot }
            }
            try journal.close()
        }
        #expect(snapshots.count > 10)
        for (epoch, snapshot) in snapshots.sorted(by: { $0.key < $1.key }).suffix(6) {
            let journal = try store.open()
            let app = MailApp(journal: journal)
            let report = try app.launch(asOf: epoch)
            #expect(report.skipped.isEmpty)
            #expect(app.snapshot == snapshot)
            try journal.close()
        }
    }

    @Test func incrementalAndFullPassesSaveTheSameState() throws {
        let incremental = TestStore()
        let full = TestStore()
        let a = MailApp(journal: try incremental.open())
        let b = MailApp(journal: try full.open())
        for step in 0..<30 {
            a.simulate(steps: 2, seed: UInt64(step))
            b.simulate(steps: 2, seed: UInt64(step))
            try a.save(mode: .incremental)
            try b.save(mode: .full)
            #expect(try a.manager.journal.state().entries == b.manager.journal.state().entries)
        }
    }
}
