import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

@testable import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif

extension GatewayTests {
    /// A primary host that dies while its app commits as fast as it can, and the standby that takes
    /// over, as two hosts run them: `soak` for the app and `replicate` on the primary, `follow
    /// --failover` on the standby, each a process of the command-line tool.
    @Suite struct FailoverUnderLoadTests {
        /// The epochs a `soak` writer printed as acknowledged ("committed E").
        static func acknowledged(_ output: URL) -> [UInt64] {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line in
                line.hasPrefix("committed ") ? UInt64(line.dropFirst("committed ".count)) : nil
            }
        }

        @Test func aPrimaryKilledUnderLoadIsTakenOverAndTheReplicaHoldsOneGaplessHistoryAcrossTheTerms()
            async throws
        {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let location = S3Location(bucket: bucket, prefix: "loaded")
            let replica = "s3://\(bucket)/loaded"
            let directory = try temporaryDirectory("failover-under-load")
            defer { try? FileManager.default.removeItem(at: directory) }
            let primaryURL = directory.appendingPathComponent("primary")
            let standbyURL = directory.appendingPathComponent("standby")
            let environment = gateway.childEnvironment

            // The primary host: the app, committing continuously, and its shipper.
            let started = ContinuousClock.now
            let writer = try startTool(
                ["soak", primaryURL.path, "--seconds", "600", "--objects", "12"], environment: environment,
                logs: directory, name: "primary-writer")
            defer { kill(writer.processIdentifier, SIGKILL) }
            try await eventually("the primary's app committed") {
                !Self.acknowledged(directory.appendingPathComponent("primary-writer.out")).isEmpty
            }
            // The standby host starts first, as two hosts started together may: it stands by until the
            // primary has shipped.
            let standby = try startTool(
                ["follow", replica, "--into", standbyURL.path, "--failover", "--lease-seconds", "2"],
                environment: environment, logs: directory, name: "standby")
            defer { kill(standby.processIdentifier, SIGKILL) }
            let standbyLog = directory.appendingPathComponent("standby.err")
            try await eventually("the standby waits for the primary's first generation") {
                ((try? String(contentsOf: standbyLog, encoding: .utf8)) ?? "").contains("Standing by until its primary")
            }
            #expect(standby.isRunning)
            let shipper = try startTool(
                ["replicate", primaryURL.path, "--to", replica, "--lease-seconds", "2"], environment: environment,
                logs: directory, name: "primary")
            defer { kill(shipper.processIdentifier, SIGKILL) }
            try await eventually("the primary shipped three generations under load") {
                try await storedGenerations(location, gateway: gateway).filter { $0.term == 1 }.count >= 3
            }

            // The primary host dies: its app and its shipper at once.
            kill(writer.processIdentifier, SIGKILL)
            kill(shipper.processIdentifier, SIGKILL)
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            _ = await waitForExit(writer)
            _ = await waitForExit(shipper)
            let acknowledged = Self.acknowledged(directory.appendingPathComponent("primary-writer.out"))
            try await eventually(timeout: .seconds(600), "the standby says it is the primary") {
                ((try? String(contentsOf: standbyLog, encoding: .utf8)) ?? "").contains("is the primary of")
            }

            // The app starts on the standby once it can open the store, and commits.
            var attempts = 0
            var standbyCommits: [UInt64] = []
            while standbyCommits.isEmpty && attempts < 100 {
                attempts += 1
                let app = try startTool(
                    ["soak", standbyURL.path, "--seconds", "1", "--objects", "12"], environment: environment,
                    logs: directory, name: "standby-writer-\(attempts)")
                let status = await waitForExit(app)
                standbyCommits = Self.acknowledged(directory.appendingPathComponent("standby-writer-\(attempts).out"))
                if status == 75 { try await Task.sleep(for: .milliseconds(100)) }
            }
            let lastOnStandby = try #require(standbyCommits.last, "the app committed on the promoted host")
            try await eventually(timeout: .seconds(600), "the standby shipped its app's commits") {
                try await storedGenerations(location, gateway: gateway).last?.lastEpoch == lastOnStandby
            }
            kill(standby.processIdentifier, SIGTERM)
            #expect(await waitForExit(standby) == 0)

            let generations = try await storedGenerations(location, gateway: gateway)
            let shippedInTermOne = try #require(generations.filter { $0.term == 1 }.compactMap(\.lastEpoch).max())
            #expect(generations.last?.terms?.map(\.term) == [1, 2])
            // What the primary acknowledged after its last shipped epoch is the loss window.
            let lost = acknowledged.filter { $0 > shippedInTermOne }.count
            print(
                "failover under load: the primary's app acknowledged \(acknowledged.count) epochs in \(Int(seconds)) s (\(Int(Double(acknowledged.count) / seconds)) a second), the last \(acknowledged.last ?? 0); term 1 shipped through \(shippedInTermOne), a loss window of \(lost) epochs; the promoted host committed \(standbyCommits.count) (\(attempts) starts)"
            )

            let restored = directory.appendingPathComponent("restored")
            let restore = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                .restore(into: restored)
            #expect(restore.damage.isEmpty)
            #expect(restore.epoch.epoch == lastOnStandby)
            let history = try StoreInspector(at: restored).log()
            let epochs = history.map(\.epoch)
            #expect(epochs.first.map { epochs == Array($0...max($0, lastOnStandby)) } == true, "one gapless sequence")
            // The term began just after term 1's last epoch, with its marker, which the app's first
            // commit follows. The marker is in the replica unless the app compacted it away before
            // the new term's first generation was written (a race this test does not settle).
            let atMarker = directory.appendingPathComponent("at-marker")
            do {
                _ = try await ReplicaRestorer(from: location, configuration: gateway.configuration())
                    .restore(into: atMarker, target: .epoch(shippedInTermOne + 1))
                let marker = try #require(try StoreInspector(at: atMarker).log().last)
                #expect(marker.epoch == shippedInTermOne + 1 && marker.eventMarkerKind == .replicaTermBegan)
            } catch let error as ReplicationError where error.code == .noSuchEpoch {
                #expect(error.message.contains("folded it into a checkpoint"), "\(error.message)")
            }
            #expect(standbyCommits.first == shippedInTermOne + 2)
            #expect(try JournalReader(at: restored).state().entries == JournalReader(at: standbyURL).state().entries)
        }
    }
}
