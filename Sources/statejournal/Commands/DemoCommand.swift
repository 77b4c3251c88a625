import ArgumentParser
import Foundation
import StateJournal
import StateRestoration
import StateRestorationExample

#if canImport(Glibc)
    import Glibc
#endif

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract:
            """
            Run the example mail app: it saves its state as you use it, is killed, restarts, restores, and shows its \
            history.
            """
    )

    @Option(help: "Where to keep the store (default: a new temporary directory).", completion: .directory)
    var dir: String?

    @Option(help: "The seed of the simulated user's actions.")
    var seed: UInt64 = 42

    @Option(name: .customLong("child"), help: .hidden)
    var childStore: String?

    func run() throws {
        StandardStream.prepare()
        if let childStore { return try runApp(store: childStore) }
        try reportingErrors { try runDemo() }
    }

    /// The app's first life: act, save after every action, report each save, until killed.
    private func runApp(store: String) throws {
        let journal = try Journal.open(
            at: URL(fileURLWithPath: store), options: JournalOptions(durability: .everyCommit))
        let app = MailApp(journal: journal, bundleVersion: "42", interfaceIdiom: "desktop")
        try app.launch()
        var step: UInt64 = 0
        while true {
            step += 1
            let action = app.simulate(steps: 1, seed: seed &+ step)[0]
            let report = try app.save()
            if let epoch = report.epoch {
                let line = "saved \(epoch.epoch) \(report.writtenPaths.count + report.removedPaths.count) \(action)\n"
                try StandardStream.write(line)
                try StandardStream.write(
                    "screen \(epoch.epoch) " + app.snapshot.description.replacingOccurrences(of: "\n", with: " | ")
                        + "\n")
            }
            usleep(40_000)
        }
    }

    private func runDemo() throws {
        let store =
            dir
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "statejournal-demo-\(UUID().uuidString.prefix(8))"
            ).path
        print("StateJournal demo: a mail app that comes back where you left it.")
        print("Store: \(store)\n")

        // 1. The app runs as a separate process, saving after every user action.
        print("1. The app starts and the user works; every action is saved as an epoch:")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        if !FileManager.default.isExecutableFile(atPath: child.executableURL!.path) {
            child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        }
        child.arguments = ["demo", "--child", store, "--seed", String(seed)]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        var buffer = ""
        var screens: [UInt64: String] = [:]
        var saves = 0
        var lastAcknowledged: UInt64 = 0
        let reader = output.fileHandleForReading
        while saves < 10 || screens[lastAcknowledged] == nil {
            let data = reader.availableData
            if data.isEmpty { break }
            buffer += String(decoding: data, as: UTF8.self)
            while let newline = buffer.firstIndex(of: "\n") {
                let line = String(buffer[..<newline])
                buffer.removeSubrange(...newline)
                let fields = line.split(separator: " ", maxSplits: 3).map(String.init)
                if fields.first == "saved", fields.count == 4, let epoch = UInt64(fields[1]) {
                    saves += 1
                    lastAcknowledged = epoch
                    print(
                        """
                           epoch \(String(epoch).leftPadded(3))  \(fields[2]) \
                        \(fields[2] == "1" ? "entry  " : "entries")  \(fields[3])
                        """
                    )
                } else if fields.first == "screen", fields.count >= 2, let epoch = UInt64(fields[1]) {
                    screens[epoch] = line.split(separator: " ", maxSplits: 2).last.map(String.init)
                }
            }
        }
        // 2. Killed in the middle of its work: at a random moment of its next action and save.
        usleep(useconds_t.random(in: 0..<40_000))
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        print("\n2. The app is killed with SIGKILL while it works (last save it reported: epoch \(lastAcknowledged)).")
        if let screen = screens[lastAcknowledged] { print("   It was showing: \(screen)") }

        // 3. Restart and restore.
        let journal = try Journal.open(
            at: URL(fileURLWithPath: store), options: JournalOptions(durability: .everyCommit))
        let recovery = journal.recoveryReport
        print(
            "\n3. The app restarts. Opening the store: "
                + (recovery.isClean
                    ? "clean." : "repaired (\(recovery.truncatedTailBytes) bytes of an unfinished epoch cut off)."))
        let app = MailApp(journal: journal, bundleVersion: "42", interfaceIdiom: "desktop")
        let report = try app.launch()
        let restoredEpoch = report.epoch?.epoch ?? 0
        print(
            """
               Restored epoch \(restoredEpoch) (\(report.reason.map { "\($0)" } ?? "nothing to restore")): \
            \(report.restored.count) objects restored, \(report.skipped.count) skipped.
            """
        )
        let screen = app.snapshot.description.replacingOccurrences(of: "\n", with: " | ")
        print("   It shows: \(screen)")
        if let before = screens[restoredEpoch] {
            print(
                "   "
                    + (before == screen
                        ? "Identical to what it showed when epoch \(restoredEpoch) was saved."
                        : "DIFFERENT from what it showed when epoch \(restoredEpoch) was saved."))
        } else if restoredEpoch > lastAcknowledged {
            print("   (epoch \(restoredEpoch) was saved after the last line the app printed, just before the kill.)")
        }
        if restoredEpoch < lastAcknowledged { print("   LOST acknowledged epochs after \(restoredEpoch).") }
        try journal.close()

        // 4. The history it left.
        print("\n4. The history it left (abridged: statejournal log \(store) prints every epoch with its metadata):")
        let epochs = try StoreInspector(at: URL(fileURLWithPath: store)).log()
        let rows = epochs.suffix(14).map { info in
            [
                String(info.epoch), info.timestamp.iso8601, info.metadata["kind"] ?? "", String(info.entryCount),
                String(info.bytes),
            ]
        }
        print(
            table(["EPOCH", "TIME (UTC)", "KIND", "ENTRIES", "BYTES"], rows, rightAligned: [0, 3, 4]).split(
                separator: "\n"
            ).map { "   " + $0 }.joined(separator: "\n"))
        print("\nLook closer:")
        print("   statejournal show \(store)")
        print("   statejournal diff \(store) 1 \(max(2, lastAcknowledged))")
        print("   statejournal history \(store) \(try Self.mostWrittenPath(in: store))")
        print("   statejournal verify \(store)")
        // The same history as a page to open in a browser.
        let timeline = try TimelineWriter.write(
            store: URL(fileURLWithPath: store), to: URL(fileURLWithPath: store + "-timeline.html"))
        print("   statejournal timeline \(store) --html \(timeline.path)   (written: open it in a browser)")
    }
}
