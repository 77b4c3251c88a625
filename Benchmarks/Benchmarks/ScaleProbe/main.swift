// The engine at scale, one figure per run, for `Benchmarks/Scripts` and by hand (a release build):
//
//   ScaleProbe write DIR PATHS      a store of PATHS paths of about 115 bytes, 1,000 paths an epoch
//   ScaleProbe open DIR [CACHE]     opens it: the time, the entry bytes (paths' and states'), and
//                                   the resident size after open, with a compression cache of CACHE
//                                   bytes (default: the journal's)
//   ScaleProbe grow DIR PATHS [SEGMENT] [manual]
//                                   unpaced one-entry commits (interval durability) that each add a
//                                   new path, PATHS of them: the slowest commits and where they fell,
//                                   with segments of SEGMENT bytes (default: the journal's), and
//                                   with compaction only when asked for (`manual`)
//   ScaleProbe history DIR          on the store `write` made: 300 one-entry commits around two
//                                   compactions (so that history starts at a checkpoint), then the
//                                   time of the writer's `history()` twice, of a reader's (which
//                                   checks the oldest checkpoint each time), and of the writer's
//                                   twice again after reopening
//
// Each prints one line of `name=value` pairs.
import Foundation
import StateJournal

func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return kilobytes * 1024
    }
    return 0
}

/// About 115 bytes of app state for path `index`, version `version`.
func value(_ index: Int, version: Int = 0) -> [UInt8] {
    Array(
        "{\"id\":\(index),\"title\":\"Card \(index % 977) of the quarterly plan\",\"rev\":\(version),\"pos\":[\(index % 31),\(index % 17)]}"
            .utf8)
}

/// The bytes of `path`'s components in UTF-8: what an entry's path adds to its bytes.
func utf8Count(of path: RestorationPath) -> Int { path.components.reduce(0) { $0 + $1.utf8.count } }

func path(_ index: Int) -> RestorationPath { RestorationPath(["Board-\(index / 10_000)", "Card-\(index)"]) }

let arguments = CommandLine.arguments
// `swift package benchmark` runs every executable of this package with its own arguments: without
// a command of this program's, it says how to use it and exits successfully, as its siblings do.
guard arguments.count >= 3, ["write", "open", "grow", "history"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: ScaleProbe write|open|grow|history DIR [N]\n".utf8))
    exit(0)
}
let directory = URL(fileURLWithPath: arguments[2])
let count = arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0
let clock = ContinuousClock()

