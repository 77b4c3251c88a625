import CLZ4

/// LZ4 block compression against a dictionary, through liblz4's public API only
/// (`LZ4_loadDict`, `LZ4_compress_fast_continue`, `LZ4_decompress_safe_usingDict`).
///
/// Not thread-safe: each writer owns one.
final class LZ4Compressor {
    /// Dictionaries up to this size are taught to the stream by compressing them as a block whose
    /// output is thrown away, after a fast reset. `LZ4_loadDict` clears the stream's whole 16 KiB
    /// hash table first, which costs more than the rest of a one-entry epoch's commit; the
    /// throw-away block hashes the dictionary's positions into the table the same way, and the
    /// fast reset makes stale table entries unreachable without clearing them. Beyond this size,
    /// `LZ4_loadDict` hashes fewer positions per byte and wins.
    static let smallDictionaryLimit = 2048

    private let stream: UnsafeMutablePointer<LZ4_stream_t>
    private var output: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: Int(LZ4_compressBound(Int32(smallDictionaryLimit))))

    init() {
        guard let stream = LZ4_createStream() else { fatalError("liblz4 could not allocate a stream state") }
        self.stream = stream
    }

    deinit { LZ4_freeStream(stream) }

    /// Compresses `input` as one LZ4 block whose matches may reach into `dictionary`, into a buffer
    /// of the compressor's that ``appendOutput(count:to:)`` copies from.
    ///
    /// - Returns: the compressed block's size, or `nil` when it would not be smaller than `input`.
    func compress(_ input: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer) -> Int? {
        guard input.count > 0, input.count <= Int(LZ4_MAX_INPUT_SIZE) else { return nil }
        LZ4_resetStream_fast(stream)
        if dictionary.count > Self.smallDictionaryLimit {
            LZ4_loadDict(stream, dictionary.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(dictionary.count))
        } else if dictionary.count > 0 {
            let taught = scratch.withUnsafeMutableBytes { discarded in
                LZ4_compress_fast_continue(
                    stream, dictionary.baseAddress!.assumingMemoryBound(to: CChar.self),
                    discarded.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(dictionary.count),
                    Int32(discarded.count), 1)
            }
            // Cannot fail with an output of the bound's size; if it did, the block below would simply
            // find no matches in the dictionary.
            _ = taught
        }
        let capacity = input.count - 1
        guard capacity > 0 else { return nil }
        if output.count < capacity { output = [UInt8](repeating: 0, count: capacity) }
        let written = output.withUnsafeMutableBytes { destination in
            LZ4_compress_fast_continue(
                stream, input.baseAddress!.assumingMemoryBound(to: CChar.self),
                destination.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(input.count), Int32(capacity), 1)
        }
        guard written > 0 else { return nil }
        return Int(written)
    }

    /// Appends the first `count` bytes of the last compressed block to `writer`.
    func appendOutput(count: Int, to writer: inout ByteWriter) {
        output.withUnsafeBytes { writer.raw(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }
}

enum LZ4Decompressor {
    /// Decompresses one block into `destination`, which must be exactly the original size.
    ///
    /// - Returns: `false` when the block is malformed or does not decode to exactly that size.
    static func decompress(
        _ block: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer,
        into destination: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard block.count > 0, block.count <= Int(Int32.max), destination.count <= Int(Int32.max) else {
            return block.count == 0 && destination.count == 0
        }
        let empty: [UInt8] = [0]
        return empty.withUnsafeBytes { placeholder in
            let dictionaryStart = (dictionary.count > 0 ? dictionary : placeholder).baseAddress!
            let outputStart =
                destination.count > 0
                ? destination.baseAddress! : UnsafeMutableRawPointer(mutating: placeholder.baseAddress!)
            let decoded = LZ4_decompress_safe_usingDict(
                block.baseAddress!.assumingMemoryBound(to: CChar.self), outputStart.assumingMemoryBound(to: CChar.self),
                Int32(block.count), Int32(destination.count), dictionaryStart.assumingMemoryBound(to: CChar.self),
                Int32(dictionary.count))
            return Int(decoded) == destination.count
        }
    }
}
