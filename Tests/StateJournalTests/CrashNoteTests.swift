import Foundation
import StateJournal
import StateJournalTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The crash note tells a process that crashed from one that was killed: a crash signal on the
/// armed thread leaves the note, a kill leaves nothing, and whatever the file holds is read as
/// hostile.
@Suite struct CrashNoteTests {
    static func store() throws -> (TemporaryDirectory, String) {
        let directory = TemporaryDirectory()
        let path = directory.appending("store")
        try openJournal(path, realFileSystem: true).close()
        return (directory, path)
    }

    static func openAndArm(_ path: String, _ text: String) throws -> Journal {
        let journal = try Journal.open(at: URL(fileURLWithPath: path), options: JournalOptions(durability: .none))
        try journal.armCrashNote(text)
        return journal
    }

    @Test func aTrapOnTheArmedThreadLeavesTheNoteWithItsSignal() async throws {
        let (directory, store) = try Self.store()
        let path: String = store
        await #expect(processExitsWith: .failure) { [path = path as String] in
            _ = try CrashNoteTests.openAndArm(path, "decoding Main/Inbox")
            fatalError("a trap in the app's code")
        }
        let journal = try openJournal(path, realFileSystem: true)
        #expect(try journal.crashNote() == CrashNote(text: "decoding Main/Inbox", signal: SIGILL))
        try journal.clearCrashNote()
        #expect(try journal.crashNote() == nil)
        try journal.close()
        withExtendedLifetime(directory) {}
    }

    @Test func anAbortLeavesTheNoteAndStillEndsTheProcess() async throws {
        let (directory, store) = try Self.store()
        let path: String = store
        await #expect(processExitsWith: .signal(SIGABRT)) { [path = path as String] in
            _ = try CrashNoteTests.openAndArm(path, "restoring")
            abort()
        }
        let journal = try openJournal(path, realFileSystem: true)
        #expect(try journal.crashNote() == CrashNote(text: "restoring", signal: SIGABRT))
        try journal.close()
        withExtendedLifetime(directory) {}
    }

    @Test(arguments: [SIGSEGV, SIGBUS, SIGFPE, SIGTRAP])
    func everyCrashSignalLeavesTheNoteAndStillEndsTheProcess(signal: Int32) async throws {
        let (directory, store) = try Self.store()
        let path: String = store
        await #expect(processExitsWith: .signal(signal)) { [path = path as String, signal = signal as Int32] in
            _ = try CrashNoteTests.openAndArm(path, "restoring")
            raise(signal)
        }
        let journal = try openJournal(path, realFileSystem: true)
        #expect(try journal.crashNote() == CrashNote(text: "restoring", signal: signal))
        try journal.close()
        withExtendedLifetime(directory) {}
    }

    @Test func aKillLeavesNoNoteAndNeitherDoesWorkThatReturned() async throws {
        let (directory, store) = try Self.store()
        let path: String = store
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            _ = try CrashNoteTests.openAndArm(path, "restoring")
            kill(getpid(), SIGKILL)
        }
        let journal = try openJournal(path, realFileSystem: true)
        #expect(try journal.crashNote() == nil)
        try journal.armCrashNote("restoring again")
        journal.disarmCrashNote()
        #expect(!FileManager.default.fileExists(atPath: path + "/CRASHNOTE"))
        #expect(try journal.crashNote() == nil)
        try journal.close()
        withExtendedLifetime(directory) {}
    }

    @Test func aCrashSignalOnAnotherThreadLeavesNoNote() async throws {
        let (directory, store) = try Self.store()
        let path: String = store
        await #expect(processExitsWith: .signal(SIGSEGV)) { [path = path as String] in
            _ = try CrashNoteTests.openAndArm(path, "restoring")
            let thread = Thread { raise(SIGSEGV) }
            thread.start()
            sleep(30)
        }
        let journal = try openJournal(path, realFileSystem: true)
        #expect(try journal.crashNote() == nil)
        try journal.close()
        withExtendedLifetime(directory) {}
    }

    @Test func notesArmedOnTwoThreadsAtOnceEachKeepTheirOwn() async throws {
        let (first, firstStore) = try Self.store()
        let (second, secondStore) = try Self.store()
        let path: String = firstStore
        let other: String = secondStore
        await #expect(processExitsWith: .failure) { [path = path as String, other = other as String] in
            let journal = try CrashNoteTests.openAndArm(path, "main thread")
            let armed = DispatchSemaphore(value: 0)
            let thread = Thread {
                _ = try? CrashNoteTests.openAndArm(other, "other thread")
                armed.signal()
                sleep(30)
            }
            thread.start()
            armed.wait()
            withExtendedLifetime(journal) { fatalError("a trap on the main thread") }
        }
        let crashed = try openJournal(path, realFileSystem: true)
        #expect(try crashed.crashNote() == CrashNote(text: "main thread", signal: SIGILL))
        try crashed.close()
        let spared = try openJournal(other, realFileSystem: true)
        #expect(try spared.crashNote() == nil)
        try spared.close()
        withExtendedLifetime((first, second)) {}
    }

    @Test func aNoteLeftAsItIsHasNoSignal() throws {
        let (directory, store) = try Self.store()
        let path: String = store
        let journal = try openJournal(path, realFileSystem: true)
        try journal.leaveCrashNote("held open")
        #expect(try journal.crashNote() == CrashNote(text: "held open", signal: nil))
        try journal.close()
        #expect(try openReader(path).state().epoch == nil)
        withExtendedLifetime(directory) {}
    }

    @Test func aDamagedOrForeignNoteFileIsNoNote() throws {
        let (directory, store) = try Self.store()
        let path: String = store
        let journal = try openJournal(path, realFileSystem: true)
        try journal.leaveCrashNote("a note of some length")
        let file = path + "/CRASHNOTE"
        let good = try Corruption.readFile(file)
        var random = SplitMix64(seed: 7)
        for offset in 0..<good.count {
            try Corruption.writeFile(file, good)
            try Corruption.flipByte(file, at: offset, mask: 0x10)
            // The signal byte is not covered by the checksum: any value is a signal or none.
            if offset == 5 { continue }
            #expect(try journal.crashNote() == nil, "flipped byte \(offset)")
        }
        for cut in 0..<good.count {
            try Corruption.writeFile(file, Array(good.prefix(cut)))
            #expect(try journal.crashNote() == nil, "cut at \(cut)")
        }
        for _ in 0..<50 {
            try Corruption.writeFile(file, random.bytes(Int(random.next() % 2048)))
            #expect(try journal.crashNote() == nil)
        }
        try journal.close()
        #expect(StoreInspector.verify(URL(fileURLWithPath: path)).status == .clean)
        withExtendedLifetime(directory) {}
    }
}
