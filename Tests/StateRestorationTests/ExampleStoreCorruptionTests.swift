import Foundation
import StateJournal
import StateJournalTestSupport
import StateRestoration
import StateRestorationExample
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Guarantee 3 on stores the example mail app wrote: every byte of a small store flipped in turn,
/// random bytes of a larger one flipped, every file cut at every offset, garbage appended. After
/// each, every read path runs (readers in both recovery modes: open, state, history, every epoch;
/// the inspector's verify, difference and path history; a writer's recovery and the app's
/// restoration; the entry decoder on every value) and must return or report, never crash or hang.
/// Whatever a reader returns must be the state of an epoch the app committed, and `verify` must
/// notice every flipped byte that changes what a reader sees.
///
/// CI samples the positions (about 1,200 cases); `STATEJOURNAL_SWEEP=full` (or `.ci/corruption-sweep`)
/// tries every one. `STATEJOURNAL_TEST_VERBOSE=1` prints the counts.
@Suite(.serialized) struct ExampleStoreCorruptionTests {
    static let full = ProcessInfo.processInfo.environment["STATEJOURNAL_SWEEP"] == "full"
    static let verbose = ProcessInfo.processInfo.environment["STATEJOURNAL_TEST_VERBOSE"] == "1"

    /// A store the mail app wrote, its files, and its state at every epoch.
    struct MailStore {
        var files: [String: [UInt8]]
        var states: [UInt64: [RestorationPath: [UInt8]]]
        var paths: [RestorationPath]

        var byteCount: Int { files.values.reduce(0) { $0 + $1.count } }
        /// The segment the writer appended to last: cutting it or appending to it looks like a torn
        /// tail, which is not damage.
        var activeSegment: String? { files.keys.filter { $0.hasPrefix("segment-") }.max() }
        /// Every (file, offset) of the store, files in name order.
        var positions: [(file: String, offset: Int)] {
            files.keys.sorted().flatMap { name in (0..<files[name]!.count).map { (name, $0) } }
        }
    }

