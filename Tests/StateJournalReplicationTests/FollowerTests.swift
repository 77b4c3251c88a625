import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

/// A primary store, its shipper, and a follower keeping a copy in another directory.
private struct FollowedStore {
    let gateway: Gateway
    let directory: URL
    let location: S3Location
    let primary: URL
    let copy: URL
    let journal: Journal
    let shipper: ReplicationShipper

    init(_ label: String, segmentSizeLimit: Int = 4096, shipping: ReplicationOptions = ReplicationOptions())
        async throws
    {
        gateway = try Gateway.required()
        location = S3Location(bucket: try await gateway.freshBucket(), prefix: "follow/\(label)")
        directory = try temporaryDirectory("follow")
        primary = directory.appendingPathComponent("primary")
        copy = directory.appendingPathComponent("copy")
        journal = try Journal.open(
            at: primary, options: JournalOptions(durability: .everyCommit, segmentSizeLimit: segmentSizeLimit))
        shipper = ReplicationShipper(
            store: primary, to: location, configuration: gateway.configuration(), options: shipping)
    }

    func follower(_ options: ReplicaFollower.Options = ReplicaFollower.Options()) -> ReplicaFollower {
        ReplicaFollower(from: location, into: copy, configuration: gateway.configuration(), options: options)
    }

    /// The copy's files and their bytes, but its lock.
    func copyFiles() throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: copy.path) where name != "LOCK" {
            result[name] = Array(try Data(contentsOf: copy.appendingPathComponent(name)))
        }
        return result
    }

    func expectCopyMatchesPrimary(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(
            try JournalReader(at: copy).state().entries == journal.state().entries, sourceLocation: sourceLocation)
        #expect(
            try StoreInspector(at: copy).log().map(\.epoch) == journal.history().map(\.epoch),
            sourceLocation: sourceLocation)
        let verification = StoreInspector.verify(copy)
        #expect(verification.status == .clean, "\(verification)", sourceLocation: sourceLocation)
    }

    func remove() {
        try? journal.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Counts the reads of a store directory that failed while another task kept reading it.
private final class ReadLoop: @unchecked Sendable {
    // @unchecked Sendable: the counters are read and written under `lock` only.
    private let lock = NSLock()
    private var stopped = false
    private(set) var reads = 0
    private(set) var failures: [String] = []
    private var epochs: [UInt64] = []

    var isStopped: Bool { lock.withLock { stopped } }
    func stop() { lock.withLock { stopped = true } }
    var summary: (reads: Int, failures: [String], epochs: [UInt64]) { lock.withLock { (reads, failures, epochs) } }

    func run(_ directory: URL) -> Thread {
        let thread = Thread {
            while !self.isStopped {
                guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("MANIFEST").path) else {
                    usleep(1000)
                    continue
                }
                do {
                    let state = try JournalReader(at: directory).state()
                    let log = try StoreInspector(at: directory).log()
                    self.lock.withLock {
                        self.reads += 1
                        if let epoch = state.epoch?.epoch { self.epochs.append(epoch) }
                        // The log is read after the state: it may be further on, never behind.
                        if state.damage != nil || (log.last?.epoch ?? 0) < (state.epoch?.epoch ?? 0) {
                            self.failures.append(
                                "damage \(String(describing: state.damage)) log \(log.last?.epoch ?? 0)")
                        }
                    }
                } catch {
                    self.lock.withLock { self.failures.append("\(error)") }
                }
            }
        }
        thread.start()
        return thread
    }
}

extension GatewayTests {
    /// Following a replica with ``ReplicaFollower``.
    @Suite struct FollowerTests {
        @Test func aFollowerServesEveryCommitThePrimaryShipsWhileAReaderReadsItsDirectory() async throws {
            let store = try await FollowedStore("serves")
            defer { store.remove() }
            try commit(store.journal, count: 5)
            try await store.shipper.shipOnce()
            let follower = store.follower()
            let first = try await follower.followOnce()
            #expect(first.applied)
            let readers = ReadLoop()
            _ = readers.run(store.copy)
            for round in 0..<25 {
                try commit(store.journal, count: 3, marker: "round \(round)")
                try await store.shipper.shipOnce()
                let report = try await follower.followOnce()
                #expect(report.applied)
                #expect(try report.lastEpoch == store.journal.history().last?.epoch)
            }
            readers.stop()
            let summary = readers.summary
            #expect(summary.failures.isEmpty, "\(summary.failures.prefix(3))")
            #expect(summary.reads > 0)
            // A reader never sees the epochs go back.
            #expect(summary.epochs == summary.epochs.sorted())
            try store.expectCopyMatchesPrimary()

            // The follower holds the writer lock: no writer opens the copy; readers do.
            #expect(throws: JournalError.self) { try Journal.open(at: store.copy) }
            #expect(try JournalReader(at: store.copy).state().epoch != nil)
            await follower.close()
            let reopened = try Journal.open(at: store.copy)
            try reopened.close()
        }

