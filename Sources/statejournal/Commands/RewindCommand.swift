import ArgumentParser
import Foundation
import StateJournal

struct RewindCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rewind",
        abstract: "Write a new store whose latest state is a chosen epoch, to start the app as it was then.",
        discussion:
            "The original store is not touched. Exits 73 (EX_CANTCREAT) when the new store cannot be created there.")

    @OptionGroup var store: StoreOptions

    @Option(help: "The epoch to rewind to.")
    var epoch: UInt64

    @Option(help: "The new store's directory (must not exist, or be empty).", completion: .directory)
    var into: String

    func run() throws {
        try reportingErrors {
            let queries = try StoreQueries(store.url)
            _ = try queries.epoch(epoch)
            let target = URL(fileURLWithPath: into)
            if let contents = try? FileManager.default.contentsOfDirectory(atPath: into), !contents.isEmpty {
                throw CommandFailure(
                    .cannotCreate, "\(into) is not empty; rewind writes a new store, so choose a new directory.")
            }
            let parent = target.deletingLastPathComponent().path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                throw CommandFailure(
                    .cannotCreate, "cannot create \(into): its parent directory \(parent) does not exist.")
            }
            let progress = Progress()
            progress.update("rewinding \(store.directory) to epoch \(epoch)…")
            let info = try queries.inspector.rewind(to: epoch, into: target)
            progress.finish()
            if store.json {
                return try printJSON(document: ["into": .string(into), "rewoundTo": .int(epoch), "epoch": .epoch(info)])
            }
            print(
                """
                Wrote \(into): epoch \(info.epoch) holds the state of epoch \(epoch) of \(store.directory) \
                (\(info.entryCount) paths).
                """
            )
        }
    }
}
