import Foundation
import StateJournal

/// Writes a store's timeline page: what `statejournal timeline` and the end of `statejournal demo`
/// run.
enum TimelineWriter {
    /// What was written.
    struct Summary {
        var path: String
        var bytes: Int
        var epochs: Int
        var paths: Int
        var versions: Int
        var omittedVersions: Int
    }

    /// Reads the store in `store` and writes its page to `output`, replacing the file atomically.
    static func write(
        store: URL, to output: URL, stateBudget: Int = 24 << 20, progress: (String) -> Void = { _ in }
    ) throws -> Summary {
        let gatherer = TimelineGatherer(
            inspector: try StoreInspector(at: store), storePath: store.path, stateBudget: stateBudget)
        let (model, archive) = try gatherer.gather(progress: progress)
        progress("writing the page")
        let page = Data(try TimelineDocument.html(model: model, archive: archive).utf8)
        do {
            try page.write(to: output, options: .atomic)
        } catch {
            throw JournalError(
                .ioFailure, "Could not write \(output.path): \(error.localizedDescription)", file: output.path)
        }
        return Summary(
            path: output.path, bytes: page.count, epochs: model.epochs.n.count, paths: model.paths.name.count,
            versions: archive.summary.versions, omittedVersions: archive.summary.omitted)
    }
}
