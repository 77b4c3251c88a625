import Foundation
import StateJournalTestSupport
import Testing

@testable import StateJournal

/// The patch codec of format version 3: a state written as copy, skip and insert runs against the
/// path's previous version.
@Suite struct StatePatchTests {
    /// Encodes the patch from `old` to `new` with no size limit, applies it, and returns the result
    /// and the patch's size.
    private static func roundTrip(_ old: [UInt8], _ new: [UInt8], limit: Int = .max) throws -> (
        state: [UInt8]?, patchSize: Int
    ) {
        var writer = ByteWriter()
        let fits = old.withUnsafeBytes { old in
            new.withUnsafeBytes { new in StatePatch.encode(from: old, to: new, into: &writer, limit: limit) }
        }
        guard fits else { return (nil, writer.bytes.count) }
        var output: [UInt8] = []
        try writer.bytes.withUnsafeBytes { patch in
            try old.withUnsafeBytes { old in try StatePatch.apply(patch, to: old, into: &output) }
        }
        return (output, writer.bytes.count)
    }

    @Test func randomPreviousAndNewStatesRoundTripThroughThePatchCodec() throws {
        var random = SplitMix64(seed: 0xC0_4AC7)
        for round in 0..<3_000 {
            let size = Int.random(in: 0...600, using: &random)
            let old: [UInt8] =
                round % 3 == 0
                ? random.bytes(size)
                : WorkloadGenerator.freshState(for: RestorationPath("P"), size: size, random: &random)
            var new = old
            switch round % 5 {
            case 0:
                new = random.bytes(Int.random(in: 0...600, using: &random))
            default:
                // A few edits: bytes replaced, runs inserted and dropped anywhere, at the ends too.
                for _ in 0..<Int.random(in: 0...6, using: &random) {
                    let at = Int.random(in: 0...new.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0 where at < new.count: new[at] = UInt8.random(in: 0...255, using: &random)
                    case 1: new.insert(contentsOf: random.bytes(Int.random(in: 1...40, using: &random)), at: at)
                    default: new.removeSubrange(at..<min(new.count, at + Int.random(in: 1...40, using: &random)))
                    }
                }
            }
            let (state, _) = try Self.roundTrip(old, new)
            #expect(state == new, "round \(round): \(old.count) → \(new.count) bytes")
            // Under a limit, the encoder either gives up or makes a patch that still round-trips.
            let limited = try Self.roundTrip(old, new, limit: 8)
            if let state = limited.state { #expect(state == new) }
        }
    }

    @Test func aSmallChangeMakesASmallPatch() throws {
        let old = Array(#"{"id":"item-0","scrollOffset":1234.5,"modified":1790000060,"expanded":true}"#.utf8)
        let new = Array(#"{"id":"item-0","scrollOffset":87.25,"modified":1790000060,"expanded":true}"#.utf8)
        let (state, size) = try Self.roundTrip(old, new)
        #expect(state == new)
        #expect(size <= 8, "one run: copy, sizes and at most 6 inserted bytes")
        #expect(try Self.roundTrip(old, old).patchSize == 0)
    }

    @Test func patchesThatReachBeyondThePreviousVersionAreFormatViolations() {
        let old = Array("hello".utf8)
        let bad: [[UInt8]] = [
            [6, 0x10, 0x41],  // copies 6 of 5 bytes
            [3, 0x03],  // drops 3 after copying 3
            [0, 0x00],  // a run that changes nothing
            [0, 0x0F, 0x7F],  // drops 15 + 127
            [0, 0x20, 0x41],  // inserts 2 bytes, 1 present
            [0x80],  // a cut varint
        ]
        for patch in bad {
            var output: [UInt8] = []
            #expect(throws: FormatViolation.self, "\(patch)") {
                try patch.withUnsafeBytes { patch in
                    try old.withUnsafeBytes { old in try StatePatch.apply(patch, to: old, into: &output) }
                }
            }
        }
    }
}
