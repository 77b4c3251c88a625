import ArgumentParser
import Foundation
import StateJournal

#if canImport(Glibc)
    import Glibc
#endif

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every record, checkpoint and the manifest; never modifies the store.",
        discussion: """
            Exit status 0: clean (also when a power cut left an unsynced tail, which is not damage: the next writer \
            cuts it). 1: damaged, but replay reaches a consistent epoch. 65 (EX_DATAERR): nothing consistent is left, \
            or the store is in a newer format. 66 (EX_NOINPUT): no store in the directory. 74 (EX_IOERR), \
            77 (EX_NOPERM): it could not be read.
            """)

    @OptionGroup var store: StoreOptions

    @OptionGroup var output: OutputOptions

    func run() throws {
        StandardStream.prepare()
        let progress = Progress()
        progress.update("verifying \(store.directory)…")
        let result = StoreInspector.verify(store.url)
        progress.finish()
        let status = ["clean", "damaged", "unusable"][result.status.rawValue]
        // Why a store is unusable: no store there, or data that cannot be used.
        var exitStatus: ExitStatus = [.success, .damage, .dataError][result.status.rawValue]
        var failure = result.failure.map(ExitStatus.clean)
        if result.status == .unusable {
            do {
                _ = try JournalReader(at: store.url)
            } catch let error as JournalError {
                exitStatus = ExitStatus(for: error)
                failure = ExitStatus.message(for: error)
            } catch {}
        }
        let environment = ProcessInfo.processInfo.environment
        let isTerminal = isatty(STDOUT_FILENO) == 1
        Style.enabled =
            !store.json && Terminal.colors(output.color, outputIsTerminal: isTerminal, environment: environment)
        if store.json {
            try printJSON(document: [
                "status": .string(status), "exitStatus": .int(exitStatus.rawValue),
                "consistentEpoch": .int(result.consistentEpoch), "epochsChecked": .int(result.epochsChecked),
                "damage": .string(result.damage?.description), "damagedFile": .string(result.damage?.file),
                "damagedOffset": .int(result.damage?.offset),
                "damagedCheckpoints": .array(result.damagedCheckpoints.map { .string("\($0.file): \($0.reason)") }),
                "uncommittedTailBytes": .int(result.uncommittedTailBytes),
                "unsyncedTail": .string(result.unsyncedTail?.description),
                "unsyncedTailBytes": .int(result.unsyncedTail?.bytesDropped ?? 0),
                "unnamedFiles": .array(result.unnamedFiles.map(JSON.string)), "failure": .string(failure),
            ])
        } else {
            let reached = result.consistentEpoch.map(String.init) ?? "none"
            switch result.status {
            case .clean:
                print(
                    Style.green.apply("Clean:")
                        + " \(result.epochsChecked) retained epoch\(result.epochsChecked == 1 ? "" : "s") checked;"
                        + " replay reaches epoch \(reached)."
                )
            case .damaged:
                print(
                    Style.red.apply("Damaged, but recoverable:") + " replay reaches epoch \(reached)."
                )
                if let damage = result.damage {
                    print("  \(damage.file) at offset \(damage.offset): \(damage.reason)")
                    print(
                        "  lost: \(damage.bytesDropped) bytes, \(damage.epochsLost) committed epochs after the damage")
                }
                for checkpoint in result.damagedCheckpoints { print("  \(checkpoint.file): \(checkpoint.reason)") }
            case .unusable:
                print(Style.red.apply("Unusable:") + " \(failure ?? "nothing consistent is left.")")
            }
            if let tail = result.unsyncedTail {
                print(
                    """
                      Recovered from a power cut: \(tail.bytesDropped) bytes written after the last sync reached the \
                    disk only in part, from \(tail.file) at offset \(tail.offset) on; replay ends before them \
                    (\(tail.epochsDropped) unsynced epochs), and the next writer cuts them off. Not damage.
                    """
                )
            }
            if result.uncommittedTailBytes > 0 {
                print(
                    """
                      \(result.uncommittedTailBytes) bytes after the last commit belong to no committed epoch (an \
                    epoch being written, or cut short by a crash).
                    """
                )
            }
            if !result.unnamedFiles.isEmpty {
                print("  files the manifest does not name: \(result.unnamedFiles.joined(separator: ", "))")
            }
        }
        if exitStatus != .success { throw ExitCode(exitStatus.rawValue) }
    }
}
