/// The version of StateJournal this tool belongs to: what `statejournal --version` prints, and the
/// number of the next release in CHANGELOG.md.
let statejournalVersion = "0.1.0"