        @Test func aFollowerFollowsCompactionsAndCheckpointsOfThePrimary() async throws {
            let store = try await FollowedStore("compaction")
            defer { store.remove() }
            try commit(store.journal, count: 40)
            try await store.shipper.shipOnce()
            let follower = store.follower()
            try await follower.followOnce()
            for round in 0..<4 {
                try commit(store.journal, count: 20, marker: "round \(round)")
                _ = try store.journal.compact()
                try commit(store.journal, count: 2)
                try await store.shipper.shipOnce()
                let report = try await follower.followOnce()
                #expect(report.applied)
                try store.expectCopyMatchesPrimary()
            }
            // Files compaction dropped are gone from the copy as from the primary.
            let primaryFiles = Set(try FileManager.default.contentsOfDirectory(atPath: store.primary.path))
            let copyFiles = Set(try store.copyFiles().keys)
            #expect(copyFiles.isSubset(of: primaryFiles), "\(copyFiles.subtracting(primaryFiles))")
            await follower.close()
        }

        @Test func aRestartedFollowerResumesWithoutDownloadingWhatItHas() async throws {
            let store = try await FollowedStore("restart", segmentSizeLimit: 8 << 20)
            defer { store.remove() }
            for round in 0..<20 {
                let epoch = try store.journal.beginEpoch()
                var random = SystemRandomNumberGenerator()
                try epoch.put(
                    RestorationPath("Main", "Blob-\(round)"),
                    (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &random) })
                try epoch.commit()
            }
            try await store.shipper.shipOnce()
            let first = store.follower()
            let initial = try await first.followOnce()
            #expect(initial.bytesFetched > 20 * 20_000)
            await first.close()

            try commit(store.journal, count: 2, marker: "after")
            try await store.shipper.shipOnce()
            let second = store.follower()
            let resumed = try await second.followOnce()
            #expect(resumed.applied)
            // Only the bytes beyond what the copy held were fetched: the two small commits.
            #expect(resumed.bytesFetched > 0)
            #expect(resumed.bytesFetched < 4_000, "fetched \(resumed.bytesFetched) bytes")
            try store.expectCopyMatchesPrimary()
            await second.close()
        }

        @Test func aRestartedFollowerRewritesALocalFileThatDiffersFromTheReplica() async throws {
            let store = try await FollowedStore("differs", segmentSizeLimit: 8 << 20)
            defer { store.remove() }
            try commit(store.journal, count: 10)
            try await store.shipper.shipOnce()
            let first = store.follower()
            try await first.followOnce()
            await first.close()
            // A byte of the copy's live segment changes (as a re-shipped segment's would).
            let segment = try #require(
                try store.copyFiles().keys.filter { $0.hasSuffix(".sjl") }.sorted().last)
            let url = store.copy.appendingPathComponent(segment)
            var bytes = Array(try Data(contentsOf: url))
            bytes[bytes.count / 2] ^= 0x5A
            try Data(bytes).write(to: url)

