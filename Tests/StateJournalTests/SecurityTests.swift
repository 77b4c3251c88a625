import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// Store files are private to their owner, and a symbolic link planted in a store is never followed
/// to write somewhere else.
@Suite struct SecurityTests {
    static func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! NSNumber).intValue & 0o777
    }

    @Test func storeFilesAreReadableAndWritableByTheOwnerOnly() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        var options = JournalOptions(durability: .everyCommit, segmentSizeLimit: 200)
        options.compaction = .manual
        let journal = try Journal.open(path: store, options: options, fileSystem: PosixFileSystem())
        for index in 0..<5 {
            try journal.commit([.put(RestorationPath("Main", "Item-\(index)"), Array(repeating: 7, count: 100))])
        }
        try journal.compact()
        try journal.close()
        #expect(try Self.mode(store) == 0o700)
        let names = try FileManager.default.contentsOfDirectory(atPath: store)
        #expect(names.contains { $0.hasPrefix("checkpoint-") })
        for name in names { #expect(try Self.mode(store + "/" + name) == 0o600, "\(name)") }
    }

    @Test func aSymbolicLinkPlantedAsTheNextSegmentOrATemporaryManifestIsNeverWrittenThrough() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        let victim = directory.appending("victim.txt")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        var options = JournalOptions(durability: .none, segmentSizeLimit: 150)
        options.compaction = .manual
        do {
            let journal = try Journal.open(path: store, options: options, fileSystem: PosixFileSystem())
            try journal.commit([.put(RestorationPath("Main"), Array(repeating: 1, count: 100))])
            try journal.close()
        }
        // Plant links where the store will write next: the next segments and the temporary manifest.
        let manifest = try StoreDirectory(fileSystem: PosixFileSystem(), path: store).readManifest()
        for sequence in manifest.nextFileSequence..<manifest.nextFileSequence + 4 {
            try FileManager.default.createSymbolicLink(
                atPath: store + "/" + FileNames.segment(sequence), withDestinationPath: victim)
        }
        try FileManager.default.createSymbolicLink(atPath: store + "/MANIFEST.tmp", withDestinationPath: victim)

        let journal = try Journal.open(path: store, options: options, fileSystem: PosixFileSystem())
        #expect(journal.recoveryReport.removedLeftovers.count == 5)
        for index in 0..<6 {
            try journal.commit([.put(RestorationPath("Main", "\(index)"), Array(repeating: 2, count: 100))])
        }
        try journal.compact()
        try journal.close()
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(try JournalReader(at: URL(fileURLWithPath: store)).state().entries.count == 7)
    }

    @Test func aManifestReplacedByASymbolicLinkIsRefusedNotFollowed() throws {
        let directory = TemporaryDirectory()
        let store = directory.appending("store")
        do {
            let journal = try Journal.open(
                path: store, options: JournalOptions(durability: .none), fileSystem: PosixFileSystem())
            try journal.commit([.put(RestorationPath("Main"), [1])])
            try journal.close()
        }
        let elsewhere = directory.appending("elsewhere")
        try FileManager.default.moveItem(atPath: store + "/MANIFEST", toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: store + "/MANIFEST", withDestinationPath: elsewhere)
        #expect(throws: JournalError.self) { try JournalReader(at: URL(fileURLWithPath: store)).state() }
        #expect(throws: JournalError.self) {
            try Journal.open(path: store, options: JournalOptions(durability: .none), fileSystem: PosixFileSystem())
        }
    }
}
