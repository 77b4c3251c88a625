import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// A generation whose files, each holding the bytes its digest says, reach an earlier epoch
    /// than the generation states: what someone who can write an unencrypted bucket can plant by
    /// naming an older live segment under a newer generation.
    @Suite struct StatedEpochTests {
        /// Generation 2 as its shipper wrote it (epochs 1…10), but naming the files of generation 1
        /// (epochs 1…6): every object is the shipper's own, every digest matches.
        static func forgedShortLiveSegment(_ gateway: Gateway, prefix: String) async throws -> ShippedReplica {
            let shipped = try await ShippedReplica.ship(
                gateway, bucket: try await gateway.freshBucket(), prefix: prefix, passes: [6, 4])
            var forged = try await shipped.generation(2)
            forged.files = try await shipped.generation(1).files
            try #require(forged.lastEpoch == shipped.lastEpochs[2])
            try await shipped.forge(forged, as: 2)
            return shipped
        }

        @Test func filesThatStopShortOfTheEpochTheirGenerationStatesAreDamageAndTheOlderGenerationIsRestored()
            async throws
        {
            let gateway = try Gateway.required()
            let shipped = try await Self.forgedShortLiveSegment(gateway, prefix: "short-live")
            defer { shipped.remove() }
            let target = shipped.directory.appendingPathComponent("restored")

            let report = try await ReplicaRestorer(from: shipped.location, configuration: gateway.configuration())
                .restore(into: target)

            #expect(report.generation == 1, "generation 2 is passed over as damaged")
            #expect(report.epoch.epoch == shipped.lastEpochs[1])
            #expect(report.verification.status == .clean)
            let damage = try #require(report.damage.first, "the forged generation is reported")
            #expect(damage.key.hasSuffix(ReplicaLayout.generation(2)), "\(damage)")
            #expect(damage.reason.contains("epoch \(shipped.lastEpochs[2] ?? 0)"), "\(damage.reason)")
            #expect(damage.reason.contains("epoch \(shipped.lastEpochs[1] ?? 0)"), "\(damage.reason)")
            let journal = try Journal.open(at: target)
            defer { try? journal.close() }
            #expect(try journal.state().entries == shipped.states[1])
        }

        @Test func theToolDoesNotExitCleanWhenTheNewestGenerationsFilesStopShortOfItsEpoch() async throws {
            let gateway = try Gateway.required()
            let shipped = try await Self.forgedShortLiveSegment(gateway, prefix: "short-live-tool")
            defer { shipped.remove() }
            let sandbox = try Sandbox()
            defer { sandbox.remove() }

            let run = try shipped.restoreWithTool(into: sandbox.target)

            #expect(run.status != 0, "exit \(run.status): \(run.output) \(run.error)")
            #expect(run.error.contains(ReplicaLayout.generation(2)), "\(run.error)")
        }
    }
}
