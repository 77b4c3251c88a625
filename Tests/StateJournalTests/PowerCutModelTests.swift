import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// The fault-injecting file system's power-cut image keeps what the kernel could lose: bytes
/// written since the last sync, whether they were appended or written over synced bytes, and pages
/// whose writeback failed even after a later sync.
@Suite struct PowerCutModelTests {
    private func file(
        _ directory: TemporaryDirectory, dropsPagesOnFailedSync: Bool = false
    ) throws -> (FaultInjectingFileSystem, String, Int32) {
        let fileSystem = FaultInjectingFileSystem(dropsPagesOnFailedSync: dropsPagesOnFailedSync)
        let folder = directory.appending("files")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/data"
        let descriptor = try fileSystem.open(path, .createNew)
        return (fileSystem, folder, descriptor)
    }

    private func image(
        _ fileSystem: FaultInjectingFileSystem, of folder: String, in directory: TemporaryDirectory,
        _ fate: @escaping (Int) -> UnsyncedPageFate = { _ in .zeros }
    ) throws -> [UInt8] {
        let target = directory.appending("image-\(UUID().uuidString)")
        try fileSystem.writePowerLossImage(of: folder, to: target) { _, page in fate(page) }
        return try Corruption.readFile(target + "/data")
    }

    @Test func bytesWrittenOverSyncedZerosAndNotSyncedAreUndoneByAPowerCut() throws {
        let directory = TemporaryDirectory()
        let (fileSystem, folder, descriptor) = try file(directory)
        defer { fileSystem.close(descriptor) }
        try fileSystem.writeAll(descriptor, [UInt8](repeating: 0, count: 3 * 4096), at: 0)
        try fileSystem.dataSync(descriptor)
        try fileSystem.writeAll(descriptor, [UInt8](repeating: 7, count: 100), at: 10)
        try fileSystem.writeAll(descriptor, [UInt8](repeating: 8, count: 100), at: 5000)

        #expect(try image(fileSystem, of: folder, in: directory) == [UInt8](repeating: 0, count: 3 * 4096))
        let onlyFirst = try image(fileSystem, of: folder, in: directory) { $0 == 0 ? .written : .zeros }
        #expect(onlyFirst[10..<110].allSatisfy { $0 == 7 })
        #expect(onlyFirst[5000..<5100].allSatisfy { $0 == 0 })

        try fileSystem.dataSync(descriptor)
        let synced = try image(fileSystem, of: folder, in: directory)
        #expect(synced[10..<110].allSatisfy { $0 == 7 } && synced[5000..<5100].allSatisfy { $0 == 8 })
    }

    @Test func aPageWhoseWritebackFailedKeepsItsOldContentAfterALaterSync() throws {
        let directory = TemporaryDirectory()
        let (fileSystem, folder, descriptor) = try file(directory, dropsPagesOnFailedSync: true)
        defer { fileSystem.close(descriptor) }
        try fileSystem.writeAll(descriptor, [UInt8](repeating: 1, count: 2 * 4096), at: 0)
        try fileSystem.dataSync(descriptor)
        try fileSystem.writeAll(descriptor, [UInt8](repeating: 9, count: 10), at: 100)
        fileSystem.arm(FaultPlan(at: 1, of: [.dataSync], fault: .error(EIO)))
        #expect(throws: SystemError.self) { try fileSystem.dataSync(descriptor) }
        fileSystem.arm(nil)
        // Another page is written and synced; the failed one is not written again.
        try fileSystem.writeAll(descriptor, [UInt8](repeating: 5, count: 10), at: 5000)
        try fileSystem.dataSync(descriptor)

        let after = try image(fileSystem, of: folder, in: directory) { _ in .written }
        #expect(after[100..<110].allSatisfy { $0 == 1 }, "the failed page's bytes never reached the disk")
        #expect(after[5000..<5010].allSatisfy { $0 == 5 })
    }
}
