import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// A large checkpoint is decoded on a second thread while it is decompressed. Whatever is done to
/// the file, that finds what loading it on one thread finds: the same state, or the same error.
@Suite struct PipelinedCheckpointLoadTests {
    /// A store whose checkpoint holds `paths` states of `size` bytes that LZ4 cannot shrink, so that
    /// the file is about `paths * size` bytes.
    private func storeWithCheckpoint(_ directory: TemporaryDirectory, paths: Int, size: Int, seed: UInt64) throws
        -> StoreDirectory
    {
        let store = directory.appending("store")
        var random = SplitMix64(seed: seed)
        let journal = try openJournal(store, testOptions())
        for first in stride(from: 0, to: paths, by: 500) {
            var changes: [JournalChange] = []
            for index in first..<min(first + 500, paths) {
                let state = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                let component = index % 3 == 0 ? "Fenêtre-\(index % 5)" : "Window-\(index % 7)"
                changes.append(.put(RestorationPath("Main", component, "Item-\(index)"), state))
            }
            _ = try journal.commit(changes, metadata: ["pass": "\(first)"])
        }
        try journal.compact()
        try journal.close()
        return StoreDirectory(fileSystem: PosixFileSystem(), path: store)
    }

    /// A checksum of the paths and states `slots` point to, in order.
    private static func digest(_ slots: [StateTable.Slot]) -> UInt32 {
        var digest: UInt32 = 0
        for slot in slots {
            let path = UnsafeRawBufferPointer(start: slot.path, count: Int(slot.pathCount))
            digest = CRC32C.checksum(slot.state, continuing: CRC32C.checksum(path, continuing: digest))
        }
        return digest
    }

    /// What a load came to: the epoch and a digest of every path and state, or the error's text.
    private func outcome(_ body: () throws -> CheckpointContent) -> String {
        do {
            let content = try body()
            let digest = Self.digest(content.entries.slots)
            return
                "epoch \(content.info.epoch), \(content.entries.count) paths, digest \(digest), \(content.info.metadata)"
        } catch let violation as FormatViolation {
            return "violation: \(violation.reason)"
        } catch {
            return "error: \(error)"
        }
    }

