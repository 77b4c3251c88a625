@testable import StateJournal

/// Where a live journal's next record goes in its active segment. The file is longer: the writer
/// writes zeros ahead of its records (see `Journal.preallocate(through:)`).
func writtenEnd(of journal: Journal) -> Int {
    journal.condition.lock()
    defer { journal.condition.unlock() }
    return Int(journal.segment.size)
}

/// How recovery counts a torn tail of these bytes: up to its last byte that is not zero, since
/// zeros after the last record are what a writer writes ahead of its records.
func tailLength(_ bytes: some Collection<UInt8>) -> Int64 {
    var length = 0
    for (index, byte) in bytes.enumerated() where byte != 0 { length = index + 1 }
    return Int64(length)
}
