import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

/// Every file of a directory, by name, with its bytes.
func directoryContents(_ url: URL) throws -> [String: [UInt8]] {
    var result: [String: [UInt8]] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
        result[name] = Array(try Data(contentsOf: url.appendingPathComponent(name)))
    }
    return result
}

/// A store shipped to a fresh bucket of the gateway, for the delta restore tests.
struct DeltaFixture {
    let gateway: Gateway
    let location: S3Location
    let directory: URL
    let storeURL: URL
    let journal: Journal
    let shipper: ReplicationShipper

    /// Commits `commits` epochs into a store of small segments that is never compacted (many
    /// objects) and ships it.
    static func shipped(_ label: String, commits: Int, segmentSizeLimit: Int = 4096) async throws -> DeltaFixture {
        let gateway = try Gateway.required()
        let location = S3Location(bucket: try await gateway.freshBucket(), prefix: label)
        let directory = try temporaryDirectory("delta")
        let storeURL = directory.appendingPathComponent("store")
        var options = JournalOptions(durability: .everyCommit, segmentSizeLimit: segmentSizeLimit)
        options.compaction = .manual
        let journal = try Journal.open(at: storeURL, options: options)
        let shipper = ReplicationShipper(
            store: storeURL, to: location, configuration: gateway.configuration(), options: .separateObjects())
        try commit(journal, count: commits)
        try await shipper.shipOnce()
        return DeltaFixture(
            gateway: gateway, location: location, directory: directory, storeURL: storeURL, journal: journal,
            shipper: shipper)
    }

    /// A restorer with a client of its own, whose request counts start at zero.
    func restorer() -> ReplicaRestorer { ReplicaRestorer(from: location, configuration: gateway.configuration()) }

    /// Commits `count` more epochs and ships them.
    func shipMore(_ count: Int) async throws {
        try commit(journal, count: count, marker: "more")
        try await shipper.shipOnce()
    }

    /// What a restore into a new directory writes now, and its report.
    func fullRestore(_ name: String) async throws -> (files: [String: [UInt8]], report: RestoreReport) {
        let url = directory.appendingPathComponent(name)
        let report = try await restorer().restore(into: url)
        return (try directoryContents(url), report)
    }

    /// The keys of the objects of the newest generation, and of the one before it.
    func newestObjectKeys() async throws -> (newest: [String], before: Set<String>) {
        let restorer = restorer()
        let identity = try #require(try await restorer.replica.identity())
        let bound = restorer.replica.bound(to: identity)
        let numbers = try await bound.generationNumbers()
        let newest = try #require(try await bound.generation(numbers[numbers.count - 1], of: identity.storeID))
        let before = try #require(try await bound.generation(numbers[numbers.count - 2], of: identity.storeID))
        return (newest.files.flatMap(\.objects).map(\.key), Set(before.files.flatMap(\.objects).map(\.key)))
    }

