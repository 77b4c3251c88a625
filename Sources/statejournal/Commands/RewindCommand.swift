import ArgumentParser
import Foundation
import StateJournal

struct RewindCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rewind",
        abstract: "Write a new store whose latest state is a chosen epoch, to start the app as it was then.",
        discussion: "The original store is not touched.")

    @OptionGroup var store: StoreOptions

    @Option(help: "The epoch to rewind to.")
    var epoch: UInt64

    @Option(help: "The new store's directory (must not exist, or be empty).", completion: .directory)
    var into: String

    func run() throws {
        try reportingErrors {
            let progress = Progress()
            progress.update("rewinding \(store.directory) to epoch \(epoch)…")
            let info = try StoreInspector(at: store.url).rewind(to: epoch, into: URL(fileURLWithPath: into))
            progress.finish()
            if store.json { return try printJSON(EpochJSON(info)) }
            print("Wrote \(into): epoch \(info.epoch) holds the state of epoch \(epoch) of \(store.directory) (\(info.entryCount) paths).")
        }
    }
}
