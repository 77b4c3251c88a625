import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What a process left in the store's crash note: text it armed (``Journal/armCrashNote(_:)``) and
/// the crash signal it died of, or text it left as it is (``Journal/leaveCrashNote(_:)``).
///
/// The note lets a layer above the journal tell a process that *crashed* while doing something
/// (a trap, a fault, an abort: a crash signal) from one that was *killed* from outside (SIGKILL,
/// an OOM kill, a power cut), which leaves no note. The restoration layer counts a restoration as
/// failed only on such a note, so that kills during a slow restore are never taken for a crash
/// loop.
public struct CrashNote: Sendable, Hashable {
    /// The text the process armed or left.
    public var text: String
    /// The crash signal the process died of (`SIGSEGV`, `SIGILL`, `SIGTRAP`, `SIGABRT`, ...), or `nil`
    /// for a note left as it is.
    public var signal: Int32?

    /// Creates a note.
    public init(text: String, signal: Int32?) {
        self.text = text
        self.signal = signal
    }

    /// The file's bytes: `SJCN`, version 1, the signal (0 for none), the text's length (UInt16,
    /// little-endian), the text's CRC-32C (UInt32, little-endian), then the text in UTF-8.
    static let magic: [UInt8] = Array("SJCN".utf8)
    static let headerSize = 12
    static let signalOffset = 5
    /// The most bytes of text a note holds.
    public static let maximumTextLength = CrashSignals.capacity - 12

    func encoded() -> [UInt8] {
        let text = Array(self.text.utf8.prefix(Self.maximumTextLength))
        var bytes = Self.magic
        bytes.append(1)
        bytes.append(UInt8(truncatingIfNeeded: signal ?? 0))
        bytes.append(contentsOf: [UInt8(text.count & 0xFF), UInt8(text.count >> 8)])
        withUnsafeBytes(of: CRC32C.checksum(text).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: text)
        return bytes
    }

    /// The note in `bytes`, or `nil` when they are not a whole, intact note (a file this process
    /// did not write is read as hostile: bounded, checked, never trusted).
    static func decode(_ bytes: [UInt8]) -> CrashNote? {
        guard bytes.count >= headerSize, Array(bytes[0..<4]) == magic, bytes[4] == 1 else { return nil }
        let count = Int(bytes[6]) | Int(bytes[7]) << 8
        guard count <= maximumTextLength, bytes.count >= headerSize + count else { return nil }
        let text = Array(bytes[headerSize..<headerSize + count])
        let checksum = UInt32(bytes[8]) | UInt32(bytes[9]) << 8 | UInt32(bytes[10]) << 16 | UInt32(bytes[11]) << 24
        guard CRC32C.checksum(text) == checksum, let string = String(validating: text, as: UTF8.self) else {
            return nil
        }
        return CrashNote(text: string, signal: bytes[5] == 0 ? nil : Int32(bytes[5]))
    }
}

extension Journal {
    private var crashNotePath: String { store.file(FileNames.crashNote) }

    /// The note the store's crash note file holds, or `nil` when there is none (or it is not an
    /// intact note).
    ///
    /// - Throws: ``JournalError`` with code ``JournalError/Code/ioFailure`` when the file exists but
    ///   cannot be read.
    public func crashNote() throws -> CrashNote? {
        do {
            guard let descriptor = try store.openIfPresent(FileNames.crashNote) else { return nil }
            defer { fileSystem.close(descriptor) }
            let bytes = try fileSystem.read(descriptor, count: CrashSignals.capacity, at: 0)
            return CrashNote.decode(bytes)
        } catch {
            throw Self.ioError(error, "read the crash note", file: crashNotePath)
        }
    }

    /// Arms a crash note on the calling thread: until ``disarmCrashNote()``, a crash signal on this
    /// thread (`SIGSEGV`, `SIGBUS`, `SIGILL`, `SIGTRAP`, `SIGABRT`, `SIGFPE`: a Swift trap, a fault,
    /// an abort) writes `text` and the signal to the store's crash note file before the signal takes
    /// its course (the handlers installed before this call run as they would have). A process
    /// killed from outside (`SIGKILL`, a power cut) writes nothing.
    ///
    /// The file is emptied now, so the note read at the next open is this one or none. It is
    /// written without a sync: a crash keeps it in the page cache, a power cut may lose it. One note
    /// is armed at a time per journal (arming again replaces it); journals on up to 32 threads at
    /// once each keep their own.
    ///
    /// - Throws: ``JournalError`` with code ``JournalError/Code/ioFailure`` when the file cannot be
    ///   created or a handler cannot be installed.
    public func armCrashNote(_ text: String) throws {
        disarmCrashNote()
        let bytes = CrashNote(text: text, signal: nil).encoded()
        let descriptor: Int32
        do {
            descriptor = try fileSystem.open(crashNotePath, .createOrOpen)
            do {
                try fileSystem.truncate(descriptor, to: 0)
            } catch {
                fileSystem.close(descriptor)
                throw error
            }
        } catch {
            throw Self.ioError(error, "create the crash note", file: crashNotePath)
        }
        switch CrashSignals.arm(descriptor: descriptor, note: bytes, signalOffset: CrashNote.signalOffset) {
        case .success(let slot):
            condition.withLock { armedCrashNote = (descriptor, slot) }
        case .failure(let error):
            fileSystem.close(descriptor)
            throw Self.ioError(error, "install the crash note's signal handlers", file: crashNotePath)
        }
    }

    /// Puts back the signal handlers ``armCrashNote(_:)`` replaced, and removes the crash note file
    /// when no crash wrote it (as when the armed work returned). Does nothing when no note is armed.
    public func disarmCrashNote() {
        guard
            let armed = condition.withLock({
                let armed = armedCrashNote
                armedCrashNote = nil
                return armed
            })
        else { return }
        CrashSignals.disarm(slot: armed.slot)
        fileSystem.close(armed.descriptor)
        try? fileSystem.remove(crashNotePath)
    }

    /// Leaves `text` in the crash note file as it is, with no signal: for work that did not crash
    /// but did not finish either (a restoration held open), which the next open should know of.
    ///
    /// - Throws: ``JournalError`` with code ``JournalError/Code/ioFailure`` when the file cannot be
    ///   written.
    public func leaveCrashNote(_ text: String) throws {
        do {
            let descriptor = try fileSystem.open(crashNotePath, .createOrOpen)
            defer { fileSystem.close(descriptor) }
            try fileSystem.truncate(descriptor, to: 0)
            try fileSystem.writeAll(descriptor, CrashNote(text: text, signal: nil).encoded(), at: 0)
        } catch {
            throw Self.ioError(error, "write the crash note", file: crashNotePath)
        }
    }

    /// Removes the crash note file, once what it says was recorded.
    ///
    /// - Throws: ``JournalError`` with code ``JournalError/Code/ioFailure`` when it exists and cannot
    ///   be removed.
    public func clearCrashNote() throws {
        do {
            try fileSystem.remove(crashNotePath)
        } catch let error as SystemError where error.errno == ENOENT {
            return
        } catch {
            throw Self.ioError(error, "remove the crash note", file: crashNotePath)
        }
    }
}
