import Foundation
import StateJournal

// CommitInstructions COMMITS: opens a new store under the `none` policy, writes 1,000 objects of
// about 200 bytes in one epoch, then commits COMMITS one-entry epochs, each changing one object.
// `.ci/commit-instructions` runs it under callgrind with 0 and with 20,000 commits: the difference
// over 20,000 is the instructions one commit costs (the call, the compression, the record, the
// `write`'s user-space side), repeatable whatever else the machine does.
let commits = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 0 : 0
let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
    "statejournal-instructions-\(ProcessInfo.processInfo.processIdentifier)")
try? FileManager.default.removeItem(at: directory)
defer { try? FileManager.default.removeItem(at: directory) }
let journal = try Journal.open(
    at: directory, options: JournalOptions(durability: .none, compaction: .manual))
let paths = (0..<1_000).map { RestorationPath("Main", "Library", "Item-\($0)") }
func state(_ object: Int, _ revision: Int) -> [UInt8] {
    Array(
        """
        {"id":\(object),"title":"Document number \(object)","selection":[\(object % 7),\(revision % 13)],\
        "scroll":\(Double(object + revision) * 1.5),"opened":"2026-11-24T10:00:00Z","flags":"abcdefghijklmnop",\
        "note":"lorem ipsum dolor sit amet consectetur \(revision)"}
        """.utf8)
}
let first = try journal.beginEpoch()
for object in 0..<1_000 { try first.put(paths[object], state(object, 0)) }
try first.commit()
// The states are made before, and as many whatever COMMITS is, so that the difference between two
// runs is the commits alone.
let revisions = (0..<20_000).map { revision in state((revision &* 7_919) % 1_000, revision + 1) }
for revision in 0..<commits {
    try journal.commit([.put(paths[(revision &* 7_919) % 1_000], revisions[revision % revisions.count])])
}
try journal.close()
