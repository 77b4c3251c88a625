import ArgumentParser

@main
struct StateJournalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statejournal",
        abstract: "Inspect, replay, verify, compact, replicate and benchmark StateJournal stores.",
        discussion: "Every read command opens the store read-only, beside a live writer if there is one.",
        subcommands: [
            DemoCommand.self, LogCommand.self, ShowCommand.self, DiffCommand.self, HistoryCommand.self,
            VerifyCommand.self,
            CompactCommand.self, RewindCommand.self, SoakCommand.self, BenchCommand.self, ReplicateCommand.self,
            RestoreCommand.self,
        ]
    )
}
