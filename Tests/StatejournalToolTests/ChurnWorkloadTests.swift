import Foundation
import StateJournalComparison
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// `soak --workload churn`: every epoch defines paths, in several batch records, so that a crash
/// between an epoch's batch records and its commit leaves a torn tail that defines paths; its store
/// checks clean, and its check fails on a store whose state differs.
@Suite struct ChurnWorkloadTests {
    static let workload = SoakWorkload(objects: 40, seed: 1, kind: .churn)

    @Test func everyChurnEpochCreatesPathsNeverWrittenBeforeRemovesRecreatesAndChangesOthers() throws {
        var seen: Set<RestorationPath> = []
        var removedEver: Set<RestorationPath> = []
        var state: [RestorationPath: [UInt8]] = [:]
        for epoch: UInt64 in 1...60 {
            var created = 0
            var removed = 0
            var recreated = 0
            var changed = 0
            var touched: Set<RestorationPath> = []
            for change in Self.workload.changes(at: epoch) {
                switch change {
                case .put(let path, let bytes):
                    if !seen.contains(path) {
                        created += 1
                    } else if removedEver.contains(path) && state[path] == nil {
                        recreated += 1
                    } else if state[path] != bytes {
                        changed += 1
                    }
                    seen.insert(path)
                    state[path] = bytes
                    touched.insert(path)
                case .remove(let path):
                    #expect(state[path] != nil, "epoch \(epoch) removes \(path), which it does not have")
                    removed += 1
                    removedEver.insert(path)
                    state[path] = nil
                    touched.insert(path)
                case .removeAll:
                    Issue.record("epoch \(epoch) removes everything")
                }
            }
            #expect(touched.count == Self.workload.changes(at: epoch).count, "epoch \(epoch) touches a path twice")
            #expect(created >= 10, "epoch \(epoch) creates \(created) paths never written before")
            if epoch >= 3 { #expect(changed >= 10, "epoch \(epoch) changes \(changed) paths") }
            if epoch >= 2 { #expect(removed >= 10, "epoch \(epoch) removes \(removed) paths") }
            if epoch >= 7 { #expect(recreated >= 5, "epoch \(epoch) re-creates \(recreated) removed paths") }
            // The state is a pure function of the epoch: the one computed whole is the one the epochs built.
            #expect(state == Self.workload.state(at: epoch), "epoch \(epoch)")
            // The creations are spread over the epoch: every batch's worth of states defines paths.
            var sinceCreation = 0
            var fresh: Set<RestorationPath> = []
            for change in Self.workload.changes(at: epoch) {
                guard case .put(let path, let bytes) = change else { continue }
                if path.components[1].hasPrefix("Fresh-\(epoch)-") {
                    fresh.insert(path)
                    sinceCreation = 0
                } else {
                    sinceCreation += bytes.count
                }
                #expect(sinceCreation < EpochWriter.batchTarget / 2, "epoch \(epoch): a batch without a creation")
            }
            // Its own paths, Soak/Fresh-E-k, are ten of them (the first epochs also create the objects).
            #expect(fresh.count == 10 && created >= 10, "epoch \(epoch)")
        }
    }

    /// The types of the records in the segments of `store`, in order, segment by segment.
    static func recordTypes(in store: String) throws -> [[UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: store).filter {
            $0.hasPrefix("segment-")
        }.sorted()
        return try names.map { name in
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store + "/" + name)))
            return try bytes.withUnsafeBytes { raw in
                let header = try SegmentHeader.decode(raw)
                var types: [UInt8] = []
                var offset = SegmentHeader.size
                while offset < raw.count,
                    let record = RecordFraming.header(
                        UnsafeRawBufferPointer(rebasing: raw[offset...]), version: header.version),
                    record.length > 0 || record.typeByte != 0,
                    offset + record.size + record.length <= raw.count
                {
                    types.append(record.typeByte)
                    offset += record.size + record.length
                }
                return types
            }
        }
    }

