// random-store DIR MIB [STATE_BYTES] [SEED]
//
// Writes a store whose states are mostly random bytes, so that LZ4 cannot shrink them: each state
// is a short JSON-like header and a "thumbnail" of random bytes, STATE_BYTES (4096) in all. Every
// object is written once, 500 puts an epoch (two thirds of the bytes), then random objects are
// updated, 250 an epoch, until MIB MiB of states have been put. Default options (automatic
// compaction, two checkpoints, 64 MiB segments) and durability .none. Compaction runs in the
// background, so the files it leaves (and their size) vary from run to run: 95 MiB of puts left
// 99.8 MB on disk in the measured run and 157 MB in another, 910 MiB left 1.05 GB. Check with du.
import Foundation
import StateJournal

struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3, let mebibytes = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: random-store DIR MIB [STATE_BYTES] [SEED]\n".utf8))
    exit(2)
}
let totalBytes = mebibytes << 20
let stateBytes = arguments.count > 3 ? Int(arguments[3])! : 4096
var generator = SplitMix64(state: arguments.count > 4 ? UInt64(arguments[4])! : 1)

func state(_ item: Int, _ version: Int) -> [UInt8] {
    var bytes = Array(
        "{\"version\":\(version),\"selection\":\"item-\(item)\",\"scroll\":\(generator.next() % 20000),\"thumbnail\":\""
            .utf8)
    let count = max(0, stateBytes - bytes.count - 2)
    var random = [UInt8](repeating: 0, count: (count + 7) & ~7)
    random.withUnsafeMutableBytes { raw in
        let words = raw.bindMemory(to: UInt64.self)
        for index in 0..<words.count { words[index] = generator.next() }
    }
    bytes.append(contentsOf: random.prefix(count))
    bytes.append(contentsOf: Array("\"}".utf8))
    return bytes
}

let objects = max(1, totalBytes / stateBytes * 2 / 3)
let journal = try Journal.open(
    at: URL(fileURLWithPath: arguments[1]), options: JournalOptions(durability: .none))
var written = 0
var puts = 0
var epochs = 0
var item = 0
while item < objects {
    let epoch = try journal.beginEpoch()
    for _ in 0..<500 where item < objects {
        let bytes = state(item, 0)
        try epoch.put(RestorationPath("Scene-\(item % 8)", "Item-\(item)"), bytes)
        written += bytes.count
        puts += 1
        item += 1
    }
    try epoch.commit()
    epochs += 1
}
var version = 1
while written < totalBytes {
    let epoch = try journal.beginEpoch()
    for _ in 0..<250 {
        let item = Int(generator.next() % UInt64(objects))
        let bytes = state(item, version)
        try epoch.put(RestorationPath("Scene-\(item % 8)", "Item-\(item)"), bytes)
        written += bytes.count
        puts += 1
    }
    try epoch.commit()
    epochs += 1
    version += 1
}
try journal.close()
print("objects \(objects), puts \(puts), epochs \(epochs), state bytes \(written)")
