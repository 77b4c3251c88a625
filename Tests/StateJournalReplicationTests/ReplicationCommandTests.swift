import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `statejournal` to completion; returns its status and output.
func runTool(_ arguments: [String], environment: [String: String]) async throws -> (
    status: Int32?, output: String, error: String
) {
    let logs = try temporaryDirectory("tool")
    defer { try? FileManager.default.removeItem(at: logs) }
    let process = try startTool(arguments, environment: environment, logs: logs, name: "run")
    let status = await waitForExit(process, timeout: .seconds(600))
    let output = (try? String(contentsOf: logs.appendingPathComponent("run.out"), encoding: .utf8)) ?? ""
    let error = (try? String(contentsOf: logs.appendingPathComponent("run.err"), encoding: .utf8)) ?? ""
    return (status, output, error)
}

extension GatewayTests {
    /// `statejournal replicate` and `statejournal restore` as a user runs them.
    @Suite struct ReplicationCommandTests {
        @Test func replicateShipsUntilSIGTERMAndRestoreBringsTheStoreBackVerified() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let directory = try temporaryDirectory("commands")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 10)
            let shipper = try startTool(
                ["replicate", storeURL.path, "--to", "s3://\(bucket)/cli", "--interval", "0.2"],
                environment: gateway.childEnvironment, logs: directory, name: "replicate")
            try await Task.sleep(for: .milliseconds(800))
            try commit(journal, count: 5)
            kill(shipper.processIdentifier, SIGTERM)
            #expect(await waitForExit(shipper) == 0)
            let log = try String(contentsOf: directory.appendingPathComponent("replicate.err"), encoding: .utf8)
            #expect(log.contains("shipped generation"))
            #expect(!log.contains(gateway.credentials.secretAccessKey))

            let restored = directory.appendingPathComponent("restored")
            let result = try await runTool(
                ["restore", "s3://\(bucket)/cli", "--into", restored.path, "--json"],
                environment: gateway.childEnvironment)
            #expect(result.status == 0, "\(result.error)")
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
            #expect(json["verified"] as? String == "clean")
            let epoch = try #require((json["epoch"] as? [String: Any])?["epoch"] as? Int)
            #expect(try UInt64(epoch) == journal.history().last!.epoch)

            let atEpoch = try await runTool(
                [
                    "restore", "s3://\(bucket)/cli", "--into", directory.appendingPathComponent("e3").path, "--epoch",
                    "3",
                ],
                environment: gateway.childEnvironment)
            #expect(atEpoch.status == 0)
            #expect(atEpoch.output.contains("epoch 3 ("))
            try journal.close()
        }

        @Test func restoreWithDeltaOverACopyOfTheSameStoreFetchesOnlyWhatChangedAndSaysWhatItReused() async throws {
            let gateway = try Gateway.required()
            let bucket = try await gateway.freshBucket()
            let directory = try temporaryDirectory("command-delta")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            let shipper = ReplicationShipper(
                store: storeURL, to: S3Location(bucket: bucket, prefix: "cli"), configuration: gateway.configuration())
            try commit(journal, count: 10)
            try await shipper.shipOnce()
            let restored = directory.appendingPathComponent("restored")
            let first = try await runTool(
                ["restore", "s3://\(bucket)/cli", "--into", restored.path], environment: gateway.childEnvironment)
            #expect(first.status == 0, "\(first.error)")

            let refused = try await runTool(
                ["restore", "s3://\(bucket)/cli", "--into", restored.path], environment: gateway.childEnvironment)
            #expect(refused.status == 73, "without --delta a store is not overwritten")

            let again = try await runTool(
                ["restore", "s3://\(bucket)/cli", "--into", restored.path, "--delta", "--json"],
                environment: gateway.childEnvironment)
            #expect(again.status == 0, "\(again.error)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(again.output.utf8)) as? [String: Any])
            #expect(json["objectsDownloaded"] as? Int == 0)
            #expect((json["objectsReused"] as? Int ?? 0) > 0)
            #expect((json["bytesReused"] as? Int ?? 0) > 0)

            try commit(journal, count: 2)
            try await shipper.shipOnce()
            let text = try await runTool(
                ["restore", "s3://\(bucket)/cli", "--into", restored.path, "--delta"],
                environment: gateway.childEnvironment)
            #expect(text.status == 0, "\(text.error)")
            #expect(text.output.contains("bytes fetched, "), "\(text.output)")
            #expect(text.output.contains("reused from the local copy"), "\(text.output)")
            #expect(try JournalReader(at: restored).state().entries == journal.state().entries)
            try journal.close()
        }

        @Test func badCredentialsAMissingBucketAnEndpointThatIsNotS3AndAForeignPrefixAreOneSentenceEach() async throws {
            let gateway = try Gateway.required()
            let client = gateway.client()
            let bucket = try await gateway.freshBucket(client)
            try await client.put(bucket: bucket, key: "music/song.mp3", body: [1, 2, 3])
            let directory = try temporaryDirectory("command-errors")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeURL = directory.appendingPathComponent("store")
            let journal = try Journal.open(at: storeURL)
            try commit(journal, count: 2)

            var badKeys = gateway.childEnvironment
            badKeys["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-0000000000000000000000000"
            let denied = try await runTool(
                ["restore", "s3://\(bucket)/x", "--into", directory.appendingPathComponent("a").path],
                environment: badKeys)
            #expect(denied.status == 77)  // EX_NOPERM
            #expect(denied.error.contains("refused"))
            #expect(!denied.error.contains("not-the-secret"))

            let missing = try await runTool(
                ["replicate", storeURL.path, "--to", "s3://sj-missing-\(UUID().uuidString.prefix(8).lowercased())/x"],
                environment: gateway.childEnvironment)
            #expect(missing.status == 66)  // EX_NOINPUT
            #expect(missing.error.contains("does not exist"))

            let server = try PlainHTTPServer()
            defer { server.stop() }
            let notS3 = try await runTool(
                [
                    "restore", "s3://\(bucket)/x", "--into", directory.appendingPathComponent("b").path, "--endpoint",
                    "http://127.0.0.1:\(server.port)",
                ], environment: gateway.childEnvironment)
            #expect(notS3.status == 74)  // EX_IOERR
            #expect(notS3.error.contains("does not look like an S3 server"))

            let foreign = try await runTool(
                ["replicate", storeURL.path, "--to", "s3://\(bucket)/music"], environment: gateway.childEnvironment)
            #expect(foreign.status == 65)  // EX_DATAERR
            #expect(foreign.error.contains("not a StateJournal replica"))
            for result in [denied, notS3] {
                #expect(result.error.hasPrefix("statejournal: ") && result.error.split(separator: "\n").count == 1)
            }
            // replicate logs as it starts; its error is the last line.
            for result in [missing, foreign] {
                #expect(result.error.split(separator: "\n").last?.hasPrefix("statejournal: ") == true)
            }
            try journal.close()
        }
    }
}
