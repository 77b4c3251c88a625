import ArgumentParser
import StateJournal

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every record, checkpoint and the manifest; never modifies the store.",
        discussion: """
            Exit status 0: clean (also when a power cut left an unsynced tail, which is not damage: the next writer cuts it). \
            1: damaged, but replay reaches a consistent epoch. 2: not a store, or nothing consistent.
            """)

    @OptionGroup var store: StoreOptions

    struct Output: Codable {
        var status: String
        var consistentEpoch: UInt64?
        var epochsChecked: Int
        var damage: String?
        var damagedFile: String?
        var damagedOffset: Int64?
        var damagedCheckpoints: [String]
        var uncommittedTailBytes: Int64
        var unsyncedTail: String?
        var unsyncedTailBytes: Int64
        var unnamedFiles: [String]
        var failure: String?
    }

    func run() throws {
        StandardStream.prepare()
        let progress = Progress()
        progress.update("verifying \(store.directory)…")
        let result = StoreInspector.verify(store.url)
        progress.finish()
        let status = ["clean", "damaged", "unusable"][result.status.rawValue]
        if store.json {
            try printJSON(
                Output(
                    status: status, consistentEpoch: result.consistentEpoch, epochsChecked: result.epochsChecked,
                    damage: result.damage?.description, damagedFile: result.damage?.file,
                    damagedOffset: result.damage?.offset,
                    damagedCheckpoints: result.damagedCheckpoints.map { "\($0.file): \($0.reason)" },
                    uncommittedTailBytes: result.uncommittedTailBytes, unsyncedTail: result.unsyncedTail?.description,
                    unsyncedTailBytes: result.unsyncedTail?.bytesDropped ?? 0, unnamedFiles: result.unnamedFiles,
                    failure: result.failure))
        } else {
            switch result.status {
            case .clean:
                print(
                    "Clean: \(result.epochsChecked) retained epochs checked; replay reaches epoch \(result.consistentEpoch.map(String.init) ?? "none")."
                )
            case .damaged:
                print(
                    "Damaged, but recoverable: replay reaches epoch \(result.consistentEpoch.map(String.init) ?? "none")."
                )
                if let damage = result.damage {
                    print("  \(damage.file) at offset \(damage.offset): \(damage.reason)")
                    print(
                        "  lost: \(damage.bytesDropped) bytes, \(damage.epochsLost) committed epochs after the damage")
                }
                for checkpoint in result.damagedCheckpoints { print("  \(checkpoint.file): \(checkpoint.reason)") }
            case .unusable:
                print("Unusable: \(result.failure ?? "nothing consistent is left").")
            }
            if let tail = result.unsyncedTail {
                print(
                    "  Recovered from a power cut: \(tail.bytesDropped) bytes written after the last sync reached the disk only in part, from \(tail.file) at offset \(tail.offset) on; replay ends before them (\(tail.epochsDropped) unsynced epochs), and the next writer cuts them off. Not damage."
                )
            }
            if result.uncommittedTailBytes > 0 {
                print(
                    "  \(result.uncommittedTailBytes) bytes after the last commit belong to no committed epoch (an epoch being written, or cut short by a crash)."
                )
            }
            if !result.unnamedFiles.isEmpty {
                print("  files the manifest does not name: \(result.unnamedFiles.joined(separator: ", "))")
            }
        }
        if result.status != .clean { throw ExitCode(Int32(result.status.rawValue)) }
    }
}