    func remove() {
        try? journal.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

extension GatewayTests {
    /// Restoring over an older copy of the same store: only what it lacks is fetched.
    @Suite struct DeltaRestoreTests {
        @Test
        func aDeltaRestoreAfterOnePercentOfTheStateChangedFetchesOnlyTheChangedObjectsAndWritesWhatAFullRestoreWrites()
            async throws
        {
            let fixture = try await DeltaFixture.shipped("one-percent", commits: 2000)
            defer { fixture.remove() }
            let target = fixture.directory.appendingPathComponent("copy")
            _ = try await fixture.restorer().restore(into: target)
            try await fixture.shipMore(20)
            let full = try await fixture.fullRestore("full")
            let (newest, before) = try await fixture.newestObjectKeys()
            let changed = newest.filter { !before.contains($0) }

            let restorer = fixture.restorer()
            let report = try await restorer.restore(into: target, delta: true)
            let counts = restorer.replica.client.requestCounts

            #expect(report.objectsDownloaded == changed.count, "only the objects the new generation added")
            #expect(report.objectsReused == newest.count - changed.count)
            #expect(report.objectsDownloaded + report.objectsReused == full.report.objectsDownloaded)
            #expect(report.bytesDownloaded + report.bytesReused == full.report.bytesDownloaded)
            #expect(report.bytesDownloaded * 10 < full.report.bytesDownloaded)
            // replica.json (read again by the delta restore), the generation: nothing else is fetched.
            #expect(counts.gets <= report.objectsDownloaded + 4, "\(counts)")
            #expect(report.verification.status == .clean)
            #expect(try directoryContents(target) == full.files, "byte for byte what a full restore writes")
            let names = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path)
            #expect(!names.contains { $0.hasSuffix(".restoring") || $0.hasSuffix(".replaced") })
            print(
                "delta restore: fetched \(report.objectsDownloaded) objects, \(report.bytesDownloaded) bytes, reused \(report.objectsReused) objects, \(report.bytesReused) bytes, \(counts); full restore: \(full.report.objectsDownloaded) objects, \(full.report.bytesDownloaded) bytes"
            )
        }

        @Test func aLocalFileWithAFlippedByteIsFetchedAgainNotReused() async throws {
            let fixture = try await DeltaFixture.shipped("flipped", commits: 200)
            defer { fixture.remove() }
            let target = fixture.directory.appendingPathComponent("copy")
            _ = try await fixture.restorer().restore(into: target)
            let intact = try directoryContents(target)
            let victim = try #require(
                intact.filter { $0.key.hasPrefix("segment-") }.max { $0.value.count < $1.value.count })
            let handle = try FileHandle(forUpdating: target.appendingPathComponent(victim.key))
            try handle.seek(toOffset: UInt64(victim.value.count / 2))
            try handle.write(contentsOf: [victim.value[victim.value.count / 2] ^ 0x01])
            try handle.close()

            let report = try await fixture.restorer().restore(into: target, delta: true)

            #expect(report.objectsDownloaded == 1, "the object holding the flipped byte, and no other")
            #expect(report.objectsReused > 0)
            #expect(try directoryContents(target) == intact)
        }

        @Test func aCancelledDeltaRestoreResumesAfterTheBucketMovedOnAndTheSecondRunFetchesLess() async throws {
            let fixture = try await DeltaFixture.shipped("resume", commits: 1000, segmentSizeLimit: 2048)
            defer { fixture.remove() }
            let target = fixture.directory.appendingPathComponent("copy")
            let staging = fixture.directory.appendingPathComponent("copy.restoring")
            try await withFaultProxy(upstream: fixture.gateway.endpoint) { proxy in
                let restorer = ReplicaRestorer(
                    from: fixture.location, configuration: proxy.configuration(for: fixture.gateway))
                let first = Task { try await restorer.restore(into: target, delta: true) }
                // Midway: the network goes silent and the task is cancelled. A restore fetches at
                // most 8 objects ahead of the one it writes, so by the 16th request 8 are written.
                // Polled often, so that the restore is stopped midway; a hang guard of 10 minutes.
                let deadline = ContinuousClock.now + .seconds(600)
                while try await proxy.counts().count(method: "GET", path: "*/segments/*") < 16 {
                    guard ContinuousClock.now < deadline else {
                        Issue.record("the restore never requested 16 segments")
                        break
                    }
                    try await Task.sleep(for: .milliseconds(1))
                }
                try await proxy.set(.blackhole)
                first.cancel()
                let result = await first.result
                #expect(throws: ReplicationError.self) { try result.get() }
                #expect((try? result.get()) == nil, "the first run was stopped before it finished")
            }
            #expect(!FileManager.default.fileExists(atPath: target.path), "nothing is put in place")
            #expect(FileManager.default.fileExists(atPath: staging.path), "what was fetched is kept")

            try await fixture.shipMore(5)
            let full = try await fixture.fullRestore("full")
            let report = try await fixture.restorer().restore(into: target, delta: true)

            #expect(report.objectsReused >= 8, "what the first run wrote, fetched again only where the bucket moved on")
            #expect(report.objectsDownloaded < full.report.objectsDownloaded)
            #expect(report.objectsDownloaded + report.objectsReused == full.report.objectsDownloaded)
            #expect(try directoryContents(target) == full.files)
            #expect(!FileManager.default.fileExists(atPath: staging.path))
        }

        @Test func aDeltaRestoreKilledMidwayResumesWhenTheCommandIsRunAgain() async throws {
            let fixture = try await DeltaFixture.shipped("killed", commits: 1000, segmentSizeLimit: 2048)
            defer { fixture.remove() }
            let target = fixture.directory.appendingPathComponent("copy")
            let staging = fixture.directory.appendingPathComponent("copy.restoring")
            let replica = "s3://\(fixture.location.bucket)/\(fixture.location.prefix)"
            try await withFaultProxy(upstream: fixture.gateway.endpoint) { proxy in
                var environment = fixture.gateway.childEnvironment
                environment["AWS_ENDPOINT_URL"] = proxy.endpoint.absoluteString
                let first = try startTool(
                    ["restore", replica, "--into", target.path, "--delta"], environment: environment,
                    logs: fixture.directory, name: "first")
                // Polled often, so that the restore is stopped midway; a hang guard of 10 minutes.
                let deadline = ContinuousClock.now + .seconds(600)
                while try await proxy.counts().count(method: "GET", path: "*/segments/*") < 16 {
                    guard ContinuousClock.now < deadline else {
                        Issue.record("the restore never requested 16 segments")
                        break
                    }
                    try await Task.sleep(for: .milliseconds(1))
                }
                // As above: by the 16th request, 8 objects are written.
                try await proxy.set(.blackhole)
                try await Task.sleep(for: .milliseconds(200))
                kill(first.processIdentifier, SIGKILL)
                _ = await waitForExit(first)
                #expect(first.terminationReason == .uncaughtSignal, "the first run was killed before it finished")
            }
            #expect(!FileManager.default.fileExists(atPath: target.path))
            #expect(FileManager.default.fileExists(atPath: staging.path))

            let full = try await fixture.fullRestore("full")
            let again = try await runTool(
                ["restore", replica, "--into", target.path, "--delta", "--json"],
                environment: fixture.gateway.childEnvironment)
            #expect(again.status == 0, "\(again.error)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(again.output.utf8)) as? [String: Any])
            let fetched = try #require(json["objectsDownloaded"] as? Int)
            let reused = try #require(json["objectsReused"] as? Int)
            #expect(reused >= 8, "what the killed run wrote is reused")
            #expect(fetched + reused == full.report.objectsDownloaded)
            #expect(try directoryContents(target) == full.files)
            #expect(!FileManager.default.fileExists(atPath: staging.path))
        }

        @Test func aFollowersCopyIsRefusedWhileTheFollowerHoldsItAndUpdatedOnceItStopped() async throws {
            let fixture = try await DeltaFixture.shipped("follower", commits: 500)
            defer { fixture.remove() }
            let target = fixture.directory.appendingPathComponent("follower")
            let follower = ReplicaFollower(
                from: fixture.location, into: target, configuration: fixture.gateway.configuration())
            try await follower.followOnce()
            try await fixture.shipMore(5)
            let before = try directoryContents(target)

            let error = await #expect(throws: ReplicationError.self) {
                try await fixture.restorer().restore(into: target, delta: true)
            }
            #expect(error?.code == .store, "\(String(describing: error))")
            #expect(try directoryContents(target) == before)

            await follower.close()
            let full = try await fixture.fullRestore("full")
            let report = try await fixture.restorer().restore(into: target, delta: true)
            #expect(report.objectsReused > 0)
            #expect(report.objectsDownloaded < full.report.objectsDownloaded)
            #expect(try directoryContents(target) == full.files)
        }

