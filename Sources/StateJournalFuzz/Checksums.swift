import CLZ4

/// CRC-32C (Castagnoli), computed a byte at a time: the fuzz harnesses frame inputs with it so that
/// the engine's checksums pass and the decoders behind them see the bytes.
enum FuzzCRC32C {
    private static let table: [UInt32] = (0..<256).map { byte in
        var crc = UInt32(byte)
        for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        return crc
    }

    static func checksum<Bytes: Sequence>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian<Value: FixedWidthInteger>(_ value: Value) {
        for index in 0..<(Value.bitWidth / 8) { append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    func littleEndian<Value: FixedWidthInteger>(_: Value.Type, at offset: Int) -> Value? {
        guard offset >= 0, offset + Value.bitWidth / 8 <= count else { return nil }
        var value: Value = 0
        for index in 0..<(Value.bitWidth / 8) { value |= Value(self[offset + index]) << (8 * index) }
        return value
    }
}

/// One-shot LZ4 frames with a content checksum, the container of checkpoints.
enum FuzzLZ4Frame {
    static func compress(_ content: [UInt8]) -> [UInt8] {
        var preferences = LZ4F_preferences_t()
        preferences.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled
        preferences.frameInfo.blockMode = LZ4F_blockLinked
        let bound = LZ4F_compressFrameBound(content.count, &preferences)
        var output = [UInt8](repeating: 0, count: bound)
        let written = output.withUnsafeMutableBytes { destination in
            content.withUnsafeBytes { source in
                LZ4F_compressFrame(destination.baseAddress, bound, source.baseAddress, source.count, &preferences)
            }
        }
        guard LZ4F_isError(written) == 0 else { return [] }
        output.removeLast(output.count - written)
        return output
    }

    /// The content of a frame, or `nil` when it is not one frame or decompresses beyond `limit`.
    static func decompress(_ frame: [UInt8], limit: Int = 1 << 26) -> [UInt8]? {
        var context: OpaquePointer?
        guard LZ4F_isError(LZ4F_createDecompressionContext(&context, UInt32(LZ4F_VERSION))) == 0 else { return nil }
        defer { LZ4F_freeDecompressionContext(context) }
        var output: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 1 << 16)
        var consumed = 0
        while consumed < frame.count {
            var sourceSize = frame.count - consumed
            var destinationSize = scratch.count
            let hint = frame.withUnsafeBytes { source in
                scratch.withUnsafeMutableBytes { destination in
                    LZ4F_decompress(
                        context, destination.baseAddress, &destinationSize, source.baseAddress! + consumed, &sourceSize,
                        nil)
                }
            }
            guard LZ4F_isError(hint) == 0 else { return nil }
            consumed += sourceSize
            output.append(contentsOf: scratch[0..<destinationSize])
            guard output.count <= limit else { return nil }
            if hint == 0 { return output }
            if sourceSize == 0 && destinationSize == 0 { return nil }
        }
        return nil
    }
}
