import StateJournal

/// A restoration's report as its `restorationCompleted` marker epoch records it, under
/// ``EpochMetadataKey/restorationReport``: what was restored, what was skipped and why, and the
/// diagnostics, so that tools can show each launch's restoration from the journal alone.
///
/// The encoding is UTF-8 text of at most ``maximumEncodedSize`` bytes, so that a restoration of
/// 100,000 skipped objects does not make a large marker: the lists keep as many items as fit (the
/// diagnostics first, then the skipped paths, then the restored ones, each list getting a fair
/// share of what is left), and the counts are always the full ones. Lines end with `\n`; fields
/// are separated by a tab, and a tab, line feed or backslash inside a field is written `\t`, `\n`
/// or `\\`:
///
/// ```
/// SJRR <tab> 1                                    the format and its version
/// epoch <tab> 12                                  the epoch whose state was restored
/// reason <tab> launch                             or recoveryAfterCrash, crashLoopFallback <tab> 9,
///                                                 requestedEpoch <tab> 7,
///                                                 restoredEpochCompacted <tab> 7 <tab> 9
/// counts <tab> 4 <tab> 1 <tab> 0                  restored, skipped, diagnostics (all of them)
/// r <tab> e <tab> 1 <tab> 0 <tab> TYPE <tab> PATH restored: source (c restoration class,
///                                                 d delegate, e existing, f registered
///                                                 factory), decoded, migrated
/// s <tab> REASON <tab> DETAIL <tab> TYPE <tab> PATH  skipped; REASON is declined, ancestorDeclined
///                                                 (DETAIL: the ancestor's path), unregistered
///                                                 (DETAIL: the class name), notFound, corrupt or
///                                                 migrationFailed (DETAIL: the error); TYPE may be
///                                                 empty
/// d <tab> CODE <tab> PATH <tab> TEXT              a diagnostic: classMismatch, decodeFailed,
///                                                 createdWithoutParent, unfinished (PATH empty),
///                                                 outsideHierarchy or coder, and its sentence
/// ```
///
/// Paths are written as ``RestorationPath/description`` prints them. Readers ignore lines they do
/// not know, so that later versions of the same format number can add some; a new format number
/// means the report cannot be read by this version.
public struct RecordedRestorationReport: Sendable, Hashable {
    /// The format number this version writes and reads.
    public static let formatVersion = 1
    /// The most bytes an encoded report takes, well under the 16 KiB a metadata value may hold.
    public static let maximumEncodedSize = 8 << 10
    /// The most bytes one listed item takes; longer details are cut.
    static let maximumLineSize = 512

    /// One restored object.
    public struct Restored: Sendable, Hashable {
        /// Its restoration path.
        public var path: RestorationPath
        /// The saved type name.
        public var savedTypeName: String
        /// How it was obtained.
        public var source: RestorationSource
        /// Whether its state was decoded.
        public var decoded: Bool
        /// Whether registered migrations rewrote its saved values first.
        public var migrated: Bool
    }

    /// One saved path that was not restored.
    public struct Skipped: Sendable, Hashable {
        /// The saved path.
        public var path: RestorationPath
        /// The saved type name, when the entry could be read.
        public var savedTypeName: String?
        /// Why it was skipped: `declined` (its restoration class returned `nil`),
        /// `ancestorDeclined`, `unregistered` (no such restoration class is registered),
        /// `notFound`, `corrupt` or `migrationFailed`.
        public var reason: String
        /// The ancestor's path, the unregistered class name or the error, when the reason has one.
        public var detail: String
    }

    /// One diagnostic.
    public struct Diagnostic: Sendable, Hashable {
        /// `classMismatch`, `decodeFailed`, `createdWithoutParent`, `unfinished`,
        /// `outsideHierarchy` or `coder`.
        public var code: String
        /// The path concerned, if any.
        public var path: RestorationPath?
        /// The diagnostic in a sentence.
        public var text: String
    }

    /// The epoch whose state was restored.
    public var epoch: UInt64?
    /// Why that state was chosen.
    public var reason: RestorationReason?
    /// How many objects were restored.
    public var restoredCount: Int
    /// How many saved paths were skipped.
    public var skippedCount: Int
    /// How many diagnostics there were.
    public var diagnosticCount: Int
    /// The restored objects the record lists: all of them, or the first that fit.
    public var restored: [Restored]
    /// The skipped paths the record lists: all of them, or the first that fit.
    public var skipped: [Skipped]
    /// The diagnostics the record lists: all of them, or the first that fit.
    public var diagnostics: [Diagnostic]