        @Test func aReplacementStoppedBetweenOrAfterItsRenamesIsFinishedByTheNextRun() async throws {
            let fixture = try await DeltaFixture.shipped("renames", commits: 300)
            defer { fixture.remove() }
            let target = fixture.directory.appendingPathComponent("copy")
            let replaced = fixture.directory.appendingPathComponent("copy.replaced")
            _ = try await fixture.restorer().restore(into: target)
            try await fixture.shipMore(5)
            let full = try await fixture.fullRestore("full")

            // Stopped between the renames: the old copy is aside and the directory missing.
            try FileManager.default.moveItem(at: target, to: replaced)
            let report = try await fixture.restorer().restore(into: target, delta: true)
            #expect(report.objectsReused > 0, "the old copy was put back and reused")
            #expect(try directoryContents(target) == full.files)
            #expect(!FileManager.default.fileExists(atPath: replaced.path))

            // Stopped after the renames: the old copy is left aside, and removed.
            try FileManager.default.copyItem(at: target, to: replaced)
            _ = try await fixture.restorer().restore(into: target, delta: true)
            #expect(!FileManager.default.fileExists(atPath: replaced.path))

            // Something else in that place is not removed.
            try FileManager.default.createDirectory(at: replaced, withIntermediateDirectories: false)
            try Data("notes".utf8).write(to: replaced.appendingPathComponent("notes.txt"))
            let error = await #expect(throws: ReplicationError.self) {
                try await fixture.restorer().restore(into: target, delta: true)
            }
            #expect(error?.code == .targetNotEmpty)
            #expect(try directoryContents(replaced) == ["notes.txt": Array("notes".utf8)])
            #expect(try directoryContents(target) == full.files)
        }

        @Test func aDirectoryHoldingAnotherStoreOrNoStoreIsRefusedAndLeftUntouched() async throws {
            let fixture = try await DeltaFixture.shipped("other", commits: 20)
            defer { fixture.remove() }
            let other = fixture.directory.appendingPathComponent("other")
            let journal = try Journal.open(at: other)
            try commit(journal, count: 3)
            try journal.close()
            let notAStore = fixture.directory.appendingPathComponent("documents")
            try FileManager.default.createDirectory(at: notAStore, withIntermediateDirectories: false)
            try Data("notes".utf8).write(to: notAStore.appendingPathComponent("notes.txt"))
            let sameStore = fixture.directory.appendingPathComponent("same")
            _ = try await fixture.restorer().restore(into: sameStore)
            // A copy of the same store whose manifest is a symbolic link (to the real one).
            let linked = fixture.directory.appendingPathComponent("linked")
            _ = try await fixture.restorer().restore(into: linked)
            let manifest = linked.appendingPathComponent("MANIFEST")
            try FileManager.default.moveItem(at: manifest, to: fixture.directory.appendingPathComponent("MANIFEST"))
            try FileManager.default.createSymbolicLink(
                at: manifest, withDestinationURL: fixture.directory.appendingPathComponent("MANIFEST"))

            for (directory, code) in [
                (other, ReplicationError.Code.otherStore), (notAStore, .targetNotEmpty), (linked, .targetNotEmpty),
            ] {
                let before = try directoryContents(directory)
                let error = await #expect(throws: ReplicationError.self) {
                    try await fixture.restorer().restore(into: directory, delta: true)
                }
                #expect(error?.code == code, "\(directory.lastPathComponent): \(String(describing: error))")
                #expect(try directoryContents(directory) == before)
                #expect(!FileManager.default.fileExists(atPath: directory.path + ".restoring"))
            }
            // Without the opt-in, a copy of the same store is refused as before.
            let before = try directoryContents(sameStore)
            let error = await #expect(throws: ReplicationError.self) {
                try await fixture.restorer().restore(into: sameStore)
            }
            #expect(error?.code == .targetNotEmpty)
            #expect(try directoryContents(sameStore) == before)

            // With it, an empty directory is filled as a full restore fills it, nothing reused.
            let empty = fixture.directory.appendingPathComponent("empty")
            try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
            let report = try await fixture.restorer().restore(into: empty, delta: true)
            #expect(report.objectsReused == 0)
            #expect(try directoryContents(empty) == before)
        }

        @Test func theOldCopySurvivesADeltaRestoreThatFailsAndTheNextRunFinishesIt() async throws {
            let fixture = try await DeltaFixture.shipped("fails", commits: 200)
            defer { fixture.remove() }
            let target = fixture.directory.appendingPathComponent("copy")
            _ = try await fixture.restorer().restore(into: target)
            let old = try directoryContents(target)
            try await fixture.shipMore(20)

            var failing = fixture.restorer()
            failing.verifier = { directory in
                var verification = StoreInspector.verifyFraming(directory)
                verification.status = .unusable
                verification.failure = "a failure injected by the test"
                return verification
            }
            let error = await #expect(throws: ReplicationError.self) {
                try await failing.restore(into: target, delta: true)
            }
            #expect(error?.code == .damagedObject)
            // The writer lock the restore held over it is the only file it may have added, empty.
            var after = try directoryContents(target)
            #expect((after.removeValue(forKey: "LOCK") ?? []) == [])
            #expect(after == old, "the old copy is as it was")

            let full = try await fixture.fullRestore("full")
            let report = try await fixture.restorer().restore(into: target, delta: true)
            // The failed run fell back to older generations (the injected failure counts as damage)
            // and left the oldest in the staging directory: what the newest adds is fetched again.
            #expect(report.objectsReused > 0)
            #expect(report.objectsDownloaded < full.report.objectsDownloaded)
            #expect(try directoryContents(target) == full.files)
        }
    }
}
