import CLZ4

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The LZ4 frame format (what the `lz4` tool reads and writes), with a content checksum and linked
/// 4 MiB blocks: the container of checkpoints.
final class LZ4FrameCompressor {
    private var context: OpaquePointer?
    private var preferences = LZ4F_preferences_t()

    init() throws {
        guard !isError(LZ4F_createCompressionContext(&context, UInt32(LZ4F_VERSION))) else {
            throw FormatViolation("liblz4 could not create a frame compression context")
        }
        preferences.frameInfo.blockSizeID = LZ4F_max4MB
        preferences.frameInfo.blockMode = LZ4F_blockLinked
        preferences.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled
        preferences.compressionLevel = 0
    }

    deinit { LZ4F_freeCompressionContext(context) }

    private func isError(_ code: Int) -> Bool { LZ4F_isError(code) != 0 }

    private func run(capacity: Int, _ body: (UnsafeMutableRawPointer, Int) -> Int) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: capacity)
        let written = output.withUnsafeMutableBytes { body($0.baseAddress!, $0.count) }
        guard !isError(written) else {
            throw FormatViolation("LZ4 frame compression failed: \(String(cString: LZ4F_getErrorName(written)))")
        }
        output.removeLast(output.count - written)
        return output
    }

    /// The frame header.
    func begin() throws -> [UInt8] {
        try run(capacity: Int(LZ4F_HEADER_SIZE_MAX)) { LZ4F_compressBegin(context, $0, $1, &preferences) }
    }

    /// Compresses more content.
    func update(_ bytes: [UInt8]) throws -> [UInt8] {
        try run(capacity: LZ4F_compressBound(bytes.count, &preferences)) { destination, capacity in
            bytes.withUnsafeBytes { LZ4F_compressUpdate(context, destination, capacity, $0.baseAddress, $0.count, nil) }
        }
    }

    /// The rest of the frame: the last block, the end mark and the content checksum.
    func end() throws -> [UInt8] {
        try run(capacity: LZ4F_compressBound(0, &preferences)) { LZ4F_compressEnd(context, $0, $1, nil) }
    }
}

/// Decompresses one LZ4 frame fed in pieces, refusing to produce more than a limit.
///
/// The frame decompresses straight into one growing buffer. It grows with `realloc`, which moves a
/// large buffer by remapping its pages rather than copying them, and is sized from the first feed
/// so that a typical checkpoint needs no growth at all; pages reserved but never written cost nothing.
final class LZ4FrameDecompressor {
    private var context: OpaquePointer?
    private var buffer: UnsafeMutableRawPointer?
    private var capacity = 0
    private var produced = 0
    /// The bytes ``decompress(from:into:)`` produced so far.
    private var streamed = 0
    private(set) var finished = false
    private let limit: Int

    init(limit: Int) throws {
        self.limit = limit
        guard LZ4F_isError(LZ4F_createDecompressionContext(&context, UInt32(LZ4F_VERSION))) == 0 else {
            throw FormatViolation("liblz4 could not create a frame decompression context")
        }
    }

    deinit {
        LZ4F_freeDecompressionContext(context)
        free(buffer)
    }

    /// Hands the bytes decompressed so far to a ``StateArena``; the decompressor is empty afterwards.
    func takeOutput() -> StateArena {
        let arena = StateArena(shrinking: buffer, count: produced)
        buffer = nil
        capacity = 0
        produced = 0
        return arena
    }

    /// Decompresses what fits of `input` into `destination` in one step of the frame, and returns
    /// how many bytes it consumed and produced: for readers that take the content a window at a
    /// time instead of whole (``takeOutput()`` then holds nothing). The limit counts every byte
    /// produced, as with ``feed(_:)``.
    func decompress(from input: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer)
        throws(FormatViolation) -> (consumed: Int, produced: Int)
    {
        guard !finished, let source = input.baseAddress, let target = destination.baseAddress else { return (0, 0) }
        var sourceSize = input.count
        var destinationSize = destination.count
        var options = LZ4F_decompressOptions_t()
        options.skipChecksums = 1
        let hint = LZ4F_decompress(context, target, &destinationSize, source, &sourceSize, &options)
        if LZ4F_isError(hint) != 0 {
            throw FormatViolation("the LZ4 frame is damaged: \(String(cString: LZ4F_getErrorName(hint)))")
        }
        streamed += destinationSize
        guard streamed <= limit else { throw FormatViolation("the LZ4 frame decompresses to more than \(limit) bytes") }
        if hint == 0 { finished = true }
        return (sourceSize, destinationSize)
    }

    /// Feeds compressed bytes; returns how many of them belong to the frame.
    func feed(_ input: UnsafeRawBufferPointer) throws(FormatViolation) -> Int {
        var consumed = 0
        while consumed < input.count && !finished {
            if produced == capacity {
                // A checkpoint's content compresses about 5 to 10 times; 16 times the first piece
                // fed (up to the limit, plus one byte to notice going beyond it) is rarely outgrown.
                let wanted = capacity == 0 ? input.count * 16 : capacity * 2
                let grown = min(max(wanted, 1 << 16), limit + 1)
                guard grown > capacity, let moved = realloc(buffer, grown) else {
                    throw FormatViolation("the LZ4 frame decompresses to more than \(limit) bytes")
                }
                buffer = moved
                capacity = grown
            }
            var sourceSize = input.count - consumed
            var destinationSize = capacity - produced
            // The frame's content checksum (XXH32) is not checked: the content ends in its own
            // CRC-32C, which the caller checks over every byte, so a second pass would add nothing.
            var options = LZ4F_decompressOptions_t()
            options.skipChecksums = 1
            let hint = LZ4F_decompress(
                context, buffer! + produced, &destinationSize, input.baseAddress! + consumed, &sourceSize, &options)
            if LZ4F_isError(hint) != 0 {
                throw FormatViolation("the LZ4 frame is damaged: \(String(cString: LZ4F_getErrorName(hint)))")
            }
            consumed += sourceSize
            produced += destinationSize
            guard produced <= limit else {
                throw FormatViolation("the LZ4 frame decompresses to more than \(limit) bytes")
            }
            if hint == 0 { finished = true }
            if sourceSize == 0 && destinationSize == 0 { break }
        }
        return consumed
    }
}
