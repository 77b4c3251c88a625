import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

/// Every read the public API offers, made over and over beside a real, live writer: a thread that
/// commits small epochs at a few thousand a second under the default options (a sync every second,
/// automatic compaction that rolls the segment after about a megabyte of journal), or syncing every
/// commit into small segments that roll all the time. Each read must succeed and return a
/// consistent prefix of what the writer committed: epochs without gaps from the oldest retained
/// one, reaching at least every epoch committed before the read began, each holding exactly what
/// the writer wrote for it. Nothing here measures time: a slow machine runs fewer reads.
///
/// `STATEJOURNAL_LIVE_READER_SECONDS` sets how long each test reads (4 seconds by default), and
/// `STATEJOURNAL_TEST_VERBOSE` prints how many reads of each kind a test made.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct ReadersBesideALiveWriterStressTests {
    static var seconds: Double {
        Double(ProcessInfo.processInfo.environment["STATEJOURNAL_LIVE_READER_SECONDS"] ?? "") ?? 4
    }

    /// How the writer writes: its options, how many paths it keeps and how fast it commits.
    struct Setup: CustomTestStringConvertible, Sendable {
        var name: String
        var options: JournalOptions
        var items: Int
        var commitsPerSecond: Double
        var testDescription: String { name }

        /// The defaults, and a state of 3,000 paths of 200 to 600 incompressible bytes (about
        /// 1.2 MB): the checkpoint is larger than a reader's 1 MiB window, so the live segment
        /// grows past the window before each automatic compaction rolls it.
        static let defaultOptions = Setup(
            name: "default options", options: JournalOptions(), items: 3000, commitsPerSecond: 3000)

        /// A sync per commit, segments of 32 KiB and a compaction once 256 KiB of journal piled up:
        /// rolls and compactions all the time.
        static let everyCommitInSmallSegments = Setup(
            name: "every commit synced into 32 KiB segments",
            options: JournalOptions(
                durability: .everyCommit, segmentSizeLimit: 32 << 10,
                compaction: CompactionPolicy(minimumJournalBytes: 256 << 10)),
            items: 300, commitsPerSecond: 3000)
    }

    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The bytes epoch `epoch` writes to item `item`: 200 to 599 bytes that do not compress.
    static func value(epoch: UInt64, item: Int) -> [UInt8] {
        var seed = mix(epoch &* 65_537 &+ UInt64(item))
        let count = 200 + Int(seed % 400)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            seed = mix(seed)
            withUnsafeBytes(of: seed) { bytes.append(contentsOf: $0) }
        }
        return Array(bytes.prefix(count))
    }

    /// What the writer committed, epoch by epoch, recorded before each commit so that a reader
    /// never sees an epoch the ledger does not know; and how far the commits that returned reach.
    final class Ledger: @unchecked Sendable {
        // @unchecked Sendable: every mutable field is read and written with `lock` held.
        struct Planned {
            var put: Int
            var removed: Int?
        }

        static let snapshotInterval: UInt64 = 256
        let items: Int
        let paths: [RestorationPath]
        private let lock = NSLock()
        private var planned: [Planned] = []
        /// `snapshots[k]`: for each item, the epoch whose value it holds (0 when absent) after
        /// epoch `k * snapshotInterval`.
        private var snapshots: [[UInt64]]
        private var model: [UInt64]
        private var committed: UInt64 = 0

        init(items: Int) {
            self.items = items
            paths = (0..<items).map { RestorationPath("Main", "Item-\($0)") }
            model = Array(repeating: 0, count: items)
            snapshots = [model]
        }

        /// Records what epoch `epoch` (the next one) writes and returns its changes. Epoch 1 writes
        /// every item; each later one writes one, and every seventh also removes another that is
        /// present (`history(of:)` lists no removal of an absent path: it changed nothing).
        func plan(_ epoch: UInt64) -> [JournalChange] {
            lock.lock()
            defer { lock.unlock() }
            precondition(epoch == UInt64(planned.count) + 1)
            if epoch == 1 {
                planned.append(Planned(put: -1, removed: nil))
                for item in 0..<items { model[item] = 1 }
            } else {
                let put = Int(ReadersBesideALiveWriterStressTests.mix(epoch) % UInt64(items))
                var removed: Int?
                if epoch % 7 == 0 {
                    let other = Int(ReadersBesideALiveWriterStressTests.mix(epoch ^ 0x5555) % UInt64(items))
                    if other != put && model[other] != 0 { removed = other }
                }
                planned.append(Planned(put: put, removed: removed))
                model[put] = epoch
                if let removed { model[removed] = 0 }
            }
            if epoch % Self.snapshotInterval == 0 { snapshots.append(model) }
            return changesLocked(of: epoch)
        }

        func didCommit(_ epoch: UInt64) {
            lock.lock()
            committed = max(committed, epoch)
            lock.unlock()
        }

        /// The newest epoch whose commit has returned.
        var committedEpoch: UInt64 {
            lock.lock()
            defer { lock.unlock() }
            return committed
        }

        /// The newest epoch the writer has planned: nothing on disk can be newer.
        var plannedEpoch: UInt64 {
            lock.lock()
            defer { lock.unlock() }
            return UInt64(planned.count)
        }

        /// The changes epoch `epoch` committed.
        func changes(of epoch: UInt64) -> Set<JournalChange>? {
            lock.lock()
            defer { lock.unlock() }
            guard epoch >= 1, epoch <= UInt64(planned.count) else { return nil }
            return Set(changesLocked(of: epoch))
        }

        private func changesLocked(of epoch: UInt64) -> [JournalChange] {
            if epoch == 1 {
                return (0..<items).map {
                    .put(paths[$0], ReadersBesideALiveWriterStressTests.value(epoch: 1, item: $0))
                }
            }
            let entry = planned[Int(epoch - 1)]
            var changes: [JournalChange] = [
                .put(paths[entry.put], ReadersBesideALiveWriterStressTests.value(epoch: epoch, item: entry.put))
            ]
            if let removed = entry.removed { changes.append(.remove(paths[removed])) }
            return changes
        }

        /// For each item, the epoch whose value it holds as of `epoch` (0 when absent); nil for an
        /// epoch the writer never planned.
        func writers(at epoch: UInt64) -> [UInt64]? {
            lock.lock()
            defer { lock.unlock() }
            guard epoch <= UInt64(planned.count) else { return nil }
            let base = epoch / Self.snapshotInterval
            var state = snapshots[Int(base)]
            var next = base * Self.snapshotInterval + 1
            while next <= epoch {
                let entry = planned[Int(next - 1)]
                if next == 1 {
                    for item in 0..<items { state[item] = 1 }
                } else {
                    state[entry.put] = next
                    if let removed = entry.removed { state[removed] = 0 }
                }
                next += 1
            }
            return state
        }

        /// What is wrong with `entries` as the state as of `epoch`, restricted to `items` when
        /// given; nil when it is what the writer committed.
        func mismatch(_ entries: [RestorationPath: [UInt8]], at epoch: UInt64, items only: [Int]? = nil) -> String? {
            guard let writers = writers(at: epoch) else { return "epoch \(epoch) was never committed" }
            let checked = only ?? Array(0..<items)
            var problems: [String] = []
            var expectedCount = 0
            for item in checked {
                let writer = writers[item]
                let expected = writer == 0 ? nil : ReadersBesideALiveWriterStressTests.value(epoch: writer, item: item)
                if expected != nil { expectedCount += 1 }
                if entries[paths[item]] != expected {
                    problems.append(
                        "\(paths[item]) holds \(entries[paths[item]].map { "\($0.count) bytes" } ?? "nothing"), "
                            + "expected \(writer == 0 ? "nothing" : "epoch \(writer)'s \(expected!.count) bytes")")
                }
            }
            if entries.count != expectedCount {
                problems.append("\(entries.count) paths where \(expectedCount) were expected")
            }
            if problems.isEmpty { return nil }
            return "the state as of epoch \(epoch): " + problems.prefix(3).joined(separator: "; ")
                + (problems.count > 3 ? " and \(problems.count - 3) more" : "")
        }
    }

    /// Counts every read by kind, and keeps what went wrong, so that the test's own thread reports it.
    final class Findings: @unchecked Sendable {
        // @unchecked Sendable: every mutable field is read and written with `lock` held.
        private let lock = NSLock()
        private var reads: [String: Int] = [:]
        private var tolerated: [String: Int] = [:]
        private var failures: [String: (count: Int, first: String)] = [:]

        /// Runs one read, counting it, and records what it threw as a failure of `label`.
        @discardableResult
        func read<T>(_ label: String, _ body: () throws -> T) -> T? {
            lock.lock()
            reads[label, default: 0] += 1
            lock.unlock()
            do {
                return try body()
            } catch {
                fail(label, "threw \(type(of: error)): \(error)")
                return nil
            }
        }

        func fail(_ label: String, _ message: String) {
            lock.lock()
            defer { lock.unlock() }
            let previous = failures[label]
            failures[label] = ((previous?.count ?? 0) + 1, previous?.first ?? message)
        }

        /// Counts an outcome that a live writer makes legitimate (an epoch compacted away between
        /// two reads, a file deleted before the test copied it).
        func tolerate(_ label: String) {
            lock.lock()
            tolerated[label, default: 0] += 1
            lock.unlock()
        }

        var failureReports: [String] {
            lock.lock()
            defer { lock.unlock() }
            return failures.keys.sorted().map { label in
                let failure = failures[label]!
                return "\(label): failed \(failure.count) of \(reads[label] ?? 0) times; first: \(failure.first)"
            }
        }

        var summary: String {
            lock.lock()
            defer { lock.unlock() }
            let total = reads.values.reduce(0, +)
            let kinds = reads.keys.sorted().map { "\($0) \(reads[$0]!)" }.joined(separator: ", ")
            let allowed = tolerated.keys.sorted().map { "\($0) \(tolerated[$0]!)" }.joined(separator: ", ")
            return "\(total) reads (\(kinds)); tolerated: \(allowed.isEmpty ? "none" : allowed)"
        }
    }

    /// The writer: a thread that commits the ledger's epochs, paced to the setup's rate, until
    /// told to stop.
    final class LiveWriter: @unchecked Sendable {
        // @unchecked Sendable: `stopping` is read and written with `lock` held; `journal` is used by
        // the writer thread until `done` is signalled.
        private let lock = NSLock()
        private var stopping = false
        private let done = DispatchSemaphore(value: 0)
        private let journal: Journal

        init(store: URL, setup: Setup, ledger: Ledger, findings: Findings) throws {
            let journal = try Journal.open(at: store, options: setup.options)
            self.journal = journal
            let thread = Thread { [self] in
                defer { done.signal() }
                let start = Date()
                var epoch: UInt64 = 0
                while !isStopping {
                    epoch += 1
                    let changes = ledger.plan(epoch)
                    do {
                        let info = try journal.commit(changes, metadata: ["e": "\(epoch)"])
                        if info.epoch != epoch {
                            findings.fail("writer", "commit of planned epoch \(epoch) returned epoch \(info.epoch)")
                            return
                        }
                        ledger.didCommit(epoch)
                    } catch {
                        findings.fail("writer", "commit of epoch \(epoch) threw \(error)")
                        return
                    }
                    let ahead = Double(epoch) / setup.commitsPerSecond - Date().timeIntervalSince(start)
                    if ahead > 0.002 { Thread.sleep(forTimeInterval: ahead) }
                }
            }
            thread.start()
        }

        private var isStopping: Bool {
            lock.lock()
            defer { lock.unlock() }
            return stopping
        }

        /// Stops the thread and closes the journal.
        func stop() throws {
            lock.lock()
            stopping = true
            lock.unlock()
            done.wait()
            try journal.close()
        }
    }

    /// Runs `body` on a new thread; the returned closure waits for it to end.
    static func onThread(_ body: @escaping @Sendable () -> Void) -> () -> Void {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return { done.wait() }
    }

    /// Runs `passes` on reader threads beside a live writer for `seconds` (and at least three
    /// passes each), then checks the store the writer closed and reports every failure.
    func runBesideALiveWriter(
        _ setup: Setup, _ passes: [@Sendable (_ pass: Int, _ store: URL, _ scratch: URL) -> Void],
        ledger: Ledger, findings: Findings, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let directory = TemporaryDirectory(prefix: "live-readers")
        let store = directory.url.appendingPathComponent("store")
        let writer = try LiveWriter(store: store, setup: setup, ledger: ledger, findings: findings)
        var stopped = false
        defer { if !stopped { try? writer.stop() } }
        // Let the first epoch (every item) land, so that every pass reads a store.
        while ledger.committedEpoch < 2 && findings.failureReports.isEmpty { Thread.sleep(forTimeInterval: 0.01) }
        let deadline = Date(timeIntervalSinceNow: Self.seconds)
        let waits = passes.enumerated().map { index, pass in
            Self.onThread {
                let scratch = directory.url.appendingPathComponent("scratch-\(index)")
                try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                var number = 0
                while Date() < deadline || number < 3 {
                    pass(number, store, scratch)
                    number += 1
                }
            }
        }
        for wait in waits { wait() }
        try writer.stop()
        stopped = true
        let last = ledger.committedEpoch
        // The store the writer closed holds every epoch it committed, and is clean.
        findings.read("after close: state()") {
            let state = try JournalReader(at: store, recovery: .strict).state()
            if state.epoch?.epoch != last {
                findings.fail("after close: state()", "ends at \(state.epoch?.epoch ?? 0), not \(last)")
            }
            if let problem = ledger.mismatch(state.entries, at: last) {
                findings.fail("after close: state()", problem)
            }
        }
        let verification = StoreInspector.verify(store)
        if verification.status != .clean || !verification.unnamedFiles.isEmpty {
            findings.fail("after close: verify", "\(verification)")
        }
        noteSweep("\(setup.name): \(last) epochs committed; \(findings.summary)")
        for report in findings.failureReports {
            Issue.record("\(setup.name): \(report)", sourceLocation: sourceLocation)
        }
        #expect(last > 1, "the writer committed nothing", sourceLocation: sourceLocation)
    }

    // MARK: - JournalReader and StoreFileSet

    /// Checks a history (or a log): epochs one apart, from at least the oldest a previous read of
    /// this thread saw, to at least `before` and at most what was planned, each with the metadata
    /// and entry count its commit wrote. Returns the first and last epochs.
    static func checkHistory(
        _ history: [EpochInfo], _ label: String, before: UInt64, oldestSeen: inout UInt64, ledger: Ledger,
        findings: Findings
    ) -> (first: UInt64, last: UInt64)? {
        guard let first = history.first?.epoch, let last = history.last?.epoch else {
            findings.fail(label, "no epochs, though epoch \(before) was committed before the read")
            return nil
        }
        for (previous, next) in zip(history, history.dropFirst()) where next.epoch != previous.epoch + 1 {
            findings.fail(label, "epoch \(next.epoch) follows \(previous.epoch) (\(first) through \(last))")
            return nil
        }
        if last < before {
            findings.fail(label, "ends at epoch \(last), though epoch \(before) was committed before the read")
        }
        if last > ledger.plannedEpoch { findings.fail(label, "lists epoch \(last), which was never committed") }
        if first < oldestSeen {
            findings.fail(label, "starts at epoch \(first), though an earlier read started at \(oldestSeen)")
        }
        oldestSeen = max(oldestSeen, first)
        for (index, info) in history.enumerated() {
            if info.metadata["e"] != "\(info.epoch)" {
                findings.fail(label, "epoch \(info.epoch) has the metadata \(info.metadata)")
                break
            }
            let count = ledger.changes(of: info.epoch)?.count ?? -1
            if index > 0 && info.entryCount != count {
                findings.fail(label, "epoch \(info.epoch) lists \(info.entryCount) entries, not \(count)")
                break
            }
        }
        return (first, last)
    }

    /// One pass of `JournalReader`'s reads: `fileSet()`, `history()`, `state()`, the state at
    /// earlier epochs, `forEachEpoch`, and every third pass a copy of the file set assembled
    /// into a store of its own, read and opened for writing.
    static func journalReaderPass(
        recovery: RecoveryMode, ledger: Ledger, findings: Findings, oldestSeen: Locked<UInt64>
    ) -> @Sendable (Int, URL, URL) -> Void {
        { pass, store, scratch in
            let before = ledger.committedEpoch
            guard let reader = findings.read("JournalReader(at:)", { try JournalReader(at: store, recovery: recovery) })
            else { return }
            if let set = findings.read("fileSet()", { try reader.fileSet() }) {
                checkFileSet(set, before: before, ledger: ledger, findings: findings)
                if pass % 3 == 0 || set.files.last?.isSealed == true {
                    assembleACopy(
                        of: set, from: store, into: scratch.appendingPathComponent("copy-\(pass)"), ledger: ledger,
                        findings: findings)
                }
            }
            let before2 = ledger.committedEpoch
            guard
                let history = findings.read("history()", { try reader.history() }),
                let range = oldestSeen.withLock({ oldest in
                    checkHistory(
                        history, "history()", before: before2, oldestSeen: &oldest, ledger: ledger, findings: findings)
                })
            else { return }
            let before3 = ledger.committedEpoch
            if let state = findings.read("state()", { try reader.state() }) {
                checkState(state, "state()", before: before3, ledger: ledger, findings: findings)
            }
            // Earlier epochs: the oldest listed, one in the middle, one picked by the pass number.
            let span = range.last - range.first + 1
            for epoch in [range.first, range.first + span / 2, range.first + UInt64(pass * 7919) % span] {
                let label = "state(through:)"
                do {
                    let state = try reader.state(through: epoch)
                    findings.read(label) {}
                    if state.epoch?.epoch != epoch {
                        findings.fail(label, "asked for epoch \(epoch), got \(state.epoch?.epoch ?? 0)")
                    }
                    checkState(state, label, before: 0, ledger: ledger, findings: findings)
                } catch let error as JournalError where error.code == .noSuchEpoch {
                    // A compaction between the two reads dropped the epoch.
                    findings.tolerate("state(through:) of an epoch compacted away since")
                } catch {
                    findings.read(label) { throw error }
                }
            }
            if pass % 2 == 0 {
                let before4 = ledger.committedEpoch
                findings.read("forEachEpoch") {
                    var previous: UInt64?
                    var failed = false
                    try reader.forEachEpoch { info, changes in
                        if let previous, info.epoch != previous + 1 {
                            findings.fail("forEachEpoch", "epoch \(info.epoch) follows \(previous)")
                            failed = true
                        } else if previous != nil, Set(changes) != ledger.changes(of: info.epoch) {
                            findings.fail(
                                "forEachEpoch", "epoch \(info.epoch) lists changes that are not the ones committed")
                            failed = true
                        }
                        previous = info.epoch
                        return !failed
                    }
                    if !failed, (previous ?? 0) < before4 {
                        findings.fail(
                            "forEachEpoch", "ends at \(previous ?? 0), though \(before4) was committed before")
                    }
                }
            }
        }
    }

    static func checkState(_ state: JournalState, _ label: String, before: UInt64, ledger: Ledger, findings: Findings) {
        if let damage = state.damage { findings.fail(label, "reports damage: \(damage)") }
        if state.unsyncedTail != nil { findings.tolerate("\(label) with an unsynced tail") }
        guard let epoch = state.epoch?.epoch else {
            findings.fail(label, "holds no epoch")
            return
        }
        if epoch < before {
            findings.fail(label, "is as of epoch \(epoch), though epoch \(before) was committed before the read")
        }
        if let problem = ledger.mismatch(state.entries, at: epoch) { findings.fail(label, problem) }
    }

    static func checkFileSet(_ set: StoreFileSet, before: UInt64, ledger: Ledger, findings: Findings) {
        let label = "fileSet()"
        let last = set.lastEpoch?.epoch ?? 0
        if last < before {
            findings.fail(label, "ends at epoch \(last), though epoch \(before) was committed before the read")
        }
        if last > ledger.plannedEpoch { findings.fail(label, "ends at epoch \(last), which was never committed") }
        // Without metadata when nothing was committed after the newest checkpoint.
        if set.lastEpoch.map({ !$0.metadata.isEmpty && $0.metadata["e"] != "\($0.epoch)" }) == true {
            findings.fail(label, "its last epoch has the metadata \(set.lastEpoch!.metadata)")
        }
        let segments = set.files.filter { $0.kind == .segment }
        for (earlier, later) in zip(segments, segments.dropFirst()) where earlier.lastEpoch != later.baseEpoch {
            findings.fail(
                label, "\(later.name) starts at \(later.baseEpoch) after \(earlier.name) ended at \(earlier.lastEpoch)")
        }
        if set.files.last?.kind != .segment || segments.dropLast().contains(where: { !$0.isSealed }) {
            findings.fail(label, "the segments but the last are not all sealed: \(set.files)")
        }
        // Read during a roll: the new segment holds no epoch yet, and the set ends at the sealed one.
        if set.files.last?.isSealed == true { findings.tolerate("fileSet() ending at a sealed segment") }
        if (segments.last?.lastEpoch ?? 0) != last {
            findings.fail(label, "the live segment ends at \(segments.last?.lastEpoch ?? 0), the set at \(last)")
        }
    }

    /// Copies the bytes `set` names into `target`, assembles a store there, and checks that it
    /// reaches the set's last epoch, holds its state, verifies clean and opens for writing. A file
    /// compaction deleted before the copy reached it is no failure: the set was superseded.
    static func assembleACopy(
        of set: StoreFileSet, from store: URL, into target: URL, ledger: Ledger, findings: Findings
    ) {
        defer { try? FileManager.default.removeItem(at: target) }
        do {
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            for file in set.files {
                guard let handle = FileHandle(forReadingAtPath: store.appendingPathComponent(file.name).path) else {
                    findings.tolerate("a file of the set deleted before the copy")
                    return
                }
                defer { try? handle.close() }
                let bytes = try handle.read(upToCount: Int(file.length)) ?? Data()
                if bytes.count != Int(file.length) {
                    findings.fail("copy of the file set", "\(file.name) holds \(bytes.count) bytes, not \(file.length)")
                    return
                }
                try bytes.write(to: target.appendingPathComponent(file.name))
            }
        } catch {
            findings.fail("copy of the file set", "threw \(error)")
            return
        }
        guard let reached = findings.read("assembleStore(in:)", { try set.assembleStore(in: target) }) else { return }
        if reached?.epoch != set.lastEpoch?.epoch {
            findings.fail("assembleStore(in:)", "reached \(reached?.epoch ?? 0), not \(set.lastEpoch?.epoch ?? 0)")
        }
        if let state = findings.read(
            "the assembled copy: state()", { try JournalReader(at: target, recovery: .strict).state() })
        {
            checkState(
                state, "the assembled copy: state()", before: set.lastEpoch?.epoch ?? 0, ledger: ledger,
                findings: findings)
        }
        let verification = StoreInspector.verify(target)
        findings.read("the assembled copy: verify") {}
        if verification.status != .clean || !verification.unnamedFiles.isEmpty {
            findings.fail("the assembled copy: verify", "\(verification)")
        }
        findings.read("the assembled copy: Journal.open") {
            let journal = try Journal.open(
                at: target, options: JournalOptions(durability: .none, compaction: .manual))
            defer { try? journal.close() }
            if let damage = journal.recoveryReport.damage {
                findings.fail("the assembled copy: Journal.open", "found damage: \(damage)")
            }
            if journal.recoveredState.epoch?.epoch != set.lastEpoch?.epoch {
                findings.fail(
                    "the assembled copy: Journal.open",
                    "recovered epoch \(journal.recoveredState.epoch?.epoch ?? 0), not \(set.lastEpoch?.epoch ?? 0)")
            }
        }
    }

    // MARK: - StoreInspector

    /// One pass of `StoreInspector`'s reads: `log()`, `history(of:)`, `state(through:under:)`,
    /// `difference(from:to:)`, `files()`, `epoch(at:)`, `verify`, and every third pass `rewind`.
    static func inspectorPass(
        recovery: RecoveryMode, ledger: Ledger, findings: Findings, oldestSeen: Locked<UInt64>
    ) -> @Sendable (Int, URL, URL) -> Void {
        { pass, store, scratch in
            let before = ledger.committedEpoch
            let verification = StoreInspector.verify(store)
            findings.read("StoreInspector.verify") {}
            if verification.status != .clean || verification.damage != nil || verification.failure != nil {
                findings.fail("StoreInspector.verify", "\(verification)")
            } else if (verification.consistentEpoch ?? 0) < before {
                findings.fail(
                    "StoreInspector.verify",
                    "reaches epoch \(verification.consistentEpoch ?? 0), though \(before) was committed before")
            }
            // Checked by its own test below, which fails now and then.
            if !verification.unnamedFiles.isEmpty { findings.tolerate("StoreInspector.verify listing unnamed files") }
            guard
                let inspector = findings.read(
                    "StoreInspector(at:)", { try StoreInspector(at: store, recovery: recovery) })
            else { return }
            let before2 = ledger.committedEpoch
            guard
                let log = findings.read("log()", { try inspector.log() }),
                let range = oldestSeen.withLock({ oldest in
                    checkHistory(log, "log()", before: before2, oldestSeen: &oldest, ledger: ledger, findings: findings)
                })
            else { return }
            let span = range.last - range.first + 1
            let item = Int(mix(UInt64(pass)) % UInt64(ledger.items))
            let path = ledger.paths[item]
            if let rows = findings.read("history(of:)", { try inspector.history(of: path) }) {
                checkPathHistory(rows, item: item, ledger: ledger, findings: findings)
            }
            let middle = range.first + span / 2
            let under: RestorationPath? = pass % 2 == 0 ? path : nil
            do {
                let state = try inspector.state(through: middle, under: under)
                findings.read("StoreInspector.state(through:under:)") {}
                if state.epoch?.epoch != middle {
                    findings.fail(
                        "StoreInspector.state(through:under:)", "asked for \(middle), got \(state.epoch?.epoch ?? 0)")
                }
                if let problem = ledger.mismatch(state.entries, at: middle, items: under == nil ? nil : [item]) {
                    findings.fail("StoreInspector.state(through:under:)", problem)
                }
            } catch let error as JournalError where error.code == .noSuchEpoch {
                findings.tolerate("StoreInspector.state(through:under:) of an epoch compacted away since")
            } catch {
                findings.read("StoreInspector.state(through:under:)") { throw error }
            }
            let before3 = ledger.committedEpoch
            if let latest = findings.read("StoreInspector.state(through: nil)", { try inspector.state() }) {
                checkState(
                    latest, "StoreInspector.state(through: nil)", before: before3, ledger: ledger, findings: findings)
            }
            let from = range.first + UInt64(pass * 7919) % span
            do {
                let difference = try inspector.difference(from: from, to: range.last)
                findings.read("difference(from:to:)") {}
                if let old = ledger.writers(at: from), let new = ledger.writers(at: range.last) {
                    let expected = expectedDifference(old, new, ledger: ledger)
                    if difference != expected {
                        findings.fail(
                            "difference(from:to:)",
                            "from \(from) to \(range.last): \(difference.added.count) added, \(difference.removed.count) "
                                + "removed, \(difference.changed.count) changed; expected \(expected.added.count), "
                                + "\(expected.removed.count), \(expected.changed.count)")
                    }
                }
            } catch let error as JournalError where error.code == .noSuchEpoch {
                findings.tolerate("difference(from:to:) of an epoch compacted away since")
            } catch {
                findings.read("difference(from:to:)") { throw error }
            }
            findings.read("files()") {
                let files = try inspector.files()
                if files.segments.isEmpty { findings.fail("files()", "lists no segment: \(files)") }
            }
            let before4 = ledger.committedEpoch
            if let epoch = findings.read("epoch(at:)", { try inspector.epoch(at: Date(timeIntervalSinceNow: 60)) }),
                epoch < before4
            {
                findings.fail("epoch(at:)", "the latest epoch is \(epoch), though \(before4) was committed before")
            }
            if pass % 3 == 0 {
                let target = scratch.appendingPathComponent("rewound-\(pass)")
                defer { try? FileManager.default.removeItem(at: target) }
                do {
                    // The new store's only epoch holds the state and metadata as of `middle`.
                    let info = try inspector.rewind(to: middle, into: target)
                    findings.read("rewind(to:into:)") {}
                    let state = try JournalReader(at: target, recovery: .strict).state()
                    if info.metadata["e"] != "\(middle)" || state.epoch?.epoch != info.epoch {
                        findings.fail(
                            "rewind(to:into:)",
                            "asked for \(middle), got \(info), the copy reads \(state.epoch.map { "\($0)" } ?? "nothing")"
                        )
                    }
                    if let problem = ledger.mismatch(state.entries, at: middle) {
                        findings.fail("rewind(to:into:)", problem)
                    }
                } catch let error as JournalError where error.code == .noSuchEpoch {
                    findings.tolerate("rewind(to:into:) to an epoch compacted away since")
                } catch {
                    findings.read("rewind(to:into:)") { throw error }
                }
            }
        }
    }

    /// What became of files `verify` called unnamed, as the next read sees them.
    static func describeUnnamed(_ names: [String], in store: URL) -> String {
        let set = try? JournalReader(at: store).fileSet()
        let named = Set(set?.files.map(\.name) ?? [])
        let details = names.map { name in
            let exists = FileManager.default.fileExists(atPath: store.appendingPathComponent(name).path)
            return "\(name) (\(named.contains(name) ? "" : "not ")named by the next read's manifest, "
                + "\(exists ? "still there" : "deleted since"))"
        }
        return "lists \(details.joined(separator: ", ")) as unnamed; the next read's generation "
            + "\(set.map { "\($0.generation)" } ?? "?") names \(set?.files.map(\.name).joined(separator: " ") ?? "?")"
    }

    /// Checks the rows of `history(of:)`: increasing epochs, each holding the item's value as of
    /// it; after the first (which may be the checkpoint the history starts from), exactly the
    /// epochs that wrote or removed the item.
    static func checkPathHistory(
        _ rows: [(epoch: EpochInfo, state: [UInt8]?)], item: Int, ledger: Ledger, findings: Findings
    ) {
        let label = "history(of:)"
        for (previous, next) in zip(rows, rows.dropFirst()) where next.epoch.epoch <= previous.epoch.epoch {
            findings.fail(label, "epoch \(next.epoch.epoch) follows \(previous.epoch.epoch)")
            return
        }
        for row in rows {
            guard let writers = ledger.writers(at: row.epoch.epoch) else {
                findings.fail(label, "lists epoch \(row.epoch.epoch), which was never committed")
                return
            }
            let expected = writers[item] == 0 ? nil : value(epoch: writers[item], item: item)
            if row.state != expected {
                findings.fail(label, "Item-\(item) at epoch \(row.epoch.epoch) is not what was committed")
                return
            }
        }
        guard let first = rows.first?.epoch.epoch, let last = rows.last?.epoch.epoch, first < last else { return }
        let path = ledger.paths[item]
        let touching = (first + 1...last).filter { epoch in
            ledger.changes(of: epoch)?.contains { change in
                switch change {
                case .put(let changed, _), .remove(let changed): changed == path
                default: false
                }
            } == true
        }
        if touching != rows.dropFirst().map(\.epoch.epoch) {
            findings.fail(label, "Item-\(item) lists epochs \(rows.map(\.epoch.epoch)), wrote at \(touching)")
        }
    }

    static func expectedDifference(_ old: [UInt64], _ new: [UInt64], ledger: Ledger) -> StateDifference {
        var from: [RestorationPath: [UInt8]] = [:]
        var to: [RestorationPath: [UInt8]] = [:]
        for item in 0..<ledger.items where old[item] != new[item] {
            if old[item] != 0 { from[ledger.paths[item]] = value(epoch: old[item], item: item) }
            if new[item] != 0 { to[ledger.paths[item]] = value(epoch: new[item], item: item) }
        }
        return StateDifference(from: from, to: to)
    }

    @Test(arguments: [Setup.defaultOptions, .everyCommitInSmallSegments])
    func everyReadOfTheLibraryBesideALiveWriterSucceedsAndReturnsAPrefixOfWhatWasCommitted(setup: Setup) throws {
        let ledger = Ledger(items: setup.items)
        let findings = Findings()
        try runBesideALiveWriter(
            setup,
            [
                Self.journalReaderPass(recovery: .strict, ledger: ledger, findings: findings, oldestSeen: Locked(0)),
                Self.inspectorPass(recovery: .stopAtDamage, ledger: ledger, findings: findings, oldestSeen: Locked(0)),
            ], ledger: ledger, findings: findings)
    }

    /// <doc:DurabilityAndRecovery> promises that `verify` does not count a writer's work in
    /// progress, the checkpoint it folds into included, as unnamed files. Beside a writer whose
    /// segment rolls (every 32 KiB here) while a compaction writes its checkpoint, `verify` now and
    /// then lists that checkpoint as unnamed (status still clean), and the next read's manifest
    /// names it. As the names show, the segments rolled to meanwhile have higher sequence numbers
    /// than the checkpoint, so it is older than the newest file the manifest names. Fails in
    /// some runs, not all: it needs a `verify` between a roll and the end of a compaction (on a
    /// loaded 2-core machine, a debug build: 9 of 199 verifies, in 4 of 5 runs). Left enabled, as
    /// it does not fail every time; the other tests count the same listing without failing.
    @Test func verifyBesideAWriterThatRollsWhileItCompactsListsNoUnnamedFile() throws {
        let ledger = Ledger(items: Setup.everyCommitInSmallSegments.items)
        let findings = Findings()
        let verify: @Sendable (Int, URL, URL) -> Void = { _, store, _ in
            let label = "StoreInspector.verify: unnamed files"
            let verification = StoreInspector.verify(store)
            findings.read(label) {}
            if !verification.unnamedFiles.isEmpty {
                findings.fail(label, Self.describeUnnamed(verification.unnamedFiles, in: store))
            }
        }
        try runBesideALiveWriter(.everyCommitInSmallSegments, [verify, verify], ledger: ledger, findings: findings)
    }

    // MARK: - The command-line tool

    static func runTool(_ arguments: [String]) throws -> ChildResult {
        try runChild(BuiltExecutable.url(of: "statejournal"), arguments)
    }

    /// One pass of the built `statejournal` tool: `log --json`, `verify --json` and `show --json`.
    static func toolPass(ledger: Ledger, findings: Findings, oldestSeen: Locked<UInt64>)
        -> @Sendable (Int, URL, URL)
        -> Void
    {
        { _, store, _ in
            func run(_ label: String, _ arguments: [String]) -> [String: Any]? {
                guard let output = findings.read(label, { try runTool(arguments + [store.path, "--json"]) }) else {
                    return nil
                }
                if output.status != 0 {
                    findings.fail(label, "exit status \(output.status): \(output.standardError)")
                    return nil
                }
                guard
                    let document = try? JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8))
                        as? [String: Any]
                else {
                    findings.fail(label, "printed no JSON object: \(output.standardOutput.prefix(200))")
                    return nil
                }
                return document
            }
            let before = ledger.committedEpoch
            if let log = run("statejournal log", ["log"]) {
                let epochs = (log["epochs"] as? [[String: Any]]) ?? []
                let history = epochs.map { row in
                    EpochInfo(
                        epoch: UInt64((row["epoch"] as? Int) ?? 0), timestamp: Date(),
                        metadata: (row["metadata"] as? [String: String]) ?? [:],
                        entryCount: (row["entries"] as? Int) ?? 0,
                        bytes: (row["bytes"] as? Int) ?? 0)
                }
                _ = oldestSeen.withLock { oldest in
                    checkHistory(
                        history, "statejournal log", before: before, oldestSeen: &oldest, ledger: ledger,
                        findings: findings)
                }
            }
            let before2 = ledger.committedEpoch
            if let verify = run("statejournal verify", ["verify"]) {
                // Checked by `verifyBesideAWriter…` through the library, which fails now and then.
                if let unnamed = verify["unnamedFiles"] as? [String], !unnamed.isEmpty {
                    findings.tolerate("statejournal verify listing unnamed files")
                }
                if verify["status"] as? String != "clean" {
                    findings.fail("statejournal verify", "says \(verify)")
                } else if ((verify["consistentEpoch"] as? Int) ?? 0) < Int(before2) {
                    findings.fail(
                        "statejournal verify",
                        "reaches \(verify["consistentEpoch"] ?? "nothing"), though \(before2) was committed before")
                }
            }
            let before3 = ledger.committedEpoch
            if let show = run("statejournal show", ["show"]) {
                let epoch = UInt64((show["epoch"] as? Int) ?? 0)
                if epoch < before3 {
                    findings.fail("statejournal show", "shows epoch \(epoch), though \(before3) was committed before")
                }
                if show["damage"] is String { findings.fail("statejournal show", "reports damage: \(show["damage"]!)") }
                var entries: [RestorationPath: [UInt8]] = [:]
                for (path, entry) in (show["objects"] as? [String: [String: Any]]) ?? [:] {
                    let state = (entry["state"] as? String) ?? ""
                    let bytes =
                        entry["encoding"] as? String == "bytes"
                        ? Data(base64Encoded: state).map { Array($0) } : Array(state.utf8)
                    entries[(try? RestorationPath(parsing: path)) ?? RestorationPath("unparsable", path)] = bytes ?? []
                }
                if let problem = ledger.mismatch(entries, at: epoch) { findings.fail("statejournal show", problem) }
            }
        }
    }

    @Test(arguments: [Setup.defaultOptions, .everyCommitInSmallSegments])
    func theToolsLogVerifyAndShowBesideALiveWriterSucceedAndPrintAPrefixOfWhatWasCommitted(setup: Setup) throws {
        let ledger = Ledger(items: setup.items)
        let findings = Findings()
        try runBesideALiveWriter(
            setup, [Self.toolPass(ledger: ledger, findings: findings, oldestSeen: Locked(0))], ledger: ledger,
            findings: findings)
    }
}
