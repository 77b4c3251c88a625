import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension CheckpointFile {
    /// The size from which a checkpoint is loaded by two threads when the machine has two cores or
    /// more: below it, starting a thread costs more than it saves.
    static let pipelinedLoadThreshold: Int64 = 4 << 20

    /// Whether a checkpoint file of `size` bytes is loaded by two threads.
    static func loadsPipelined(size: Int64) -> Bool {
        size >= pipelinedLoadThreshold && ProcessInfo.processInfo.activeProcessorCount > 1
    }

    /// Reads, decompresses and decodes the checkpoint file open as `descriptor`, `size` bytes long,
    /// on two threads: the calling one reads and decompresses into one block of address space
    /// reserved for the largest content the file could hold (`limit`), which never moves, while a
    /// second one checksums and decodes what is there, a step behind. The result, and the error
    /// for a damaged file, are those of decompressing whole, then checking the checksum, then
    /// decoding (``load(_:storeID:in:pipelined:)`` with `pipelined` false). Returns `nil`, having
    /// read nothing, when the address space cannot be reserved (a process limited by
    /// `ulimit -v`), for the caller to load it on one thread.
    static func loadPipelined(
        _ descriptor: Int32, size: Int64, limit: Int, fileSystem: any FileSystem
    ) throws -> CheckpointContent? {
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let reserved = (limit + 1 + pageSize - 1) / pageSize * pageSize
        // Reserved, not committed: only the pages the content fills cost memory.
        guard
            let mapped = mmap(
                nil, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
            mapped != MAP_FAILED
        else { return nil }
        let decoding = DecodingThread(
            buffer: mapped, reservationLimit: Int(min(size, Int64(Int32.max))))
        var keepsMapping = false
        defer { if !keepsMapping { munmap(mapped, reserved) } }
        decoding.start()
        let produced: Int
        do {
            produced = try decompress(descriptor, size: size, limit: limit, fileSystem: fileSystem, into: mapped) {
                decoding.publish($0)
            }
        } catch {
            decoding.abandon()
            throw error
        }
        var (decoder, outcome) = decoding.finish(total: produced)
        guard produced >= 4 + 52 else { throw FormatViolation("checkpoint content is too short") }
        let bytes = UnsafeRawBufferPointer(start: mapped, count: produced)
        let bodyCount = produced - 4
        let crc = CRC32C.checksum(
            UnsafeRawBufferPointer(rebasing: bytes[outcome.checksummed..<bodyCount]), continuing: outcome.checksum)
        guard crc == ByteReader.littleEndianU32(bytes, at: bodyCount) else {
            throw FormatViolation("checkpoint content checksum mismatch")
        }
        if let failure = outcome.failure { throw failure }
        try decoder.read(UnsafeRawBufferPointer(rebasing: bytes[0..<bodyCount]), complete: true)
        // The pages beyond the content go back; the arena unmaps the rest when the table goes.
        let used = (max(produced, 1) + pageSize - 1) / pageSize * pageSize
        if reserved > used { munmap(mapped + used, reserved - used) }
        keepsMapping = true
        return decoder.content(in: StateArena(mapping: mapped, mappedLength: used, count: produced))
    }

    /// Reads the file and decompresses its LZ4 frame into `output` (room for `limit` bytes and one
    /// more), calling `progress` with the bytes produced so far after each read; returns their
    /// count.
    private static func decompress(
        _ descriptor: Int32, size: Int64, limit: Int, fileSystem: any FileSystem,
        into output: UnsafeMutableRawPointer, progress: (Int) -> Void
    ) throws -> Int {
        let decompressor = try LZ4FrameDecompressor(limit: limit)
        var produced = 0
        try readFrame(descriptor, size: size, fileSystem: fileSystem, decompressor: decompressor) { input in
            var consumed = 0
            while consumed < input.count && !decompressor.finished {
                let step = try decompressor.decompress(
                    from: UnsafeRawBufferPointer(rebasing: input[consumed...]),
                    into: UnsafeMutableRawBufferPointer(start: output + produced, count: limit + 1 - produced))
                consumed += step.consumed
                produced += step.produced
                if step.consumed == 0 && step.produced == 0 { break }
            }
            progress(produced)
            return consumed
        }
        return produced
    }
}

/// The second thread of a pipelined checkpoint load: it checksums and decodes the content as the
/// loading thread decompresses it into `buffer`, which neither moves nor changes once written.
private final class DecodingThread: @unchecked Sendable {
    // Unchecked: the fields below `condition` are read and written with it locked; the decoder and
    // the bytes of `buffer` below `available` belong to the thread until `finish(total:)`.

    /// Where the decoding stopped: the checksum of the content's first `checksummed` bytes, and the
    /// error that stopped the decoder early, if one did.
    struct Outcome {
        var checksum: UInt32 = 0
        var checksummed = 0
        var failure: FormatViolation?
    }

    private let buffer: UnsafeMutableRawPointer
    private let condition = NSCondition()
    /// The bytes decompressed so far.
    private var available = 0
    /// Set when the loading thread stops decompressing, whether it finished or failed.
    private var stopped = false
    private var done = false
    private var decoder: CheckpointContentDecoder
    private var outcome = Outcome()

    init(buffer: UnsafeMutableRawPointer, reservationLimit: Int) {
        self.buffer = buffer
        decoder = CheckpointContentDecoder(reservationLimit: reservationLimit)
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "StateJournal checkpoint decoding"
        thread.start()
    }

    /// Called by the loading thread: the first `count` bytes are decompressed.
    func publish(_ count: Int) {
        condition.lock()
        available = count
        condition.signal()
        condition.unlock()
    }

    /// Called by the loading thread when decompression failed: waits for the thread to stop.
    func abandon() {
        _ = finish(total: nil)
    }

    /// Called by the loading thread once the content is whole, `total` bytes: waits for the thread
    /// to stop, and returns the decoder (which read all but the last entries) and where it stopped.
    func finish(total: Int?) -> (CheckpointContentDecoder, Outcome) {
        condition.lock()
        if let total { available = total }
        stopped = true
        condition.broadcast()
        while !done { condition.wait() }
        condition.unlock()
        // Moved out, not copied, so that the slots the caller adds are not copied first.
        var taken = CheckpointContentDecoder()
        swap(&taken, &decoder)
        return (taken, outcome)
    }

    private func run() {
        // Checksums and decodes only whole steps: the last 4 bytes may be the checksum itself,
        // and what the loading thread has not published yet is not read.
        let step = 1 << 20
        var seen = 0
        while true {
            condition.lock()
            while !stopped && available - seen < step { condition.wait() }
            let isStopped = stopped
            let count = available
            condition.unlock()
            if isStopped { break }
            seen = count
            let end = count - 4
            guard end > 0 else { continue }
            if end > outcome.checksummed {
                outcome.checksum = CRC32C.checksum(
                    UnsafeRawBufferPointer(start: buffer + outcome.checksummed, count: end - outcome.checksummed),
                    continuing: outcome.checksum)
                outcome.checksummed = end
            }
            guard outcome.failure == nil else { continue }
            do throws(FormatViolation) {
                try decoder.read(UnsafeRawBufferPointer(start: buffer, count: end), complete: false)
            } catch {
                outcome.failure = error
            }
        }
        condition.lock()
        done = true
        condition.broadcast()
        condition.unlock()
    }
}
