import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Readers that open a store beside a writer that commits and compacts in a loop see one
/// consistent generation every time: epochs without gaps, states that match, no false damage.
@Suite(.timeLimit(.minutes(10)))
struct ReadersBesideCompactionTests {
    static var seconds: Double {
        Double(ProcessInfo.processInfo.environment["STATEJOURNAL_READER_SECONDS"] ?? "") ?? 3
    }

    /// A writer thread that commits and compacts until told to stop.
    final class Writer: @unchecked Sendable {
        // @unchecked Sendable: `stop` and `failure` are read and written with `lock` held.
        private let lock = NSLock()
        private var stop = false
        private var error: (any Error)?
        private var thread: Thread?

        init(store: String) throws {
            let journal = try Journal.open(
                path: store, options: testOptions(durability: .none, segmentSizeLimit: 8 << 10),
                fileSystem: PosixFileSystem())
            let thread = Thread { [self] in
                var epoch = 0
                while !isStopped {
                    epoch += 1
                    do {
                        let bytes = Array(repeating: UInt8(truncatingIfNeeded: epoch), count: 300)
                        try journal.commit([.put(RestorationPath(["Main", "Item-\(epoch % 50)"]), bytes)])
                        if epoch % 25 == 0 { _ = try journal.compact() }
                    } catch {
                        lock.lock()
                        self.error = error
                        stop = true
                        lock.unlock()
                    }
                }
                try? journal.close()
            }
            self.thread = thread
            thread.start()
        }

        var isStopped: Bool {
            lock.lock()
            defer { lock.unlock() }
            return stop
        }

        var failure: (any Error)? {
            lock.lock()
            defer { lock.unlock() }
            return error
        }

        func finish() {
            lock.lock()
            stop = true
            lock.unlock()
            while thread?.isFinished == false { Thread.sleep(forTimeInterval: 0.01) }
        }
    }

    @Test func historyAndLogSeeNoGapsWhileTheWriterCompacts() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let writer = try Writer(store: store)
        defer { writer.finish() }
        let deadline = Date(timeIntervalSinceNow: Self.seconds)
        var reads = 0
        while Date() < deadline {
            let history = try JournalReader(at: URL(fileURLWithPath: store)).history()
            for (previous, next) in zip(history, history.dropFirst()) where next.epoch != previous.epoch + 1 {
                Issue.record("read \(reads): epoch \(next.epoch) follows \(previous.epoch)")
                return
            }
            reads += 1
        }
        #expect(reads > 3)
        #expect(writer.failure == nil)
    }

    @Test func verifyFindsNothingWrongWhileTheWriterCompacts() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let writer = try Writer(store: store)
        defer { writer.finish() }
        let deadline = Date(timeIntervalSinceNow: Self.seconds)
        var runs = 0
        while Date() < deadline {
            let result = StoreInspector.verify(URL(fileURLWithPath: store))
            if result.status != .clean || result.damage != nil || !result.unnamedFiles.isEmpty {
                Issue.record("verify \(runs): \(result)")
                return
            }
            runs += 1
        }
        #expect(runs > 3)
    }

    @Test func theHistoryOfAPathHasNoGapsWhileTheWriterCompacts() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let writer = try Writer(store: store)
        defer { writer.finish() }
        let deadline = Date(timeIntervalSinceNow: Self.seconds)
        var reads = 0
        while Date() < deadline {
            let inspector = try StoreInspector(at: URL(fileURLWithPath: store))
            let log = try inspector.log()
            let history = try inspector.history(of: RestorationPath(["Main", "Item-7"]))
            // Item-7 changes every 50 epochs: after the first row (which may be the checkpoint the
            // history starts from), consecutive changes are 50 apart.
            let epochs = history.map(\.epoch.epoch).dropFirst()
            for (previous, next) in zip(epochs, epochs.dropFirst()) where next - previous != 50 {
                Issue.record(
                    """
                    read \(reads): Item-7 changed at \(previous) then \(next); log spans \
                    \(log.first?.epoch ?? 0)...\(log.last?.epoch ?? 0)
                    """
                )
                return
            }
            reads += 1
        }
        #expect(reads > 3)
    }

    /// What `show` and `soak --check` read: the state as of an epoch. At every epoch E that a read
    /// lists, each path the writer wrote holds the bytes of the last epoch at or before E that wrote
    /// it (`Item-n` is written by the epochs whose number is n modulo 50).
    @Test func theStateAtEveryListedEpochMatchesTheWritesWhileTheWriterCompacts() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let writer = try Writer(store: store)
        defer { writer.finish() }
        let deadline = Date(timeIntervalSinceNow: Self.seconds)
        var reads = 0
        while Date() < deadline {
            let reader = try JournalReader(at: URL(fileURLWithPath: store))
            let history = try reader.history()
            guard let first = history.first?.epoch, let last = history.last?.epoch else { continue }
            for epoch in [first, (first + last) / 2, last] {
                // Compactions between the two reads may retire a listed epoch (the last too, when the
                // reader is slow); they may never change one.
                let state: JournalState
                do {
                    state = try reader.state(through: epoch)
                } catch let error as JournalError where error.code == .noSuchEpoch {
                    continue
                }
                #expect(state.epoch?.epoch == epoch, "read \(reads)")
                for item in 0..<50 {
                    let path = RestorationPath(["Main", "Item-\(item)"])
                    // The last epoch at or before `epoch` whose number is `item` modulo 50.
                    let lastWrite = Int(epoch) - ((Int(epoch) - item) % 50 + 50) % 50
                    let expected =
                        lastWrite >= 1 ? Array(repeating: UInt8(truncatingIfNeeded: lastWrite), count: 300) : nil
                    if state[path] != expected {
                        Issue.record("read \(reads): \(path) at epoch \(epoch) is not what epoch \(lastWrite) wrote")
                        return
                    }
                }
            }
            reads += 1
        }
        #expect(reads > 3)
        #expect(writer.failure == nil)
    }
}