    /// Whether some items were left out of the lists to bound the record's size.
    public var isTruncated: Bool {
        restored.count < restoredCount || skipped.count < skippedCount || diagnostics.count < diagnosticCount
    }

    /// The record of a report.
    public init(_ report: RestorationReport) {
        epoch = report.epoch.map { $0.epoch }
        reason = report.reason
        restoredCount = report.restored.count
        skippedCount = report.skipped.count
        diagnosticCount = report.diagnostics.count
        restored = report.restored.map {
            Restored(
                path: $0.path, savedTypeName: $0.savedTypeName, source: $0.source, decoded: $0.decoded,
                migrated: $0.migrated)
        }
        skipped = report.skipped.map { skipped in
            let (reason, detail): (String, String) =
                switch skipped.reason {
                case .declinedByRestorationClass: ("declined", "")
                case .ancestorDeclined(let ancestor): ("ancestorDeclined", ancestor.description)
                case .unregisteredRestorationClass(let name): ("unregistered", name)
                case .notFound: ("notFound", "")
                case .corruptEntry(let message): ("corrupt", message)
                case .migrationFailed(let message): ("migrationFailed", message)
                }
            return Skipped(path: skipped.path, savedTypeName: skipped.savedTypeName, reason: reason, detail: detail)
        }
        diagnostics = report.diagnostics.map { diagnostic in
            let (code, path): (String, RestorationPath?) =
                switch diagnostic {
                case .classMismatch(let path, _, _): ("classMismatch", path)
                case .decodeFailed(let path, _): ("decodeFailed", path)
                case .createdObjectWithoutParent(let path): ("createdWithoutParent", path)
                case .unfinishedRestoration: ("unfinished", nil)
                case .restoredControllerOutsideHierarchy(let path): ("outsideHierarchy", path)
                case .coder(let diagnostic): ("coder", diagnostic.path)
                }
            return Diagnostic(code: code, path: path, text: diagnostic.description)
        }
    }

