import Foundation
import StateJournal
import Testing

@testable import StateJournalReplication

extension GatewayTests {
    /// What a restore holds in memory does not grow with the store it restores: the objects come
    /// through a bounded window, and the restored store is checked down to its framing a window at
    /// a time, its state neither decoded nor held.
    @Suite struct RestoreMemoryTests {
        @Test func aStoreWhoseStateIsTwiceTheMemoryBoundIsRestoredWithinIt() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "large-state")
            let directory = try temporaryDirectory("large-state")
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = directory.appendingPathComponent("store")
            // 8,000 states of 30,000 bytes, cut at random from 4 MiB of random bytes so that they
            // do not compress: a checkpoint of about 240 MB, then a few epochs after it.
            var states = IncompressibleStates()
            func state() -> [UInt8] { states.next() }
            let journal = try Journal.open(at: store, options: JournalOptions(durability: .none))
            for batch in 0..<8 {
                let changes = (0..<1000).map {
                    JournalChange.put(RestorationPath("Main", "Item-\(batch)-\($0)"), state())
                }
                _ = try journal.commit(changes, metadata: ["batch": "\(batch)"])
            }
            try journal.compact()
            for round in 0..<5 {
                _ = try journal.commit([.put(RestorationPath("Main", "Item-0-\(round)"), state())], metadata: [:])
            }
            let expected = try journal.state()
            try journal.close()
            try await ReplicationShipper(store: store, to: location, configuration: gateway.configuration())
                .shipOnce()
            let target = directory.appendingPathComponent("restored")

            let run = try measuredTool(
                ["restore", "s3://\(location.bucket)/\(location.prefix)", "--into", target.path],
                environment: gateway.childEnvironment)

            #expect(run.status == 0, "\(run.error)")
            #expect(run.output.contains("verified clean"), "\(run.output)")
            // 181 MiB measured (114 MiB when the pieces of a large object came one at a time): the
            // 32 MiB window of objects fetched ahead, the 32 MiB window of pieces of a large object
            // fetched at once (four of 8 MiB, each held twice for a moment as it arrives), and the
            // tool itself. Verifying by replaying the state, as opening the store does, took 616 MiB
            // for a state of 287 MB.
            #expect(run.peakKiB < 224 << 10, "peak \(run.peakKiB) KiB for a state of 240 MB")
            let restored = try JournalReader(at: target).state()
            #expect(restored.epoch == expected.epoch)
            #expect(restored.entries == expected.entries)
        }

        @Test func aDeltaRestoreReadsAndCopiesFilesLargerThanItsMemoryBoundWithinIt() async throws {
            let gateway = try Gateway.required()
            let location = S3Location(bucket: try await gateway.freshBucket(), prefix: "large-delta")
            let directory = try temporaryDirectory("large-delta")
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = directory.appendingPathComponent("store")
            // 120 MB of states that do not compress (cut at random from 4 MiB of random bytes), in a
            // checkpoint and in the segments it compacted (kept for retention): a store of about
            // 240 MB whose checkpoint alone is larger than the bound below.
            var states = IncompressibleStates()
            let journal = try Journal.open(at: store, options: JournalOptions(durability: .none))
            for batch in 0..<4 {
                let changes = (0..<1000).map { index in
                    JournalChange.put(RestorationPath("Main", "Item-\(batch)-\(index)"), states.next())
                }
                _ = try journal.commit(changes, metadata: ["batch": "\(batch)"])
            }
            try journal.compact()
            _ = try journal.commit([.put(RestorationPath("Main", "After"), [1, 2, 3])], metadata: [:])
            try journal.close()
            try await ReplicationShipper(store: store, to: location, configuration: gateway.configuration())
                .shipOnce()
            let target = directory.appendingPathComponent("restored")
            let replica = "s3://\(location.bucket)/\(location.prefix)"
            let first = try await runTool(
                ["restore", replica, "--into", target.path], environment: gateway.childEnvironment)
            #expect(first.status == 0, "\(first.error)")

            let run = try measuredTool(
                ["restore", replica, "--into", target.path, "--delta"], environment: gateway.childEnvironment)

            #expect(run.status == 0, "\(run.error)")
            #expect(run.output.contains(", 0 objects, 0 bytes fetched, "), "\(run.output)")
            // Every byte of the old copy is read and copied a mebibyte at a time (51 MiB measured for
            // a store of 480 MB); holding the checkpoint alone would take more than 100 MiB.
            #expect(run.peakKiB < 100 << 10, "peak \(run.peakKiB) KiB for a store of 240 MB")
            print("delta restore of a 240 MB store, nothing changed: peak \(run.peakKiB) KiB; \(run.output)")
        }
    }
}

/// States of 30,000 bytes that LZ4 cannot shrink, cut at random from 4 MiB of random bytes (cheaper
/// than drawing each one).
struct IncompressibleStates {
    private var random = SystemRandomNumberGenerator()
    private var block = [UInt8](repeating: 0, count: 4 << 20)
    let size = 30_000

    init() {
        for index in stride(from: 0, to: block.count, by: 8) {
            withUnsafeBytes(of: random.next()) { block.replaceSubrange(index..<(index + 8), with: $0) }
        }
    }

    /// The next state.
    mutating func next() -> [UInt8] {
        let offset = Int.random(in: 0..<(block.count - size), using: &random)
        return Array(block[offset..<(offset + size)])
    }
}
