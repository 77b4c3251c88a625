/// The key of a journal entry: the identifiers from a root object down to one object.
///
/// A path such as `["Main", "Inbox", "Message-42"]` is shown as `Main/Inbox/Message-42`. A `/` or `\`
/// inside a component is escaped with a backslash, so every path has exactly one textual form and
/// ``init(parsing:)`` reads it back.
///
/// Paths order component by component, so that a parent sorts immediately before its descendants.
public struct RestorationPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The identifiers from the root to the object, outermost first.
    public var components: [String] {
        didSet { pathHash = Self.hash(of: components) }
    }

    /// The path's hash, computed once when its components are set: paths are hashed several times
    /// per entry (the segment's path table, the writer's cache, the epoch's sets), and hashing
    /// strings is most of what those lookups cost. Equal to ``EncodedPath/pathHashValue`` of the
    /// path's encoded form.
    private(set) var pathHash: Int

    /// Creates a path from its components, outermost first.
    public init(_ components: [String]) {
        self.components = components
        self.pathHash = Self.hash(of: components)
    }

    /// Creates a path from its components and their hash, already known to be
    /// ``hash(of:)`` of them.
    init(_ components: [String], pathHash: Int) {
        self.components = components
        self.pathHash = pathHash
    }

    /// Creates a path from its components, outermost first.
    public init(_ components: String...) {
        self.components = components
        self.pathHash = Self.hash(of: components)
    }

    /// Parses the textual form produced by ``description``.
    ///
    /// - Throws: ``JournalError`` with code ``JournalError/Code/invalidPath`` when a backslash is
    ///   followed by anything but `/` or `\`, or when the text ends in a lone backslash.
    public init(parsing text: String) throws {
        var components: [String] = []
        var current = ""
        var escaping = false
        for character in text {
            if escaping {
                guard character == "/" || character == "\\" else {
                    throw JournalError(
                        .invalidPath,
                        "The path \"\(text)\" escapes \"\(character)\"; only \"/\" and \"\\\" can be escaped.")
                }
                current.append(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "/" {
                components.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        guard !escaping else {
            throw JournalError(.invalidPath, "The path \"\(text)\" ends in an unfinished escape.")
        }
        if !text.isEmpty { components.append(current) }
        self.components = components
        self.pathHash = Self.hash(of: components)
    }

    /// The path with `/` between components and `/` or `\` inside a component escaped with `\`.
    public var description: String {
        components.map { component in
            var escaped = ""
            escaped.reserveCapacity(component.utf8.count)
            for character in component {
                if character == "/" || character == "\\" { escaped.append("\\") }
                escaped.append(character)
            }
            return escaped
        }.joined(separator: "/")
    }

    /// The path of the object that contains this one, or `nil` for a root or the empty path.
    public var parent: RestorationPath? {
        components.isEmpty ? nil : RestorationPath(Array(components.dropLast()))
    }

    /// Returns this path extended by one identifier.
    public func appending(_ component: String) -> RestorationPath {
        RestorationPath(components + [component])
    }

    /// Whether `prefix` is this path or one of its ancestors.
    public func hasPrefix(_ prefix: RestorationPath) -> Bool {
        prefix.components.count <= components.count
            && zip(prefix.components, components).allSatisfy { $0 == $1 }
    }

    /// Two paths are equal when their components are (as `String`s compare: canonically equivalent
    /// spellings are equal).
    public static func == (lhs: RestorationPath, rhs: RestorationPath) -> Bool {
        lhs.pathHash == rhs.pathHash && lhs.components == rhs.components
    }

    /// Feeds `hasher` the path's hash, computed once from its components.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(pathHash)
    }

    /// What hashing `components` gives with an unseeded `Hasher`: the count, then each component as
    /// `String` hashes itself (its NFC UTF-8 bytes and a 0xFF terminator). ASCII components, NFC as
    /// they are, go to the hasher together in one call instead of one call or more each.
    static func hash(of components: [String]) -> Int {
        var hasher = Hasher()
        hasher.combine(components.count)
        withUnsafeTemporaryAllocation(byteCount: 256, alignment: 1) { buffer in
            var used = 0
            for component in components {
                let gathered = component.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
                    guard utf8.count < buffer.count - used, EncodedPath.isASCII(UnsafeRawBufferPointer(utf8)) else {
                        return false
                    }
                    UnsafeMutableRawBufferPointer(rebasing: buffer[used..<used + utf8.count]).copyMemory(
                        from: UnsafeRawBufferPointer(utf8))
                    buffer[used + utf8.count] = 0xFF
                    used += utf8.count + 1
                    return true
                }
                if gathered == true { continue }
                if used > 0 {
                    hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: buffer[..<used]))
                    used = 0
                }
                // Not ASCII, or too long to gather: hashed by String itself, which normalizes.
                hasher.combine(component)
            }
            if used > 0 { hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: buffer[..<used])) }
        }
        return hasher.finalize()
    }

    /// Orders paths component by component, comparing components as `String`s compare (by their
    /// Unicode scalars once normalized, which for ASCII is by their bytes), so that a parent sorts
    /// before its descendants and canonically equivalent spellings sort as the same path.
    public static func < (lhs: RestorationPath, rhs: RestorationPath) -> Bool {
        for (left, right) in zip(lhs.components, rhs.components) where left != right {
            return left < right
        }
        return lhs.components.count < rhs.components.count
    }
}