    /// The encoded record, at most ``maximumEncodedSize`` bytes.
    public func encoded() -> String {
        var lines = ["SJRR\t\(Self.formatVersion)"]
        if let epoch { lines.append("epoch\t\(epoch)") }
        if let reason { lines.append((["reason"] + Self.fields(of: reason)).joined(separator: "\t")) }
        lines.append("counts\t\(restoredCount)\t\(skippedCount)\t\(diagnosticCount)")
        var used = lines.reduce(0) { $0 + $1.utf8.count + 1 }
        let lists: [[String]] = [
            diagnostics.lazy.map { Self.line(["d", $0.code, $0.path?.description ?? "", $0.text]) },
            skipped.lazy.map { Self.line(["s", $0.reason, $0.detail, $0.savedTypeName ?? "", $0.path.description]) },
            restored.lazy.map {
                Self.line([
                    "r", Self.code(of: $0.source), $0.decoded ? "1" : "0", $0.migrated ? "1" : "0", $0.savedTypeName,
                    $0.path.description,
                ])
            },
        ].map { Array($0) }
        for (index, list) in lists.enumerated() {
            let share = (Self.maximumEncodedSize - used) / (lists.count - index)
            var spent = 0
            for line in list {
                let size = line.utf8.count + 1
                guard spent + size <= share else { break }
                spent += size
                lines.append(line)
            }
            used += spent
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads an encoded record.
    ///
    /// - Throws: ``RestorationError/Code/corruptEntry`` when the text is not a record, or one of a
    ///   format number this version does not know.
    public init(decoding text: String) throws {
        func corrupt(_ why: String) -> RestorationError {
            RestorationError(.corruptEntry, "The restoration report of a restorationCompleted marker \(why).")
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).makeIterator()
        guard let header = lines.next(), header.hasPrefix("SJRR\t") else { throw corrupt("does not start with SJRR") }
        guard Int(header.dropFirst(5)) == Self.formatVersion else {
            throw corrupt("is in format \(header.dropFirst(5)), which this version cannot read")
        }
        restoredCount = 0
        skippedCount = 0
        diagnosticCount = 0
        restored = []
        skipped = []
        diagnostics = []
        while let line = lines.next() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(Self.unescape)
            func path(_ index: Int) throws -> RestorationPath {
                do { return try RestorationPath(parsing: fields[index]) } catch { throw corrupt("names a bad path") }
            }
            switch (fields[0], fields.count) {
            case ("epoch", 2...): epoch = UInt64(fields[1])
            case ("reason", 2...): reason = Self.reason(Array(fields.dropFirst()))
            case ("counts", 4...):
                restoredCount = Int(fields[1]) ?? 0
                skippedCount = Int(fields[2]) ?? 0
                diagnosticCount = Int(fields[3]) ?? 0
            case ("r", 6...):
                let source: RestorationSource =
                    switch fields[1] {
                    case "c": .restorationClass
                    case "d": .delegate
                    case "f": .registeredFactory
                    default: .existing
                    }
                restored.append(
                    Restored(
                        path: try path(5), savedTypeName: fields[4], source: source, decoded: fields[2] == "1",
                        migrated: fields[3] == "1"))
            case ("s", 5...):
                skipped.append(
                    Skipped(
                        path: try path(4), savedTypeName: fields[3].isEmpty ? nil : fields[3], reason: fields[1],
                        detail: fields[2]))
            case ("d", 4...):
                diagnostics.append(
                    Diagnostic(code: fields[1], path: fields[2].isEmpty ? nil : try path(2), text: fields[3]))
            default: continue
            }
        }
    }

    private static func fields(of reason: RestorationReason) -> [String] {
        switch reason {
        case .launch: ["launch"]
        case .recoveryAfterCrash: ["recoveryAfterCrash"]
        case .crashLoopFallback(let avoided): ["crashLoopFallback", String(avoided)]
        case .requestedEpoch(let epoch): ["requestedEpoch", String(epoch)]
        case .restoredEpochCompacted(let epoch, let readThrough):
            ["restoredEpochCompacted", String(epoch), String(readThrough)]
        }
    }

    private static func reason(_ fields: [String]) -> RestorationReason? {
        let numbers = fields.dropFirst().compactMap { UInt64($0) }
        switch (fields.first, numbers.count) {
        case ("launch", _): return .launch
        case ("recoveryAfterCrash", _): return .recoveryAfterCrash
        case ("crashLoopFallback", 1...): return .crashLoopFallback(avoidedEpoch: numbers[0])
        case ("requestedEpoch", 1...): return .requestedEpoch(numbers[0])
        case ("restoredEpochCompacted", 2...): return .restoredEpochCompacted(numbers[0], readThrough: numbers[1])
        default: return nil
        }
    }

    private static func code(of source: RestorationSource) -> String {
        switch source {
        case .restorationClass: "c"
        case .delegate: "d"
        case .existing: "e"
        case .registeredFactory: "f"
        }
    }

    /// One line of fields, escaped, cut to ``maximumLineSize`` bytes by shortening its longest
    /// field (never a path: a line whose paths alone are too long is left out by the size check).
    private static func line(_ fields: [String]) -> String {
        var escaped = fields.map(escape)
        var size = escaped.reduce(escaped.count - 1) { $0 + $1.utf8.count }
        while size > maximumLineSize {
            // The detail-like fields: everything but the tag and the last (the path).
            let candidates = escaped.indices.dropFirst().dropLast()
            guard let longest = candidates.max(by: { escaped[$0].utf8.count < escaped[$1].utf8.count }),
                escaped[longest].utf8.count > 16
            else { break }
            let keep = max(8, escaped[longest].utf8.count - (size - maximumLineSize) - 1)
            var cut = String(decoding: escaped[longest].utf8.prefix(keep), as: UTF8.self)
            while cut.hasSuffix("\\") || cut.last == "\u{FFFD}" { cut.removeLast() }
            escaped[longest] = cut + "…"
            size = escaped.reduce(escaped.count - 1) { $0 + $1.utf8.count }
        }
        return escaped.joined(separator: "\t")
    }

    private static func escape(_ field: String) -> String {
        guard field.unicodeScalars.contains(where: { $0 == "\t" || $0 == "\n" || $0 == "\\" || $0 == "\r" }) else {
            return field
        }
        var result = String.UnicodeScalarView()
        for scalar in field.unicodeScalars {
            switch scalar {
            case "\\": result.append(contentsOf: "\\\\".unicodeScalars)
            case "\t": result.append(contentsOf: "\\t".unicodeScalars)
            case "\n": result.append(contentsOf: "\\n".unicodeScalars)
            case "\r": result.append(contentsOf: "\\r".unicodeScalars)
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    private static func unescape<S: StringProtocol>(_ field: S) -> String {
        guard field.unicodeScalars.contains("\\") else { return String(field) }
        var result = String.UnicodeScalarView()
        var escaping = false
        for scalar in field.unicodeScalars {
            if escaping {
                switch scalar {
                case "t": result.append("\t")
                case "n": result.append("\n")
                case "r": result.append("\r")
                default: result.append(scalar)
                }
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }
}