            try commit(store.journal, count: 2)
            try await store.shipper.shipOnce()
            let second = store.follower()
            let report = try await second.followOnce()
            #expect(report.applied)
            try store.expectCopyMatchesPrimary()
            await second.close()
        }

        @Test func aFollowerInSteadyStateAsksForTheNextGenerationAndNeverLists() async throws {
            let store = try await FollowedStore("steady")
            defer { store.remove() }
            try commit(store.journal, count: 3)
            try await store.shipper.shipOnce()
            let follower = store.follower()
            let first = try await follower.followOnce()
            #expect(first.listed)
            let listsAfterStart = follower.listRequestsSent
            for round in 0..<10 {
                try commit(store.journal, count: 2, marker: "steady \(round)")
                try await store.shipper.shipOnce()
                let report = try await follower.followOnce()
                #expect(report.applied && !report.listed)
                let idle = try await follower.followOnce()
                #expect(!idle.applied && !idle.listed)
            }
            #expect(follower.listRequestsSent == listsAfterStart)
            try store.expectCopyMatchesPrimary()
            await follower.close()
        }

        @Test func aFollowerAwayPastRetentionRecoversByListingOnce() async throws {
            var shipping = ReplicationOptions(retention: .zero, retentionCheckInterval: .zero)
            shipping.coveredGenerationsKept = .zero
            let store = try await FollowedStore("away", shipping: shipping)
            defer { store.remove() }
            try commit(store.journal, count: 3)
            try await store.shipper.shipOnce()
            let follower = store.follower(ReplicaFollower.Options(absenceBeforeListing: .milliseconds(300)))
            let first = try await follower.followOnce()
            let held = try #require(first.generation)
            // While the follower is away, the shipper writes generations and retention deletes the
            // ones the follower would ask for next.
            for round in 0..<4 {
                try commit(store.journal, count: 2, marker: "away \(round)")
                try await store.shipper.shipOnce()
            }
            let numbers = try await Replica(client: store.gateway.client(), location: store.location, keyring: nil)
                .generationNumbers()
            #expect(!numbers.contains(held + 1), "\(numbers)")
            try await Task.sleep(for: .milliseconds(400))
            let lists = follower.listRequestsSent
            let report = try await follower.followOnce()
            #expect(report.listed && report.applied)
            #expect(report.generation == numbers.last)
            #expect(follower.listRequestsSent == lists + 1)
            try store.expectCopyMatchesPrimary()
            await follower.close()
        }

        @Test func aFollowerListsWhenTheNextGenerationStaysMissing() async throws {
            var shipping = ReplicationOptions(retention: .zero, retentionCheckInterval: .zero)
            shipping.coveredGenerationsKept = .zero
            let store = try await FollowedStore("quiet", shipping: shipping)
            defer { store.remove() }
            try commit(store.journal, count: 3)
            try await store.shipper.shipOnce()
            let follower = store.follower(ReplicaFollower.Options(quietBeforeListing: .milliseconds(200)))
            try await follower.followOnce()
            for round in 0..<3 {
                try commit(store.journal, count: 2, marker: "quiet \(round)")
                try await store.shipper.shipOnce()
            }
            // Polled often, but the next generation is gone: a miss, then a listing once it lasts.
            let miss = try await follower.followOnce()
            #expect(!miss.applied && !miss.listed)
            try await Task.sleep(for: .milliseconds(300))
            let report = try await follower.followOnce()
            #expect(report.listed && report.applied)
            try store.expectCopyMatchesPrimary()
            await follower.close()
        }

        @Test func aForgedGenerationIsNotAppliedAndLeavesTheCopyAsItWas() async throws {
            let store = try await FollowedStore("forged", segmentSizeLimit: 1 << 20)
            defer { store.remove() }
            try commit(store.journal, count: 5)
            try await store.shipper.shipOnce()
            let logs = CapturedLogs()
            let follower = store.follower(ReplicaFollower.Options(logger: logs.logger))
            let first = try await follower.followOnce()
            let held = try #require(first.generation)
            let before = try store.copyFiles()
            let stateBefore = try JournalReader(at: store.copy).state().entries

            // Someone who can write the bucket adds generation k+1: the live segment goes on with
            // bytes that are no records, in an object whose SHA-256 the forged generation states.
            let storeID = try JournalReader(at: store.primary).fileSet().storeID
            let replica = Replica(client: store.gateway.client(), location: store.location, keyring: nil)
                .bound(to: storeID)
            var forged = try #require(try await replica.generation(held, of: storeID))
            forged.generation = held + 1
            forged.lastEpoch = (forged.lastEpoch ?? 0) + 1
            let index = try #require(forged.files.lastIndex { !$0.sealed })
            var file = forged.files[index]
            let junk = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let hash = ReplicaLayout.sha256Hex(junk)
            let key = ReplicaLayout.piece(
                sequence: file.sequence, start: file.length, end: file.length + 300, sha256: hash)
            try await replica.put(key, payload: junk, createOnly: false)
            file.objects.append(
                ReplicaGeneration.Object(key: key, start: file.length, end: file.length + 300, sha256: hash, level: 0))
            file.length += 300
            forged.files[index] = file
            try await replica.put(
                ReplicaLayout.generation(held + 1), payload: try GenerationContainer.seal(forged, inline: []),
                createOnly: false)

            await #expect {
                try await follower.followOnce()
            } throws: { error in
                (error as? ReplicationError)?.code == .damagedObject
            }
            #expect(try store.copyFiles() == before)
            #expect(try JournalReader(at: store.copy).state().entries == stateBefore)

            // A damaged object (bytes that are not what the generation recorded) is refused too.
            forged.generation = held + 2
            file.objects[file.objects.count - 1].sha256 = String(repeating: "0", count: 64)
            file.objects[file.objects.count - 1].key = ReplicaLayout.piece(
                sequence: file.sequence, start: file.length - 300, end: file.length,
                sha256: String(repeating: "0", count: 64))
            try await replica.put(file.objects.last!.key, payload: junk, createOnly: false)
            forged.files[index] = file
            try await replica.put(
                ReplicaLayout.generation(held + 2), payload: try GenerationContainer.seal(forged, inline: []),
                createOnly: false)
            // The follower lists after the forged generation, finds the damaged one, passes over it
            // (with a warning) and applies nothing.
            let passedOver = try await follower.followOnce()
            #expect(passedOver.listed && !passedOver.applied && passedOver.generation == held)
            #expect(!logs.entries(.warning, containing: "generation \(held + 2)").isEmpty)
            #expect(try store.copyFiles() == before)

            // The shipper goes on above them; the follower follows it, passing over the forgeries.
            try commit(store.journal, count: 2)
            var shipped = try await store.shipper.shipOnce()
            for _ in 0..<3 where !shipped.wroteGeneration { shipped = try await store.shipper.shipOnce() }
            #expect(shipped.generation == held + 3)
            let report = try await follower.followOnce()
            #expect(report.applied && report.generation == held + 3 && !report.listed)
            try store.expectCopyMatchesPrimary()
            await follower.close()
        }

        @Test func aRunningFollowerOfAnEncryptedReplicaKeepsUpAndStopsCleanlyWhenCancelled() async throws {
            let keyring = ReplicationKeyring(
                current: try ReplicationKey(id: "k1", bytes: [UInt8](repeating: 9, count: 32)))
            let store = try await FollowedStore("running", shipping: ReplicationOptions(keyring: keyring))
            defer { store.remove() }
            try commit(store.journal, count: 4)
            try await store.shipper.shipOnce()
            // Without the key, the follower is refused before it touches the directory.
            await #expect {
                try await store.follower().followOnce()
            } throws: { error in
                (error as? ReplicationError)?.code == .missingKey
            }
            let logs = CapturedLogs()
            let follower = store.follower(
                ReplicaFollower.Options(pollInterval: .milliseconds(50), keyring: keyring, logger: logs.logger))
            let running = Task { try await follower.run() }
            for round in 0..<5 {
                try commit(store.journal, count: 3, marker: "running \(round)")
                try await store.shipper.shipOnce()
            }
            let last = try store.journal.history().last!.epoch
            var reached: UInt64?
            // The copy shows the last epoch while its generation is still being applied (the live
            // segment grows before the checks and the manifest), and run() logs the generation once
            // applied: the log line of that generation is waited for before the cancellation, which
            // would otherwise abandon the apply and leave the copy at the generation before.
            func logged() -> Bool { !logs.entries(.info, containing: "through epoch \(last)").isEmpty }
            for _ in 0..<600 where reached != last || !logged() {
                try await Task.sleep(for: .milliseconds(50))
                reached = try? JournalReader(at: store.copy).state().epoch?.epoch
            }
            #expect(reached == last)
            #expect(logged())
            running.cancel()
            try await running.value
            try store.expectCopyMatchesPrimary()
            // Cancelled, the follower let go of the writer lock.
            try Journal.open(at: store.copy).close()
        }

        @Test func aFollowerOfAReplicaWithNoEpochYetWaitsForOne() async throws {
            let store = try await FollowedStore("empty")
            defer { store.remove() }
            try await store.shipper.shipOnce()
            let follower = store.follower()
            await #expect {
                try await follower.followOnce()
            } throws: { error in
                (error as? ReplicationError)?.code == .nothingShipped
                    && ReplicaFollower.isRetried(error as! ReplicationError)
            }
            try commit(store.journal, count: 2)
            try await store.shipper.shipOnce()
            let report = try await follower.followOnce()
            #expect(report.applied)
            try store.expectCopyMatchesPrimary()
            await follower.close()
        }

        @Test func aDirectoryHoldingAnotherStoreIsRefused() async throws {
            let store = try await FollowedStore("other")
            defer { store.remove() }
            try commit(store.journal, count: 3)
            try await store.shipper.shipOnce()
            let other = try Journal.open(at: store.copy)
            try commit(other, count: 2)
            try other.close()
            let before = try store.copyFiles()
            await #expect {
                try await store.follower().followOnce()
            } throws: { error in
                (error as? ReplicationError)?.code == .otherStore
            }
            #expect(try store.copyFiles() == before)
            // The other store opens for writing again: the refused follower let go of its lock.
            try Journal.open(at: store.copy).close()
        }
    }
}