    static func writeMailStore(saves: Int, steps: Int, seed: UInt64, segmentSizeLimit: Int) throws -> MailStore {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var options = JournalOptions(
            durability: .none, segmentSizeLimit: segmentSizeLimit, retention: RetentionPolicy(checkpoints: 100))
        options.compaction = .manual
        let journal = try Journal.open(path: store, options: options, fileSystem: FaultInjectingFileSystem())
        let app = MailApp(journal: journal)
        for save in 0..<saves {
            app.simulate(steps: steps, seed: seed &+ UInt64(save))
            try app.save(mode: save % 8 == 0 ? .full : .incremental)
            if save % 16 == 15 { try journal.compact() }
        }
        try journal.close()
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: store) where name != "LOCK" {
            files[name] = try Corruption.readFile(store + "/" + name)
        }
        let reader = try JournalReader(at: URL(fileURLWithPath: store))
        var states: [UInt64: [RestorationPath: [UInt8]]] = [:]
        for info in try reader.history() { states[info.epoch] = try reader.state(through: info.epoch).entries }
        let paths = Array(try reader.state().entries.keys.sorted().prefix(3))
        return MailStore(files: files, states: states, paths: paths)
    }

    static let small = Result { try writeMailStore(saves: 48, steps: 3, seed: 1, segmentSizeLimit: 3 << 10) }
    static let large = Result { try writeMailStore(saves: 160, steps: 5, seed: 99, segmentSizeLimit: 16 << 10) }

    /// What the read paths made of the damaged stores.
    final class Tally: @unchecked Sendable {
        // @unchecked Sendable: used by one serialized test at a time.
        var cases = 0
        var readerOpened = 0
        var readerRefused = 0
        var restored = 0
        var restoreRefused = 0
        var verifyFlagged = 0
        var harmless = 0
        var problems: [String] = []

        func problem(_ text: String) { if problems.count < 20 { problems.append(text) } }

        var summary: String {
            """
            \(cases) cases: readers opened \(readerOpened), refused \(readerRefused); app restored \(restored), \
            refused \(restoreRefused); verify flagged \(verifyFlagged), \(harmless) more changed nothing a reader sees
            """
        }
    }

    /// Writes the store with one file replaced and runs every read path over it.
    static func check(
        _ store: MailStore, replacing name: String, with bytes: [UInt8], expectFlagged: Bool, label: String,
        in directory: TemporaryDirectory, tally: Tally
    ) throws {
        let path = directory.appending("case")
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        for (file, content) in store.files {
            try Corruption.writeFile(path + "/" + file, file == name ? bytes : content)
        }
        let url = URL(fileURLWithPath: path)
        tally.cases += 1

        var replayed: [UInt64] = []
        for recovery in [RecoveryMode.stopAtDamage, .strict] {
            do {
                let reader = try JournalReader(path: path, recovery: recovery, fileSystem: PosixFileSystem())
                let state = try reader.state()
                tally.readerOpened += 1
                if recovery == .stopAtDamage { replayed = try reader.history().map(\.epoch) }
                if let epoch = state.epoch?.epoch {
                    if state.entries != store.states[epoch] {
                        tally.problem("\(label): the reader returned epoch \(epoch) with a state the app never saved")
                    }
                } else if !state.entries.isEmpty {
                    tally.problem("\(label): the reader returned entries without an epoch")
                }
                for value in state.entries.values {
                    if (try? RestorableEntry(decoding: value)) == nil {
                        tally.problem("\(label): a restored value does not decode")
                    }
                }
                let history = try reader.history()
                try reader.forEachEpoch { info, _ in
                    if store.states[info.epoch] == nil {
                        tally.problem("\(label): replay visited epoch \(info.epoch), which the app never saved")
                    }
                    return true
                }
                let inspector = StoreInspector(reader: reader)
                if let first = history.first, let last = history.last {
                    _ = try inspector.difference(from: first.epoch, to: last.epoch)
                }
                for path in store.paths { _ = try inspector.history(of: path) }
            } catch {
                tally.readerRefused += 1
                if !(error is JournalError) { tally.problem("\(label): a reader threw \(type(of: error)): \(error)") }
            }
        }
        let verification = StoreInspector.verify(url)
        // A damaged last record of the active segment cannot be told from a torn write: verify reports
        // it as an uncommitted tail, not as damage. The store is written under `none`, so the active
        // segment's records after its last sync are an unsynced tail a power cut could have left.
        let noticed =
            verification.status != .clean || verification.uncommittedTailBytes > 0 || verification.unsyncedTail != nil
        if noticed {
            tally.verifyFlagged += 1
        } else if expectFlagged {
            // LZ4 can encode the same bytes more than one way: a flip in a checkpoint's compressed
            // block may decode to the same content, which its checksum then rightly accepts. Such a
            // flip must leave every epoch readable, with the states the app saved.
            if replayed == store.states.keys.sorted() {
                tally.harmless += 1
            } else {
                tally.problem("\(label): verify found nothing wrong, but a reader sees \(replayed.count) epochs")
            }
        }

        do {
            let journal = try Journal.open(
                path: path, options: JournalOptions(durability: .none), fileSystem: FaultInjectingFileSystem())
            let app = MailApp(journal: journal)
            do {
                try app.launch()
                tally.restored += 1
            } catch {
                tally.restoreRefused += 1
                if !(error is RestorationError || error is JournalError) {
                    tally.problem("\(label): restoring threw \(type(of: error)): \(error)")
                }
            }
            try journal.close()
        } catch {
            tally.restoreRefused += 1
            if !(error is JournalError) {
                tally.problem("\(label): opening the writer threw \(type(of: error)): \(error)")
            }
        }
    }

    /// The peak resident memory of the process, in bytes.
    static var peakMemory: Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }

    static func finish(_ tally: Tally, _ name: String) {
        if verbose { print("corruption sweep, \(name): \(tally.summary)") }
        #expect(tally.problems.isEmpty, "\(tally.problems.joined(separator: "\n"))")
        #expect(peakMemory < 2 << 30, "the sweep peaked at \(peakMemory >> 20) MiB")
    }

    // MARK: - The sweeps

    @Test(.timeLimit(.minutes(30)))
    func everyFlippedByteOfASmallStoreIsReportedNeverFatal() throws {
        let store = try Self.small.get()
        let directory = TemporaryDirectory()
        let tally = Tally()
        let positions = store.positions
        // CI takes every 13th byte, a different bit each time; the full sweep every byte.
        let stride = Self.full ? 1 : 13
        for index in Swift.stride(from: 0, to: positions.count, by: stride) {
            let (name, offset) = positions[index]
            var bytes = store.files[name]!
            bytes[offset] ^= index % 3 == 0 ? 0xFF : UInt8(1) << UInt8(index % 8)
            try Self.check(
                store, replacing: name, with: bytes, expectFlagged: true, label: "flip \(name)@\(offset)",
                in: directory, tally: tally)
        }
        if Self.verbose {
            print(
                """
                corruption sweep: the small store holds \(store.byteCount) bytes in \(store.files.count) files, \
                \(store.states.count) epochs
                """
            )
        }
        Self.finish(tally, "flipped bytes of the small store")
    }

    @Test(.timeLimit(.minutes(30)))
    func randomFlippedBytesOfALargerStoreAreReportedNeverFatal() throws {
        let store = try Self.large.get()
        let directory = TemporaryDirectory()
        let tally = Tally()
        let positions = store.positions
        var random = SplitMix64(seed: 2026)
        for _ in 0..<(Self.full ? 5000 : 300) {
            let (name, offset) = positions[Int(random.next() % UInt64(positions.count))]
            var bytes = store.files[name]!
            let count = 1 + Int(random.next() % 4)
            for position in offset..<min(offset + count, bytes.count) {
                bytes[position] ^= UInt8(truncatingIfNeeded: random.next() | 1)
            }
            try Self.check(
                store, replacing: name, with: bytes, expectFlagged: true, label: "flip \(count) at \(name)@\(offset)",
                in: directory, tally: tally)
        }
        if Self.verbose {
            print(
                """
                corruption sweep: the larger store holds \(store.byteCount) bytes in \(store.files.count) files, \
                \(store.states.count) epochs
                """
            )
        }
        Self.finish(tally, "random bytes of the larger store")
    }

    @Test(.timeLimit(.minutes(30)))
    func everyTruncationAndAppendedGarbageIsReportedNeverFatal() throws {
        let store = try Self.small.get()
        let directory = TemporaryDirectory()
        let tally = Tally()
        let stride = Self.full ? 1 : 11
        for name in store.files.keys.sorted() {
            let bytes = store.files[name]!
            for length in Swift.stride(from: 0, to: bytes.count, by: stride) {
                try Self.check(
                    store, replacing: name, with: Array(bytes.prefix(length)),
                    expectFlagged: name != store.activeSegment, label: "cut \(name) at \(length)",
                    in: directory, tally: tally)
            }
            for (index, count) in [1, 9, 100, 5000].enumerated() {
                try Self.check(
                    store, replacing: name, with: bytes + Corruption.garbage(count, seed: UInt64(index)),
                    expectFlagged: name != store.activeSegment,
                    label: "\(count) bytes after \(name)", in: directory, tally: tally)
            }
        }
        Self.finish(tally, "truncations and garbage")
    }
}
