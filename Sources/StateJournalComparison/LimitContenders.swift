import CLZ4
import Foundation
import StateJournal

/// The entries of a pass as raw bytes: each path as text, a NUL byte, and the state. What the
/// physical limits write and compress, and what the journal's replay figure counts.
enum RawEntries {
    static func bytes(_ indices: some Sequence<Int>, of workload: AppStateWorkload) -> [UInt8] {
        var bytes: [UInt8] = []
        for index in indices {
            bytes.append(contentsOf: workload.path(index).description.utf8)
            bytes.append(0)
            bytes.append(contentsOf: workload.state(index))
        }
        return bytes
    }
}

/// The cost of the system calls alone: appending a pass's raw entries with `write`, and with
/// `fdatasync` after it when `syncing`.
final class RawWriteContender: PreservationContender {
    let syncing: Bool
    var name: String { syncing ? "raw-write+fdatasync" : "raw-write" }
    var restores: Bool { false }
    private var descriptor: Int32 = -1
    private var path = ""

    init(syncing: Bool) {
        self.syncing = syncing
    }

    func start(in directory: URL, with workload: AppStateWorkload) throws {
        path = directory.appendingPathComponent("\(name).log").path
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw RawFile.failure("create \(path)") }
        try save(Array(0..<workload.objectCount), of: workload)
    }

    func save(_ changed: [Int], of workload: AppStateWorkload) throws {
        let bytes = RawEntries.bytes(changed, of: workload)
        try bytes.withUnsafeBytes { try RawFile.writeAll(descriptor, $0) }
        if syncing && fdatasync(descriptor) != 0 { throw RawFile.failure("fdatasync \(path)") }
    }

    func restore() throws -> Int { 0 }

    var bytesOnDisk: Int? { FileSizes.size(of: path) }

    func finish() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }
}

/// LZ4's own speed on the same bytes: a pass's raw entries compressed, and the whole state's
/// raw entries decompressed for a restore.
final class LZ4Contender: PreservationContender {
    var name: String { "lz4" }
    private var output: [UInt8] = []
    private var compressedState: [UInt8] = []
    private var stateSize = 0
    private var objects = 0

    func start(in directory: URL, with workload: AppStateWorkload) throws {}

    func save(_ changed: [Int], of workload: AppStateWorkload) throws {
        let input = RawEntries.bytes(changed, of: workload)
        _ = compress(input)
    }

    func prepareRestore(with workload: AppStateWorkload) throws {
        let input = RawEntries.bytes(0..<workload.objectCount, of: workload)
        stateSize = input.count
        objects = workload.objectCount
        let size = compress(input)
        compressedState = Array(output.prefix(size))
    }

    func restore() throws -> Int {
        var decompressed = [UInt8](repeating: 0, count: stateSize)
        let count = compressedState.withUnsafeBytes { source in
            decompressed.withUnsafeMutableBytes { target in
                LZ4_decompress_safe(
                    source.baseAddress!.assumingMemoryBound(to: CChar.self),
                    target.baseAddress!.assumingMemoryBound(to: CChar.self),
                    Int32(source.count), Int32(target.count))
            }
        }
        guard count == stateSize else { throw JournalError(.damaged, "LZ4 could not decompress its own output.") }
        return objects
    }

    var bytesOnDisk: Int? { nil }

    func finish() {}

    /// Compresses `input` into `output` and returns the compressed size.
    private func compress(_ input: [UInt8]) -> Int {
        let bound = Int(LZ4_compressBound(Int32(input.count)))
        if output.count < bound { output = [UInt8](repeating: 0, count: bound) }
        return input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { target in
                Int(
                    LZ4_compress_default(
                        source.baseAddress!.assumingMemoryBound(to: CChar.self),
                        target.baseAddress!.assumingMemoryBound(to: CChar.self),
                        Int32(source.count), Int32(target.count)))
            }
        }
    }
}

/// Plain POSIX writes for the contenders that manage their own files.
enum RawFile {
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw failure("write")
            }
            offset += written
        }
    }

    static func failure(_ doing: String) -> JournalError {
        JournalError(.ioFailure, "Could not \(doing): \(String(cString: strerror(errno))).")
    }
}