extension GatewayTests {
    /// A follower started on a directory whose store went its own way.
    @Suite struct FollowerDivergenceTests {
        /// Follows the replica once into the copy, then lets the copy go its own way: it is opened
        /// for writing (as a fenced primary's store, or a copy someone wrote to) and commits `count`
        /// epochs the replica does not have.
        private static func divergeCopy(_ store: FollowedStore, count: Int) async throws -> [UInt64] {
            let follower = store.follower()
            try await follower.followOnce()
            await follower.close()
            let writer = try Journal.open(at: store.copy)
            let epochs = try commit(writer, count: count, marker: "diverged")
            try writer.close()
            return epochs
        }

        @Test func aFollowerRefusesACopyHoldingEpochsTheReplicaDoesNotHaveAndLeavesItAsItWas() async throws {
            let store = try await FollowedStore("diverged-ahead", segmentSizeLimit: 8 << 20)
            defer { store.remove() }
            try commit(store.journal, count: 5)
            try await store.shipper.shipOnce()
            let local = try await Self.divergeCopy(store, count: 3)
            let before = try store.copyFiles()
            await #expect {
                try await store.follower().followOnce()
            } throws: { error in
                guard let error = error as? ReplicationError else { return false }
                return error.code == .diverged && error.message.contains("\(local.first!)…\(local.last!)")
                    && error.message.contains("--set-aside-diverged")
            }
            #expect(try store.copyFiles() == before)
            #expect(try JournalReader(at: store.copy).state().epoch?.epoch == local.last)
            // Refused, the follower let go of the writer lock.
            try Journal.open(at: store.copy).close()
        }

