import Foundation

/// Checks that every ```swift sample of README.md and of the DocC articles (`Sources/*/*.docc/*.md`)
/// is the code of a test in this target, so that CI compiles and runs every sample, and fails when
/// an article's sample and its test part ways.
///
/// The rules:
///
/// - A sample is a block fenced with ```` ```swift ````. Other blocks (shell commands, output,
///   byte layouts) are fenced with another language or none, and are not checked.
/// - Each sample has a region in a Swift file of this target, between a line `// sample: FILE …`
///   (FILE is the document's file name, such as `GettingStarted.md`, followed by free words) and a
///   line `// end sample`. The region holds the sample without its `import` lines, inside a function
///   when the sample is statements, at file scope when it declares types; samples that declare
///   types share the target's module, so later steps of an article use the types of earlier ones.
/// - The file holding a region imports exactly the modules the sample imports: a file can import
///   nothing else, so a sample that forgets an import does not compile.
/// - Compared after removing trailing whitespace, blank lines at either end and the indentation
///   common to all lines, the region equals the sample, except that a line `@main` of the sample is
///   `// @main` in the region (a test target has its own entry point; the test calls `main()`).
/// - A sample that is a fragment of a `Package.swift` (its code starts with `.`, as
///   `.target(name: …)` does) cannot be compiled in a test and has no region. Instead, each
///   `.product(name:package:)` it names must be a library of this package's Package.swift (the
///   package named in any case, as SwiftPM compares identities) or a product that Package.swift
///   itself depends on, with the same package name.
///
/// Every region whose sample is gone is reported too, so that the tests follow the documents.
struct SampleChecker {
    /// A ```swift block of a document.
    struct Sample {
        /// The document's path, relative to the package root.
        var document: String
        /// The line number of the sample's first line of code.
        var line: Int
        /// The modules the sample imports.
        var imports: Set<String>
        /// The code after its `import` lines, normalised.
        var code: [String]

        /// The document's file name, which the names of regions start with.
        var documentName: String { (document as NSString).lastPathComponent }
        /// The sample's first line, to name it in a report.
        var firstLine: String { code.first ?? "" }
        /// Whether the sample is a fragment of a `Package.swift`.
        var isManifestFragment: Bool { imports.isEmpty && code.first?.hasPrefix(".") == true }
    }

    /// A marked region of a test file.
    struct Region {
        /// The file's path, relative to the package root.
        var file: String
        /// The line number of the `// sample:` marker.
        var line: Int
        /// What follows `// sample:`.
        var name: String
        /// The modules the file imports.
        var fileImports: Set<String>
        /// The code between the markers, normalised.
        var code: [String]

        /// The document the region is for: the first word of its name.
        var documentName: String {
            String(name.prefix { !$0.isWhitespace && $0 != "," && $0 != ":" })
        }
    }

    /// The documents, each as its path relative to the package root and its text.
    var documents: [(path: String, text: String)]
    /// The test files, each as its path relative to the package root and its text.
    var testFiles: [(path: String, text: String)]
    /// The text of the package's Package.swift.
    var manifest: String

    /// Every ```swift block of the documents.
    var samples: [Sample] {
        documents.flatMap { Self.samples(in: $0.text, document: $0.path) }
    }

    /// What breaks the rules, one sentence each; empty when every sample has its region.
    func problems() -> [String] {
        var problems: [String] = []
        var regions: [Region] = []
        for file in testFiles {
            switch Self.regions(in: file.text, file: file.path) {
            case .success(let found): regions += found
            case .failure(let problem): problems.append(problem.message)
            }
        }
        var unmatched = regions
        for sample in samples {
            if sample.isManifestFragment {
                problems += manifestProblems(of: sample)
                continue
            }
            let candidates = unmatched.indices.filter {
                unmatched[$0].documentName == sample.documentName && unmatched[$0].code == sample.code
            }
            guard
                let index = candidates.first(where: { unmatched[$0].fileImports == sample.imports }) ?? candidates.first
            else {
                problems.append(missingRegionProblem(of: sample, among: unmatched))
                continue
            }
            let region = unmatched.remove(at: index)
            if region.fileImports != sample.imports {
                problems.append(
                    "\(sample.document):\(sample.line): the sample imports \(Self.list(sample.imports)), but "
                        + "\(region.file), which holds its region, imports \(Self.list(region.fileImports)); "
                        + "make them the same, so that the sample compiles with its own imports.")
            }
        }
        for region in unmatched {
            problems.append(
                "\(region.file):\(region.line): the region \"\(region.name)\" is the code of no ```swift sample of "
                    + "\(region.documentName) any more; update it to the sample, or remove it and its test.")
        }
        return problems
    }

