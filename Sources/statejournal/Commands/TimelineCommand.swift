import ArgumentParser
import Foundation
import StateJournal

struct TimelineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Write one self-contained HTML page of a store's history.",
        discussion: """
            The page needs no network: epochs on a time axis (bar height: bytes; colour: kind), \
            launches as bands with their restoration reports, crash-loop fallbacks and tails as \
            markers, one lane per restoration path, and the state and diff of any object at any \
            epoch. Open it in any browser.
            """)

    @Argument(help: "The store directory.", completion: .directory)
    var directory: String

    @Option(help: "Where to write the page (e.g. timeline.html).", completion: .file(extensions: ["html"]))
    var html: String

    @Option(help: .hidden)
    var stateBudgetMegabytes = 24

    func run() throws {
        try reportingErrors {
            let progress = Progress()
            let summary = try TimelineWriter.write(
                store: URL(fileURLWithPath: directory), to: URL(fileURLWithPath: html),
                stateBudget: stateBudgetMegabytes << 20, progress: progress.update)
            progress.finish()
            var line =
                "Wrote \(summary.path): \(summary.epochs) epochs, \(summary.paths) paths, \(summary.versions) states"
            if summary.omittedVersions > 0 { line += " (\(summary.omittedVersions) older ones left out)" }
            print(line + ", \(summary.bytes) bytes.")
        }
    }
}

/// Writes a large store for the timeline's load test: `objects` objects in the first epoch, then
/// small passes, launches, a crash loop and two compactions, until `epochs` epochs are retained.
struct TimelineFixtureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline-fixture", abstract: "Write a large store for timeline load tests.",
        shouldDisplay: false)

    @Argument(help: "A new store directory.")
    var directory: String

    @Option(help: "Objects in the first epoch.")
    var objects = 100_000

    @Option(help: "Epochs the store retains.")
    var epochs = 10_000

    @Option(help: "The seed of the changes.")
    var seed: UInt64 = 1

    @Option(help: "Record an outage with this reason, ended by a catch-up pass a fifth of the way from the end.")
    var outageReason: String?

    @Option(help: "Begin this many replication terms at even intervals, each with its marker epoch.")
    var terms = 0

    func run() throws {
        try reportingErrors {
            let progress = Progress()
            let fixture = TimelineFixture(
                objects: objects, epochs: epochs, seed: seed, outageReason: outageReason, terms: terms)
            let retained = try fixture.write(
                to: URL(fileURLWithPath: directory), progress: progress.update)
            progress.finish()
            print("Wrote \(directory): \(objects) objects, \(retained) retained epochs.")
        }
    }
}
