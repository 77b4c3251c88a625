import StateJournalTestSupport
import Testing

@testable import StateJournal

/// A path's stored hash is exactly its components' hash and its encoded form's, so equal paths
/// (`==` compares components as `String` does, by canonical equivalence) always hash alike, whatever
/// the components hold, and a path found by its bytes in a table is found by its value too.
@Suite struct RestorationPathHashTests {
    private func componentsHash(_ path: RestorationPath) -> Int {
        var hasher = Hasher()
        hasher.combine(path.components)
        return hasher.finalize()
    }

    @Test func aPathHashesAsItsComponents() {
        var random = SplitMix64(seed: 11)
        let pieces = [
            "", "Main", "Window-1", "Item-42", "caf\u{E9}", "cafe\u{301}", "\u{212A}elvin", "Kelvin", "\u{1F600}",
            "with/slash", String(repeating: "x", count: 300), String(repeating: "\u{E9}", count: 200),
        ]
        var paths: [RestorationPath] = [RestorationPath([])]
        for _ in 0..<2000 {
            let depth = Int(random.next() % 6) + 1
            paths.append(RestorationPath((0..<depth).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }))
        }
        for path in paths {
            #expect(path.pathHash == componentsHash(path), "\(path)")
            var encoded = ByteWriter()
            encoded.varint(path.components.count)
            for component in path.components { encoded.lengthPrefixed(component) }
            let fromBytes = encoded.bytes.withUnsafeBytes {
                EncodedPath(start: $0.baseAddress!, count: $0.count).pathHashValue
            }
            #expect(path.pathHash == fromBytes, "\(path)")
        }
    }

    @Test func aPathWhoseComponentsChangeHashesAsANewPathWithThem() {
        var path = RestorationPath("Main", "Inbox")
        path.components.append("Message-42")
        #expect(path == RestorationPath("Main", "Inbox", "Message-42"))
        #expect(path.hashValue == RestorationPath("Main", "Inbox", "Message-42").hashValue)
        #expect(Set([path, RestorationPath("Main", "Inbox", "Message-42")]).count == 1)
    }

    @Test func canonicallyEquivalentPathsAreEqualAndHashAlike() {
        let pairs = [
            (RestorationPath("Main", "caf\u{E9}"), RestorationPath("Main", "cafe\u{301}")),
            (RestorationPath("\u{212A}", "List"), RestorationPath("K", "List")),
            (RestorationPath("a;b"), RestorationPath("a\u{37E}b")),
        ]
        for (left, right) in pairs {
            #expect(left == right)
            #expect(left.hashValue == right.hashValue, "\(left) and \(right)")
            #expect(Set([left, right]).count == 1)
        }
        #expect(RestorationPath("a", "b").hashValue != RestorationPath("ab").hashValue)
    }
}