    // MARK: - Reports

    private func missingRegionProblem(of sample: Sample, among regions: [Region]) -> String {
        var problem =
            "\(sample.document):\(sample.line): the ```swift sample starting \"\(sample.firstLine)\" is the code of "
            + "no region in Tests/DocumentationSampleTests (a region \"// sample: \(sample.documentName) …\" "
            + "holding the sample without its imports, up to \"// end sample\")."
        // The region of the same document that shares the most lines with the sample is most
        // likely the one the sample was edited away from: say where they part.
        let closest = regions.filter { $0.documentName == sample.documentName }.max {
            Set($0.code).intersection(sample.code).count < Set($1.code).intersection(sample.code).count
        }
        if let closest, !Set(closest.code).isDisjoint(with: sample.code) {
            let common = min(closest.code.count, sample.code.count)
            let index = (0..<common).first { closest.code[$0] != sample.code[$0] } ?? common
            let documentLine = index < sample.code.count ? "\"\(sample.code[index])\"" : "its end"
            let regionLine = index < closest.code.count ? "\"\(closest.code[index])\"" : "its end"
            problem +=
                " The closest is \(closest.file):\(closest.line) (\"\(closest.name)\"); at line \(index + 1) of the "
                + "code, the sample has \(documentLine) and the region \(regionLine)."
        }
        return problem
    }

