import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// Checking a store down to its framing (what a restore does to what it wrote) reads each
/// checkpoint a window at a time instead of loading its state, and finds what loading it finds.
@Suite struct CheckpointStreamTests {
    /// A store whose checkpoint holds `paths` states of `size` bytes, with a few epochs after it.
    private func storeWithCheckpoint(_ directory: TemporaryDirectory, paths: Int, size: Int, seed: UInt64) throws
        -> String
    {
        let store = directory.appending("store")
        var random = SplitMix64(seed: seed)
        let journal = try openJournal(store, testOptions())
        var changes: [JournalChange] = []
        for index in 0..<paths {
            let state = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next() >> 60) }
            changes.append(.put(RestorationPath("Main", "Window-\(index % 7)", "Item-\(index)"), state))
        }
        _ = try journal.commit(changes, metadata: ["pass": "first", "idiom": "terminal"])
        try journal.compact()
        for round in 0..<3 {
            _ = try journal.commit([.put(RestorationPath("Main", "Item-\(round)"), [UInt8(round)])], metadata: [:])
        }
        try journal.close()
        return store
    }

    private func outcome(_ body: () throws -> CheckpointContent) -> String {
        do {
            let content = try body()
            return
                "\(content.info.epoch) \(content.info.metadata.sorted { $0.key < $1.key }) \(content.info.entryCount) \(content.info.bytes)"
        } catch let violation as FormatViolation {
            return "violation: \(violation.reason)"
        } catch {
            return "error: \(error)"
        }
    }

    @Test(arguments: [(3, 10, UInt64(1)), (400, 9_000, 2), (2_000, 40, 3)])
    func checkingACheckpointAWindowAtATimeAgreesWithLoadingItWhateverIsDoneToIt(
        paths: Int, size: Int, seed: UInt64
    ) throws {
        let directory = TemporaryDirectory()
        let storePath = try storeWithCheckpoint(directory, paths: paths, size: size, seed: seed)
        let store = StoreDirectory(fileSystem: PosixFileSystem(), path: storePath)
        let manifest = try store.readManifest()
        let reference = try #require(manifest.checkpoints.last)
        let file = store.file(FileNames.checkpoint(reference.sequence))
        let original = try Corruption.readFile(file)
        func compare(_ what: String) {
            let loaded = outcome { try CheckpointFile.load(reference, storeID: manifest.storeID, in: store) }
            let checked = outcome { try CheckpointFile.check(reference, storeID: manifest.storeID, in: store) }
            #expect(checked == loaded, "\(what)")
        }
        compare("intact")
        #expect(
            !outcome { try CheckpointFile.check(reference, storeID: manifest.storeID, in: store) }.contains("violation")
        )
        var random = SplitMix64(seed: seed &* 7919)
        for round in 0..<60 {
            let (bytes, offset) = damagedCopy(of: original, round: round, random: &random)
            try Corruption.writeFile(file, bytes)
            compare("round \(round) at \(offset) of \(original.count)")
        }
        try Corruption.writeFile(file, original)
    }

    @Test(arguments: UInt64(1)...3)
    func aCheckpointWhoseChecksumHoldsOverContentThatLiesIsRefusedAsLoadingRefusesIt(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let storePath = try storeWithCheckpoint(directory, paths: 60, size: 30, seed: seed)
        let store = StoreDirectory(fileSystem: PosixFileSystem(), path: storePath)
        let manifest = try store.readManifest()
        let reference = try #require(manifest.checkpoints.last)
        let file = store.file(FileNames.checkpoint(reference.sequence))
        let original = try Corruption.readFile(file)
        let decompressor = try LZ4FrameDecompressor(limit: 1 << 30)
        _ = try original.withUnsafeBytes { try decompressor.feed($0) }
        let arena = decompressor.takeOutput()
        let content = withExtendedLifetime(arena) { Array(arena.bytes) }
        var random = SplitMix64(seed: seed)
        var refused = 0
        for round in 0..<80 {
            // What someone who can write the file does: change the content, then its checksum and
            // its frame to match. Past the header, so that most rounds reach the paths and states.
            var forged = Array(content.dropLast(4))
            let offset = 56 + Int(random.next() % UInt64(forged.count - 56))
            forged[offset] = UInt8(truncatingIfNeeded: random.next())
            if round % 5 == 0 { forged.removeSubrange(offset..<min(forged.count, offset + 3)) }
            forged += Corruption.littleEndianBytes(CRC32C.checksum(forged))
            let compressor = try LZ4FrameCompressor()
            try Corruption.writeFile(file, try compressor.begin() + compressor.update(forged) + compressor.end())
            let loaded = outcome { try CheckpointFile.load(reference, storeID: manifest.storeID, in: store) }
            let checked = outcome { try CheckpointFile.check(reference, storeID: manifest.storeID, in: store) }
            if checked.contains("violation") { refused += 1 }
            #expect(checked == loaded, "round \(round) at \(offset)")
        }
        #expect(refused > 20)
        try Corruption.writeFile(file, original)
    }

    @Test(arguments: [("Item-1", "repeats"), ("Item-0", "not in order")])
    func aCheckpointThatRepeatsAPathOrListsItOutOfOrderIsRefused(replacement: String, words: String) throws {
        let directory = TemporaryDirectory()
        let storePath = directory.appending("store")
        let journal = try openJournal(storePath, testOptions())
        _ = try journal.commit(
            [.put(RestorationPath("Main", "Item-1"), [1, 2, 3]), .put(RestorationPath("Main", "Item-2"), [4, 5, 6])],
            metadata: [:])
        try journal.compact()
        try journal.close()
        let store = StoreDirectory(fileSystem: PosixFileSystem(), path: storePath)
        let manifest = try store.readManifest()
        let reference = try #require(manifest.checkpoints.last)
        let file = store.file(FileNames.checkpoint(reference.sequence))
        let decompressor = try LZ4FrameDecompressor(limit: 1 << 20)
        _ = try Corruption.readFile(file).withUnsafeBytes { try decompressor.feed($0) }
        let arena = decompressor.takeOutput()
        var forged = withExtendedLifetime(arena) { Array(arena.bytes.dropLast(4)) }
        let second = Array("Item-2".utf8)
        let at = try #require(
            (0...(forged.count - second.count)).first { Array(forged[$0..<($0 + second.count)]) == second })
        forged.replaceSubrange(at..<(at + second.count), with: Array(replacement.utf8))
        forged += Corruption.littleEndianBytes(CRC32C.checksum(forged))
        let compressor = try LZ4FrameCompressor()
        try Corruption.writeFile(file, try compressor.begin() + compressor.update(forged) + compressor.end())

        let checked = outcome { try CheckpointFile.check(reference, storeID: manifest.storeID, in: store) }
        #expect(checked.contains("violation") && checked.contains(words), "\(checked)")
        // Loading it whole refuses it for the same reason: both read the bytes the same way.
        let loaded = outcome { try CheckpointFile.load(reference, storeID: manifest.storeID, in: store) }
        #expect(loaded == checked)
        #expect(StoreInspector.verifyFraming(URL(fileURLWithPath: storePath)).damagedCheckpoints.count == 1)
        #expect(StoreInspector.verify(URL(fileURLWithPath: storePath)).damagedCheckpoints.count == 1)
    }

    @Test(arguments: UInt64(1)...4)
    func verifyingDownToTheFramingFindsTheDamageThatFullVerificationFinds(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let storePath = try storeWithCheckpoint(directory, paths: 50, size: 200, seed: seed)
        var workload = WorkloadGenerator(seed: seed, pathCount: 20, removeAllPercent: 0)
        var model = JournalModel()
        let journal = try openJournal(storePath, testOptions(durability: .everyCommit))
        try commitEpochs(12, journal, &workload, &model)
        try journal.close()
        let url = URL(fileURLWithPath: storePath)
        func summary(_ verification: StoreVerification) -> String {
            "\(verification.status) \(verification.consistentEpoch.map(String.init) ?? "-") "
                + "\(verification.damage.map { "\($0.file)@\($0.offset)" } ?? "-") "
                + "\(verification.damagedCheckpoints.map(\.file)) \(verification.epochsChecked)"
        }
        #expect(summary(StoreInspector.verifyFraming(url)) == summary(StoreInspector.verify(url)))
        #expect(StoreInspector.verifyFraming(url).status == .clean)
        var random = SplitMix64(seed: seed)
        let files = try FileManager.default.contentsOfDirectory(atPath: storePath).filter {
            $0.hasPrefix("segment-") || $0.hasPrefix("checkpoint-")
        }.sorted()
        for round in 0..<24 {
            let name = files[Int(random.next() % UInt64(files.count))]
            let path = storePath + "/" + name
            let original = try Corruption.readFile(path)
            var bytes = original
            let offset = Int(random.next() % UInt64(bytes.count))
            if round % 3 == 2 {
                bytes.removeSubrange(offset...)
            } else {
                bytes[offset] ^= UInt8(truncatingIfNeeded: random.next() | 1)
            }
            try Corruption.writeFile(path, bytes)
            #expect(
                summary(StoreInspector.verifyFraming(url)) == summary(StoreInspector.verify(url)),
                "round \(round): \(name) at \(offset)")
            try Corruption.writeFile(path, original)
        }
    }

    @Test func anIntactCheckpointIsReadOnceToCheckItAndADamagedOneAgainForTheErrorALoadGives() throws {
        let directory = TemporaryDirectory()
        let storePath = try storeWithCheckpoint(directory, paths: 400, size: 9_000, seed: 4)
        let fileSystem = FaultInjectingFileSystem()
        let store = StoreDirectory(fileSystem: fileSystem, path: storePath)
        let manifest = try store.readManifest()
        let reference = try #require(manifest.checkpoints.last)
        let file = store.file(FileNames.checkpoint(reference.sequence))
        let size = try Corruption.readFile(file).count

        let before = fileSystem.bytesRead
        _ = try CheckpointFile.check(reference, storeID: manifest.storeID, in: store)
        #expect(fileSystem.bytesRead - before == size)

        // Damage in the middle: the one pass finds it, the two passes after it give load's error.
        try Corruption.flipByte(file, at: size / 2)
        let again = fileSystem.bytesRead
        let checked = outcome { try CheckpointFile.check(reference, storeID: manifest.storeID, in: store) }
        #expect(checked == outcome { try CheckpointFile.load(reference, storeID: manifest.storeID, in: store) })
        #expect(checked.hasPrefix("violation"))
        #expect(fileSystem.bytesRead - again > size)
    }
}