        @Test func aFollowerRefusesACopyWhoseEpochsContradictTheReplicasAtTheSameNumbers() async throws {
            let store = try await FollowedStore("diverged-contradicts", segmentSizeLimit: 8 << 20)
            defer { store.remove() }
            try commit(store.journal, count: 5)
            try await store.shipper.shipOnce()
            let local = try await Self.divergeCopy(store, count: 2)
            // The primary commits the same epoch numbers (and more) with other contents, and ships them.
            let shipped = try commit(store.journal, count: 4, marker: "primary")
            #expect(shipped.first == local.first)
            try await store.shipper.shipOnce()
            let before = try store.copyFiles()
            await #expect {
                try await store.follower().followOnce()
            } throws: { error in
                (error as? ReplicationError)?.code == .diverged
            }
            #expect(try store.copyFiles() == before)
        }

        @Test func aFollowerAskedToSetADivergedCopyAsideMovesItBesideAndFollowsIntoAFreshDirectory() async throws {
            let store = try await FollowedStore("diverged-aside", segmentSizeLimit: 8 << 20)
            defer { store.remove() }
            try commit(store.journal, count: 5)
            try await store.shipper.shipOnce()
            let local = try await Self.divergeCopy(store, count: 3)
            let before = try store.copyFiles()
            let parent = store.copy.deletingLastPathComponent()
            var options = ReplicaFollower.Options()
            options.setsAsideDivergedStore = true
            let follower = store.follower(options)
            let report = try await follower.followOnce()
            #expect(report.applied)
            try store.expectCopyMatchesPrimary()
            let asides = try FileManager.default.contentsOfDirectory(atPath: parent.path)
                .filter { $0.hasPrefix("copy.diverged-\(local.last!)-") }
            #expect(asides.count == 1, "\(asides)")
            let aside = parent.appendingPathComponent(try #require(asides.first))
            var moved: [String: [UInt8]] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: aside.path) where name != "LOCK" {
                moved[name] = Array(try Data(contentsOf: aside.appendingPathComponent(name)))
            }
            #expect(moved == before)
            #expect(try JournalReader(at: aside).state().epoch?.epoch == local.last)
            await follower.close()

            // Set aside again (the copy diverges a second time): a second name, the first kept.
            _ = try await Self.divergeCopy(store, count: 3)
            let again = store.follower(options)
            try await again.followOnce()
            await again.close()
            let second = try FileManager.default.contentsOfDirectory(atPath: parent.path)
                .filter { $0.hasPrefix("copy.diverged-") }
            #expect(second.count == 2, "\(second)")
            #expect(second.contains(aside.lastPathComponent))
        }

        @Test func aFollowerRestartedOnItsOwnUpToDateCopyIsNotRefused() async throws {
            let store = try await FollowedStore("restart-own", segmentSizeLimit: 4096)
            defer { store.remove() }
            try commit(store.journal, count: 30)
            try await store.shipper.shipOnce()
            let first = store.follower()
            try await first.followOnce()
            await first.close()
            // Restarted with nothing new in the replica: nothing is fetched, nothing refused.
            let idle = store.follower()
            let report = try await idle.followOnce()
            #expect(report.bytesFetched == 0)
            try store.expectCopyMatchesPrimary()
            await idle.close()
            // Restarted after the primary went on, compacted and rolled segments: it catches up.
            try commit(store.journal, count: 30, marker: "later")
            _ = try store.journal.compact()
            try commit(store.journal, count: 3, marker: "after compaction")
            try await store.shipper.shipOnce()
            let later = store.follower()
            let caughtUp = try await later.followOnce()
            #expect(caughtUp.applied)
            try store.expectCopyMatchesPrimary()
            await later.close()
        }
    }
}

