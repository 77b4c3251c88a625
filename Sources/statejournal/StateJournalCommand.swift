import ArgumentParser

@main
struct StateJournalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statejournal",
        abstract: "Inspect, replay, verify, compact, replicate and benchmark StateJournal stores.",
        discussion: helpDiscussion, version: statejournalVersion,
        subcommands: [
            DemoCommand.self, LogCommand.self, ShowCommand.self, DiffCommand.self, HistoryCommand.self,
            VerifyCommand.self,
            CompactCommand.self, RewindCommand.self, SoakCommand.self, BenchCommand.self, TimelineCommand.self,
            TimelineFixtureCommand.self, ReplicateCommand.self, RestoreCommand.self, FollowCommand.self,
            PromoteCommand.self, ReplicaCommand.self,
        ]
    )
}
