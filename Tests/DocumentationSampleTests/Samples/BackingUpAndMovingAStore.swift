// swift-format-ignore-file
// The samples of "Shipping from the app's process" in Backing Up and Moving a Store
// (StateJournal.docc/BackingUpAndMovingAStore.md). This file imports exactly what the samples import.
// It keeps the document's formatting, which swift-format would change. They need an S3 server, so
// they are compiled here and run by the replication tests' equivalents.
import Foundation
import StateJournalReplication

// sample: BackingUpAndMovingAStore.md, the in-process service
func replicationService() throws -> ReplicationService {
    ReplicationService(
        store: URL(fileURLWithPath: "/var/lib/notes/state"),
        to: try S3Location(parsing: "s3://backups/notes"),
        configuration: try S3Configuration.fromEnvironment(),
        options: ReplicationOptions(interval: .seconds(1)))
}
// end sample

// sample: BackingUpAndMovingAStore.md, restoring in code
func restoreAsOfYesterday() async throws -> UInt64 {
    let restorer = ReplicaRestorer(
        from: try S3Location(parsing: "s3://backups/notes"),
        configuration: try S3Configuration.fromEnvironment())
    let report = try await restorer.restore(
        into: URL(fileURLWithPath: "/var/lib/notes/restored"),
        target: .time(Date(timeIntervalSinceNow: -86_400)))
    return report.epoch.epoch
}
// end sample