    @Test func everyChurnEpochThatSoakWritesSpansSeveralBatchRecordsBeforeItsCommit() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let soak = try ToolRunner.run([
            "soak", store, "--seconds", "0.5", "--at-least", "30", "--durability", "none", "--objects", "40",
            "--workload", "churn", "--keep-history",
        ])
        #expect(soak.status == 0, "\(soak.standardError)")
        var epochs = 0
        for types in try Self.recordTypes(in: store) {
            var batches = 0
            for type in types {
                if type == RecordType.batch.rawValue {
                    batches += 1
                } else if type == RecordType.commit.rawValue || type == RecordType.compactCommit.rawValue {
                    // The commit record holds the epoch's last entries: three batch records before it
                    // make four batches.
                    #expect(batches >= 3, "an epoch of \(batches) batch records")
                    epochs += 1
                    batches = 0
                }
            }
        }
        #expect(epochs >= 30)
        let check = try ToolRunner.run(["soak", store, "--check"])
        #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
    }

    @Test func checkOfAChurnStorePassesAndFailsSayingWhereOnAStoreWhoseStateDiffers() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let soak = try ToolRunner.run([
            "soak", store, "--seconds", "0.3", "--at-least", "20", "--durability", "none", "--objects", "40",
            "--workload", "churn",
        ])
        #expect(soak.status == 0, "\(soak.standardError)")
        let check = try ToolRunner.run(["soak", store, "--check"])
        #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
        #expect(check.standardOutput.hasPrefix("ok: "), "\(check.standardOutput)")

        // Soak with the other workload on the store refuses, and writes nothing.
        let steady = try ToolRunner.run(["soak", store, "--seconds", "0.1", "--objects", "40"])
        #expect(steady.status == 2)
        #expect(steady.standardError.contains("written by soak --workload churn"), "\(steady.standardError)")
        #expect(steady.standardOutput.isEmpty)

        // One more epoch, as the workload writes it but for one path created in it.
        let journal = try Journal.open(at: URL(fileURLWithPath: store), options: JournalOptions(durability: .none))
        let epoch = (journal.lastCommitted?.epoch ?? 0) + 1
        var changes = Self.workload.changes(at: epoch)
        let index = try #require(
            changes.firstIndex {
                if case .put(let path, _) = $0 { return path.components[1].hasPrefix("Fresh-") }
                return false
            })
        guard case .put(let path, _) = changes[index] else { return }
        changes[index] = .put(path, Array("{\"edited\":true}".utf8))
        try journal.commit(changes, metadata: Self.workload.metadata)
        try journal.close()

        let failed = try ToolRunner.run(["soak", store, "--check"])
        #expect(failed.status == 1)
        #expect(
            failed.standardOutput.contains("mismatch: epoch \(epoch), \(path): expected {\"path\""),
            "\(failed.standardOutput)")
        #expect(failed.standardOutput.contains("found {\"edited\":true}"), "\(failed.standardOutput)")
    }

    @Test func theRestorationSoaksChurnRestoresChildrenThatComeAndGoAndItsCheckFindsOneMissing() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let soak = try ToolRunner.run([
            "soak", store, "--restoration", "--seconds", "0.5", "--durability", "none", "--objects", "50",
            "--workload", "churn",
        ])
        #expect(soak.status == 0, "\(soak.standardError)")
        let acknowledged = soak.standardOutput.split(separator: "\n").compactMap {
            $0.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        #expect(acknowledged.count >= 10, "\(soak.standardOutput.suffix(200))")
        let check = try ToolRunner.run(["soak", store, "--restoration", "--check", "--objects", "50"])
        #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
        #expect(
            check.standardOutput.hasPrefix("ok: restored change \(acknowledged.last ?? 0), with the "),
            "\(check.standardOutput)")
        #expect(check.standardOutput.contains("children of the churn workload"), "\(check.standardOutput)")

        // Each save creates children under new identifiers and removes others.
        let history = try JournalReader(at: URL(fileURLWithPath: store))
        var created = 0
        var removed = 0
        var saves = 0
        var seen: Set<String> = []
        try history.forEachEpoch { _, changes in
            var createdNow = 0
            var removedNow = 0
            for change in changes {
                switch change {
                case .put(let path, _) where path.components.contains { $0.hasPrefix("Item-") }:
                    if seen.insert(path.description).inserted { createdNow += 1 }
                case .remove(let path) where path.components.contains { $0.hasPrefix("Item-") }:
                    removedNow += 1
                default: break
                }
            }
            saves += 1
            if createdNow > 0 { created += 1 }
            if removedNow > 0 { removed += 1 }
            return true
        }
        #expect(created >= saves - 3, "\(created) of \(saves) saves created children")
        #expect(removed >= saves - 5, "\(removed) of \(saves) saves removed children")

        // A child the app has, removed behind its back: the check names the container.
        let state = try history.state()
        let child = try #require(state.entries.keys.first { $0.components.last?.hasPrefix("Slot-") == true })
        let journal = try Journal.open(at: URL(fileURLWithPath: store), options: JournalOptions(durability: .none))
        try journal.commit([.remove(child)])
        try journal.close()
        let failed = try ToolRunner.run(["soak", store, "--restoration", "--check", "--objects", "50"])
        #expect(failed.status == 1)
        #expect(failed.standardOutput.hasPrefix("mismatch: Container-"), "\(failed.standardOutput)")
    }
}
