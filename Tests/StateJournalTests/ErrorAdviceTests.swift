import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An I/O error's advice matches its `errno`, so the user knows whether to free space, fix
/// permissions, raise a limit or check the device.
@Suite struct ErrorAdviceTests {
    static let table: [(errno: Int32, says: String)] = [
        (EMFILE, "file descriptors"), (ENFILE, "file descriptors"), (EACCES, "Permission"), (EPERM, "Permission"),
        (EROFS, "read-only"), (ENOSPC, "free some space"), (EDQUOT, "quota"), (EIO, "dmesg"),
    ]

    @Test func eachErrnoGetsAdviceAboutItsOwnCause() throws {
        for (code, says) in Self.table {
            let directory = TemporaryDirectory()
            let fileSystem = FaultInjectingFileSystem(
                plan: FaultPlan(at: 1, of: [.dataSync], fault: .error(code), persistent: true))
            let journal = try Journal.open(
                path: directory.appending("store"), options: testOptions(durability: .everyCommit),
                fileSystem: fileSystem)
            let error = journalError { try journal.commit([.put(RestorationPath("Main"), [1])]) }
            let message = error.map { "\($0)" } ?? ""
            #expect(message.contains(says), "errno \(code): \(message)")
            if code != ENOSPC && code != EDQUOT {
                #expect(!message.contains("free space"), "errno \(code): \(message)")
            }
            try? journal.close()
        }
    }

    @Test func aStoreInAReadOnlyPlaceSaysSo() throws {
        let directory = TemporaryDirectory()
        let fileSystem = FaultInjectingFileSystem(
            plan: FaultPlan(at: 1, of: [.makeDirectory], fault: .error(EACCES), persistent: true))
        let error = journalError(.ioFailure) {
            try Journal.open(path: directory.appending("store"), options: testOptions(), fileSystem: fileSystem)
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("Permission denied"))
    }

    @Test func aStoreWhoseParentDirectoryIsMissingNamesTheParentToCreate() throws {
        let directory = TemporaryDirectory()
        let parent = directory.appending("missing")
        let error = journalError(.ioFailure) {
            try Journal.open(path: parent + "/store", options: testOptions(), fileSystem: PosixFileSystem())
        }
        let message = error?.message ?? ""
        #expect(message.contains("parent directory \(parent) does not exist"), "\(message)")
        #expect(!message.contains("moved or removed"), "\(message)")
        #expect(error?.file == parent)
        #expect(!FileManager.default.fileExists(atPath: parent))
    }
}

/// Two processes (here, threads) creating the same new store at once: one writes, the other is
/// told the store is in use, never that a file exists.
@Suite struct StoreCreationRaceTests {
    @Test func twoWritersCreatingOneStoreAtOnceNeverSeeFileExists() throws {
        for round in 0..<200 {
            let directory = TemporaryDirectory()
            let store = directory.appending("store")
            let outcomes = Locked<[String]>([])
            let group = DispatchGroup()
            for _ in 0..<2 {
                DispatchQueue.global().async(group: group) {
                    let outcome: String
                    do {
                        let journal = try Journal.open(
                            path: store, options: testOptions(), fileSystem: PosixFileSystem())
                        outcome = "opened"
                        try? journal.close()
                    } catch let error as JournalError {
                        outcome = "\(error.code)" + (error.message.contains("exists") ? " (file exists)" : "")
                    } catch {
                        outcome = "\(error)"
                    }
                    outcomes.withLock { $0.append(outcome) }
                }
            }
            group.wait()
            let seen = outcomes.withLock { $0 }
            #expect(seen.contains("opened"), "round \(round): \(seen)")
            #expect(seen.allSatisfy { $0 == "opened" || $0 == "storeLocked" }, "round \(round): \(seen)")
        }
    }
}
