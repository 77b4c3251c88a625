import CLZ4

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
final class LZ4FrameDecompressor {
    private var context: OpaquePointer?
    private(set) var output: [UInt8] = []
    private(set) var finished = false
    private let limit: Int
    private var scratch = [UInt8](repeating: 0, count: 1 << 20)

    init(limit: Int) throws {
        self.limit = limit
        guard LZ4F_isError(LZ4F_createDecompressionContext(&context, UInt32(LZ4F_VERSION))) == 0 else {
            throw FormatViolation("liblz4 could not create a frame decompression context")
        }
    }

    deinit { LZ4F_freeDecompressionContext(context) }

    /// Feeds compressed bytes; returns how many of them belong to the frame.
    func feed(_ input: UnsafeRawBufferPointer) throws(FormatViolation) -> Int {
        var consumed = 0
        while consumed < input.count && !finished {
            var sourceSize = input.count - consumed
            var destinationSize = scratch.count
            let hint = scratch.withUnsafeMutableBytes { destination in
                LZ4F_decompress(context, destination.baseAddress, &destinationSize, input.baseAddress! + consumed, &sourceSize, nil)
            }
            if LZ4F_isError(hint) != 0 {
                throw FormatViolation("the LZ4 frame is damaged: \(String(cString: LZ4F_getErrorName(hint)))")
            }
            consumed += sourceSize
            guard output.count + destinationSize <= limit else {
                throw FormatViolation("the LZ4 frame decompresses to more than \(limit) bytes")
            }
            output.append(contentsOf: scratch[0..<destinationSize])
            if hint == 0 { finished = true }
            if sourceSize == 0 && destinationSize == 0 { break }
        }
        return consumed
    }
}