extension GatewayTests {
    /// A follower that stopped in the middle of an apply, as a crash stops it.
    @Suite struct FollowerCrashTests {
        @Test(arguments: [
            FollowerApply.Step.fetched, .checked, .published(1), .manifestReplaced,
        ])
        func aFollowerStartedAfterACrashInAnApplyRecoversAConsistentCopyWithNoLeftovers(
            at step: FollowerApply.Step
        ) async throws {
            let store = try await FollowedStore("crash")
            defer { store.remove() }
            try commit(store.journal, count: 40)
            try await store.shipper.shipOnce()
            let first = store.follower()
            try await first.followOnce()
            await first.close()
            // The next generation brings a checkpoint, new segments and a longer live segment, and
            // no longer names the segments the checkpoint covers.
            try commit(store.journal, count: 30, marker: "before compaction")
            _ = try store.journal.compact()
            try commit(store.journal, count: 3, marker: "after compaction")
            try await store.shipper.shipOnce()

            let crashing = store.follower()
            await crashing.interruptApplies { $0 == step }
            await #expect(throws: FollowerApply.Interrupted.self) { try await crashing.followOnce() }
            // The process is gone: its lock with it.
            await crashing.close()

            // Started again with the replica as it was, and again after the primary went on.
            let restarted = store.follower()
            try await restarted.followOnce()
            try store.expectCopyMatchesPrimary()
            try expectNoLeftovers(in: store.copy)
            await restarted.close()
            try commit(store.journal, count: 2, marker: "later")
            try await store.shipper.shipOnce()
            let later = store.follower()
            try await later.followOnce()
            try store.expectCopyMatchesPrimary()
            try expectNoLeftovers(in: store.copy)
            await later.close()
        }

        /// Expects the directory to hold the files its manifest names, the manifest and the lock.
        private func expectNoLeftovers(in copy: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let named = Set(try JournalReader(at: copy).fileSet().files.map(\.name))
            let present = Set(try FileManager.default.contentsOfDirectory(atPath: copy.path))
            #expect(
                present.subtracting(named).subtracting(["MANIFEST", "LOCK"]).isEmpty,
                "\(present.subtracting(named).sorted())", sourceLocation: sourceLocation)
        }
    }
}