    private func manifestProblems(of sample: Sample) -> [String] {
        let packageName = Self.captures(#"Package\(\s*name:\s*"([^"]+)""#, in: manifest).first?.first ?? ""
        let libraries = Set(Self.captures(#"\.library\(\s*name:\s*"([^"]+)""#, in: manifest).map { $0[0] })
        let productPattern = #"\.product\(\s*name:\s*"([^"]+)",\s*package:\s*"([^"]+)"\s*\)"#
        let dependedOn = Set(Self.captures(productPattern, in: manifest).map { $0[0] + " " + $0[1] })
        let products = Self.captures(productPattern, in: sample.code.joined(separator: "\n"))
        if products.isEmpty {
            return [
                "\(sample.document):\(sample.line): the Package.swift fragment starting \"\(sample.firstLine)\" names "
                    + "no .product(name:package:), so nothing of it can be checked; fence it as something other "
                    + "than swift, or name the products."
            ]
        }
        return products.compactMap { match in
            let (name, package) = (match[0], match[1])
            // SwiftPM compares package identities without regard to case: a package cloned from
            // `…/statejournal` is `statejournal`.
            if package.lowercased() == packageName.lowercased() {
                return libraries.contains(name)
                    ? nil
                    : "\(sample.document):\(sample.line): the Package.swift fragment names the product \"\(name)\" "
                        + "of \(package), which Package.swift does not declare as a library."
            }
            return dependedOn.contains(name + " " + package)
                ? nil
                : "\(sample.document):\(sample.line): the Package.swift fragment names the product \"\(name)\" of "
                    + "\(package), which this package's Package.swift does not depend on under that name."
        }
    }

    // MARK: - Parsing

    /// The ```swift blocks of a document's text.
    static func samples(in text: String, document: String) -> [Sample] {
        var samples: [Sample] = []
        var fence: (language: String, line: Int, indentation: Int, lines: [String])?
        for (offset, line) in lines(of: text).enumerated() {
            let trimmed = line.drop { $0 == " " }
            if var open = fence {
                if trimmed.hasPrefix("```") && trimmed.dropFirst(3).allSatisfy(\.isWhitespace) {
                    if open.language == "swift" {
                        let (imports, code) = splitImports(normalised(open.lines))
                        samples.append(Sample(document: document, line: open.line, imports: imports, code: code))
                    }
                    fence = nil
                } else {
                    open.lines.append(line)
                    fence = open
                }
            } else if trimmed.hasPrefix("```") {
                let info = trimmed.dropFirst(3).trimmingCharacters(in: .whitespaces)
                let language = info.prefix { !$0.isWhitespace && $0 != "{" }
                fence = (String(language), offset + 2, line.count - trimmed.count, [])
            }
        }
        return samples
    }

    /// A region that does not close, or a marker in the wrong place.
    struct RegionProblem: Error {
        var message: String
    }

    /// The marked regions of a test file's text.
    static func regions(in text: String, file: String) -> Result<[Region], RegionProblem> {
        let lines = lines(of: text)
        let imports = Set(lines.compactMap(importedModule))
        var regions: [Region] = []
        var open: (line: Int, name: String, lines: [String])?
        for (offset, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// sample:") {
                if let open {
                    return .failure(
                        RegionProblem(
                            message: "\(file):\(offset + 1): a region starts inside the one of line \(open.line)."))
                }
                let name = trimmed.dropFirst("// sample:".count).trimmingCharacters(in: .whitespaces)
                open = (offset + 1, name, [])
            } else if trimmed == "// end sample" {
                guard let region = open else {
                    return .failure(RegionProblem(message: "\(file):\(offset + 1): \"// end sample\" ends no region."))
                }
                let code = normalised(region.lines).map {
                    $0.trimmingCharacters(in: .whitespaces) == "// @main" ? "@main" : $0
                }
                regions.append(
                    Region(file: file, line: region.line, name: region.name, fileImports: imports, code: code))
                open = nil
            } else if open != nil {
                open!.lines.append(line)
            }
        }
        if let open {
            return .failure(
                RegionProblem(message: "\(file):\(open.line): the region \"\(open.name)\" has no \"// end sample\"."))
        }
        return .success(regions)
    }

    /// The lines of a text, without line terminators.
    static func lines(of text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasSuffix("\r") ? String($0.dropLast()) : String($0)
        }
    }

    /// `lines` without trailing whitespace, blank lines at either end, and the indentation common
    /// to every line that is not blank.
    static func normalised(_ lines: [String]) -> [String] {
        var lines = lines.map { line in String(line.reversed().drop(while: \.isWhitespace).reversed()) }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let indentation = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " || $0 == "\t" }.count }.min() ?? 0
        return lines.map { $0.isEmpty ? $0 : String($0.dropFirst(indentation)) }
    }

    /// The modules a sample's leading `import` lines name, and the code after them.
    static func splitImports(_ lines: [String]) -> (imports: Set<String>, code: [String]) {
        var imports: Set<String> = []
        var index = 0
        while index < lines.count {
            if let module = importedModule(lines[index]) {
                imports.insert(module)
            } else if !lines[index].isEmpty {
                break
            }
            index += 1
        }
        return (imports, Array(lines[index...]))
    }

    /// The module an `import` declaration names, or `nil` when the line is not one.
    static func importedModule(_ line: String) -> String? {
        captures(#"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*import\s+(?:[a-z]+\s+)?([A-Za-z_][A-Za-z0-9_]*)"#, in: line)
            .first?.first
    }

    /// The capture groups of every match of `pattern` in `text`.
    static func captures(_ pattern: String, in text: String) -> [[String]] {
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(text.startIndex..., in: text)
        return expression.matches(in: text, range: range).map { match in
            (1..<match.numberOfRanges).map { group in
                Range(match.range(at: group), in: text).map { String(text[$0]) } ?? ""
            }
        }
    }

    private static func list(_ modules: Set<String>) -> String {
        modules.isEmpty ? "nothing" : modules.sorted().joined(separator: ", ")
    }
}

extension SampleChecker {
    /// The checker over this package's documents and this target's Swift files, read from the
    /// package that holds `filePath`, a file of this target.
    static func ofThisPackage(filePath: String = #filePath) throws -> SampleChecker {
        let target = URL(fileURLWithPath: filePath, isDirectory: false).deletingLastPathComponent()
        let root = target.deletingLastPathComponent().deletingLastPathComponent()
        let files = FileManager.default
        func read(_ relative: String) throws -> (path: String, text: String) {
            (relative, try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8))
        }
        var documents = [try read("README.md")]
        for module in try files.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path).sorted() {
            let sources = "Sources/" + module
            for catalog in (try? files.contentsOfDirectory(atPath: root.appendingPathComponent(sources).path)) ?? []
            where catalog.hasSuffix(".docc") {
                let docc = sources + "/" + catalog
                for article in try files.contentsOfDirectory(atPath: root.appendingPathComponent(docc).path).sorted()
                where article.hasSuffix(".md") {
                    documents.append(try read(docc + "/" + article))
                }
            }
        }
        let targetPath = "Tests/" + target.lastPathComponent
        var testFiles: [(path: String, text: String)] = []
        let enumerator = files.enumerator(atPath: target.path)
        while let relative = enumerator?.nextObject() as? String {
            if relative.hasSuffix(".swift") { testFiles.append(try read(targetPath + "/" + relative)) }
        }
        testFiles.sort { $0.path < $1.path }
        return SampleChecker(documents: documents, testFiles: testFiles, manifest: try read("Package.swift").text)
    }
}
