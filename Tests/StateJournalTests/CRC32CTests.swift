import StateJournalTestSupport
import Testing

@testable import StateJournal

/// The processor's CRC-32C instruction and the table give the checksums of a plain bitwise
/// implementation, for every length around the 8-byte steps, at every alignment, continued or not.
@Suite struct CRC32CTests {
    @Test func theKnownCheckValue() {
        let bytes = Array("123456789".utf8)
        #expect(CRC32C.checksum(bytes) == 0xE306_9283)
        #expect(bytes.withUnsafeBytes { CRC32C.tableChecksum($0) } == 0xE306_9283)
    }

    @Test func everyLengthAndAlignmentMatchesTheBitwiseChecksum() {
        var random = SplitMix64(seed: 7)
        let bytes = (0..<600).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        bytes.withUnsafeBytes { all in
            for start in 0..<8 {
                for length in 0...(all.count - start - 8) where length < 80 || length % 37 == 0 {
                    let piece = UnsafeRawBufferPointer(rebasing: all[start..<start + length])
                    let expected = TestCRC32C.checksum(Array(piece))
                    #expect(CRC32C.checksum(piece) == expected, "start \(start), length \(length)")
                    #expect(CRC32C.tableChecksum(piece) == expected, "start \(start), length \(length)")
                    let split = length / 3
                    let first = UnsafeRawBufferPointer(rebasing: piece[0..<split])
                    let rest = UnsafeRawBufferPointer(rebasing: piece[split...])
                    #expect(CRC32C.checksum(rest, continuing: CRC32C.checksum(first)) == expected)
                }
            }
        }
    }
}