switch arguments[1] {
case "write":
    try? FileManager.default.removeItem(at: directory)
    let journal = try Journal.open(
        at: directory, options: JournalOptions(durability: .interval(seconds: 1), compaction: .manual))
    var bytes = 0
    let started = clock.now
    for first in stride(from: 0, to: count, by: 1_000) {
        let epoch = try journal.beginEpoch()
        for index in first..<min(first + 1_000, count) {
            let state = value(index)
            let key = path(index)
            bytes += state.count + utf8Count(of: key)
            try epoch.put(key, state)
        }
        _ = try epoch.commit()
    }
    _ = try journal.compact()
    try journal.close()
    print("write paths=\(count) entryBytes=\(bytes) seconds=\((clock.now - started).seconds)")
case "open":
    var chosen = JournalOptions(compaction: .manual)
    if arguments.count > 3 { chosen.compressionCacheLimit = count }
    let before = residentBytes()
    let started = clock.now
    let journal = try Journal.open(at: directory, options: chosen)
    let elapsed = clock.now - started
    let after = residentBytes()
    // An entry's bytes are its path's (the UTF-8 of its components) and its state's.
    var stateBytes = 0
    var pathBytes = 0
    var paths = 0
    for (path, state) in journal.recoveredState {
        stateBytes += state.count
        pathBytes += utf8Count(of: path)
        paths += 1
    }
    let bytes = stateBytes + pathBytes
    print(
        "open paths=\(paths) entryBytes=\(bytes) stateBytes=\(stateBytes) seconds=\(elapsed.seconds) "
            + "mbPerSecond=\(Double(bytes) / elapsed.seconds / 1e6) stateMBPerSecond=\(Double(stateBytes) / elapsed.seconds / 1e6) "
            + "residentAfterOpen=\(after) residentGrowth=\(after - before) growthPerEntryByte=\(Double(after - before) / Double(max(bytes, 1))) "
            + "growthPerStateByte=\(Double(after - before) / Double(max(stateBytes, 1))) cacheLimit=\(chosen.compressionCacheLimit)"
    )
    try journal.close()
case "history":
    let options = JournalOptions(durability: .interval(seconds: 1), compaction: .manual)
    var journal = try Journal.open(at: directory, options: options)
    let paths = journal.recoveredState.count
    for round in 0..<3 {
        for index in 0..<100 {
            try journal.commit([.put(path(index * 97 % max(paths, 1)), value(index, version: round))])
        }
        if round < 2 { _ = try journal.compact() }
    }
    func timed(_ body: () throws -> [EpochInfo]) rethrows -> (Double, Int) {
        let started = clock.now
        let epochs = try body()
        return ((clock.now - started).seconds, epochs.count)
    }
    let (first, epochs) = try timed { try journal.history() }
    let (second, _) = try timed { try journal.history() }
    let reader = try JournalReader(at: directory)
    let (checking, _) = try timed { try reader.history() }
    try journal.close()
    journal = try Journal.open(at: directory, options: options)
    let (reopened, _) = try timed { try journal.history() }
    let (reopenedAgain, _) = try timed { try journal.history() }
    try journal.close()
    print(
        "history paths=\(paths) epochs=\(epochs) writerSeconds=\(first) writerAgainSeconds=\(second) "
            + "readerSeconds=\(checking) afterReopenSeconds=\(reopened) afterReopenAgainSeconds=\(reopenedAgain)")
case "grow":
    var options = JournalOptions(durability: .interval(seconds: 1))
    if arguments.count > 4, let segment = Int(arguments[4]) { options.segmentSizeLimit = segment }
    if arguments.count > 5, arguments[5] == "manual" { options.compaction = .manual }
    let journal = try Journal.open(at: directory, options: options)
    var rolls: [Int] = []
    var segments = 0
    let base = journal.recoveredState.count
    var slowest: [(Duration, Int)] = []
    var times: [Duration] = []
    times.reserveCapacity(count)
    for offset in 0..<count {
        let index = base + offset
        let started = clock.now
        let epoch = try journal.beginEpoch()
        try epoch.put(path(index), value(index))
        _ = try epoch.commit()
        let elapsed = clock.now - started
        times.append(elapsed)
        if offset % 64 == 0 {
            let count =
                (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?
                .filter { $0.hasPrefix("segment-") }.count ?? 0
            if count > segments && offset > 0 { rolls.append(offset) }
            segments = count
        }
        if slowest.count < 10 || elapsed > slowest[slowest.count - 1].0 {
            slowest.append((elapsed, offset + 1))
            slowest.sort { $0.0 > $1.0 }
            if slowest.count > 10 { slowest.removeLast() }
        }
    }
    try journal.close()
    times.sort()
    func quantile(_ q: Double) -> Double { times[min(times.count - 1, Int(Double(times.count) * q))].seconds * 1e6 }
    let worst = slowest.map { "\(Int($0.0.seconds * 1e6))us@\($0.1)" }.joined(separator: ",")
    print(
        "grow commits=\(count) p50us=\(quantile(0.5)) p99us=\(quantile(0.99)) p9999us=\(quantile(0.9999)) "
            + "maxus=\(times.last!.seconds * 1e6) slowest=\(worst) newSegmentsSeenNear=\(rolls.map(String.init).joined(separator: ","))"
    )
default:
    break
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