    @Test func loadingACheckpointOnTwoThreadsFindsWhatLoadingItOnOneFindsWhateverIsDoneToIt() throws {
        let directory = TemporaryDirectory()
        // About 6 MB: the decoding thread reads it in several steps.
        let store = try storeWithCheckpoint(directory, paths: 3_000, size: 2_000, seed: 11)
        let manifest = try store.readManifest()
        let reference = try #require(manifest.checkpoints.last)
        let file = store.file(FileNames.checkpoint(reference.sequence))
        let original = try Corruption.readFile(file)
        #expect(original.count > 4 << 20)
        #expect(
            CheckpointFile.loadsPipelined(size: Int64(original.count))
                == (ProcessInfo.processInfo.activeProcessorCount > 1))
        func compare(_ what: String) -> String {
            let serial = outcome {
                try CheckpointFile.load(reference, storeID: manifest.storeID, in: store, pipelined: false)
            }
            let pipelined = outcome {
                try CheckpointFile.load(reference, storeID: manifest.storeID, in: store, pipelined: true)
            }
            #expect(pipelined == serial, "\(what)")
            return serial
        }
        #expect(compare("intact").hasPrefix("epoch"))
        #expect(compare("intact").contains("3000 paths"))
        var random = SplitMix64(seed: 29)
        var errors = Set<String>()
        for round in 0..<40 {
            let (bytes, offset) = damagedCopy(of: original, round: round, random: &random)
            try Corruption.writeFile(file, bytes)
            errors.insert(compare("round \(round) at \(offset) of \(original.count)"))
        }
        try Corruption.writeFile(file, original)
        // The damage was seen: each round failed to load, for several reasons.
        #expect(!errors.contains { $0.hasPrefix("epoch") })
        #expect(errors.count >= 3, "\(errors)")
    }

    @Test(arguments: [InjectedFault.error(EIO), .error(ENOMEM)])
    func aReadThatFailsAtAnyCallOfALoadOnTwoThreadsFailsItAsOnOneAndLeavesNothingOpen(fault: InjectedFault) throws {
        let directory = TemporaryDirectory()
        let written = try storeWithCheckpoint(directory, paths: 3_000, size: 2_000, seed: 13)
        let fileSystem = FaultInjectingFileSystem()
        let store = StoreDirectory(fileSystem: fileSystem, path: written.path)
        let manifest = try store.readManifest()
        let reference = try #require(manifest.checkpoints.last)
        fileSystem.arm(nil)
        let before = fileSystem.callCount(of: .read)
        _ = try CheckpointFile.load(reference, storeID: manifest.storeID, in: store, pipelined: true)
        let reads = fileSystem.callCount(of: .read) - before
        #expect(reads > 3)
        for call in 1...reads {
            func load(pipelined: Bool) -> String {
                fileSystem.arm(FaultPlan(at: call, of: [.read], fault: fault))
                defer { fileSystem.arm(nil) }
                return outcome {
                    try CheckpointFile.load(reference, storeID: manifest.storeID, in: store, pipelined: pipelined)
                }
            }
            let serial = load(pipelined: false)
            #expect(serial.hasPrefix("error"), "read \(call)")
            #expect(load(pipelined: true) == serial, "read \(call)")
            #expect(fileSystem.openDescriptorCount == 0)
        }
    }

    @Test func decodingContentAsItGrowsFindsWhatDecodingItWholeFindsEvenWhenItIsDamaged() throws {
        let directory = TemporaryDirectory()
        // Past the largest entry (about 17 MiB), so that damage is found before the content is whole.
        let store = try storeWithCheckpoint(directory, paths: 14_000, size: 2_000, seed: 12)
        let manifest = try store.readManifest()
        let reference = try #require(manifest.checkpoints.last)
        let file = try Corruption.readFile(store.file(FileNames.checkpoint(reference.sequence)))
        let decompressor = try LZ4FrameDecompressor(limit: 1 << 30)
        _ = try file.withUnsafeBytes { try decompressor.feed($0) }
        let arena = decompressor.takeOutput()
        let content = [UInt8](arena.bytes)
        #expect(content.count > CheckpointContentDecoder.largestEntry + (1 << 20))

        /// The decoder's outcome on `bytes` (content without its checksum) read in growing prefixes,
        /// or whole when `steps` is empty.
        func decode(_ bytes: [UInt8], steps: [Int]) -> String {
            bytes.withUnsafeBytes { body in
                var decoder = CheckpointContentDecoder()
                do {
                    for end in steps {
                        try decoder.read(UnsafeRawBufferPointer(rebasing: body[0..<end]), complete: false)
                    }
                    try decoder.read(body, complete: true)
                    return "\(decoder.slots.count) paths, digest \(Self.digest(decoder.slots))"
                } catch let error as FormatViolation {
                    return "violation: \(error.reason) after \(decoder.slots.count) paths"
                } catch {
                    return "error: \(error)"
                }
            }
        }
        var random = SplitMix64(seed: 31)
        func steps(_ count: Int) -> [Int] {
            var ends: [Int] = []
            var end = 0
            while true {
                end += 1 + Int(random.next() % UInt64(3 << 20))
                guard end < count else { return ends }
                ends.append(end)
            }
        }
        let body = Array(content.dropLast(4))
        let whole = decode(body, steps: [])
        #expect(whole.hasPrefix("14000 paths"))
        #expect(decode(body, steps: steps(body.count)) == whole)
        #expect(decode(body, steps: Array(stride(from: 1, to: body.count, by: 65_537))) == whole)
        // Where entries' paths start: damage there is a violation, not just other state bytes.
        let pathOffsets = body.withUnsafeBytes { bytes in
            var decoder = CheckpointContentDecoder()
            try? decoder.read(bytes, complete: true)
            return decoder.slots.map { $0.path - bytes.baseAddress! }
        }
        var early = 0
        for round in 0..<30 {
            var damaged = body
            var offset = Int(random.next() % UInt64(body.count))
            switch round % 5 {
            case 3:
                // A path's last byte made invalid UTF-8.
                let path = pathOffsets[Int(random.next() % UInt64(pathOffsets.count / 3))]
                offset = path + 2
                damaged[offset] = 0xFF
            case 4:
                // A path's depth made zero.
                offset = pathOffsets[Int(random.next() % UInt64(pathOffsets.count / 3))]
                damaged[offset] = 0
            case 0: damaged[offset] ^= 0x80
            case 1: damaged[offset] = 0xFF
            default: damaged.removeSubrange(offset..<min(damaged.count, offset + 1 + Int(random.next() % 5_000)))
            }
            let expected = decode(damaged, steps: [])
            #expect(decode(damaged, steps: steps(damaged.count)) == expected, "round \(round) at \(offset)")
            // Damage with room for the largest entry after it is found before the content is whole.
            let prefix = offset + CheckpointContentDecoder.largestEntry + (1 << 20)
            if expected.hasPrefix("violation") && prefix < damaged.count {
                let foundEarly = damaged.withUnsafeBytes { body in
                    var decoder = CheckpointContentDecoder()
                    do {
                        try decoder.read(UnsafeRawBufferPointer(rebasing: body[0..<prefix]), complete: false)
                        return false
                    } catch {
                        return true
                    }
                }
                if foundEarly { early += 1 }
            }
        }
        // Some of the damage lay far enough from the end to be found while the content grew.
        #expect(early > 0)
    }
}
