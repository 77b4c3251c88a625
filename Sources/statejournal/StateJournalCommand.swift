import ArgumentParser

@main
struct StateJournalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statejournal",
        abstract: "Inspect, replay, verify and benchmark StateJournal stores.",
        subcommands: [BenchCommand.self]
    )
}
