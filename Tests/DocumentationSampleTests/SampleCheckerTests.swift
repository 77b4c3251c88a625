import Foundation
import Testing

/// The documents' samples against the regions of this target (the rules are in ``SampleChecker``),
/// and the checker itself on small made-up documents.
struct SampleCheckerTests {
    @Test func everySwiftSampleInTheDocsIsTheCodeOfATest() throws {
        let checker = try SampleChecker.ofThisPackage()
        #expect(checker.documents.contains { $0.path.hasSuffix("GettingStarted.md") })
        #expect(checker.samples.count >= 6)
        for problem in checker.problems() {
            Issue.record("\(problem)")
        }
    }

    // MARK: - The checker on made-up documents

    /// A document with one sample, and a test file with its region, the two as given.
    private func checker(document: [String], testFile: [String], manifest: [String] = []) -> SampleChecker {
        SampleChecker(
            documents: [("Sources/M/M.docc/Guide.md", document.joined(separator: "\n"))],
            testFiles: [("Tests/DocumentationSampleTests/Samples/Guide.swift", testFile.joined(separator: "\n"))],
            manifest: manifest.joined(separator: "\n"))
    }

    private let document = [
        "# Guide", "", "Open it:", "", "```swift", "import Foundation", "import M", "",
        "let thing = try M.open(URL(fileURLWithPath: \"/var/lib/m\"))   ", "print(thing)", "```", "",
        "```sh", "m log /var/lib/m", "```",
    ]

    private let testFile = [
        "import Foundation", "import M", "", "func guide() throws {", "    // sample: Guide.md, opening",
        "    let thing = try M.open(URL(fileURLWithPath: \"/var/lib/m\"))", "    print(thing)",
        "    // end sample", "}",
    ]

    @Test func aSampleEqualToItsRegionPasses() {
        let checker = checker(document: document, testFile: testFile)
        #expect(checker.samples.count == 1)
        #expect(checker.samples.first?.line == 6)
        #expect(checker.problems() == [])
    }

    @Test func aSampleThatDiffersFromItsRegionIsNamedWithItsFirstLineAndTheRegionIsNamedAsGone() {
        var edited = document
        edited[9] = "print(thing.name)"
        let problems = checker(document: edited, testFile: testFile).problems()
        #expect(problems.count == 2)
        #expect(problems.first?.hasPrefix("Sources/M/M.docc/Guide.md:6:") == true)
        #expect(problems.first?.contains("let thing = try M.open") == true)
        #expect(
            problems.first?.contains("the sample has \"print(thing.name)\" and the region \"print(thing)\"") == true)
        #expect(problems.last?.hasPrefix("Tests/DocumentationSampleTests/Samples/Guide.swift:5:") == true)
    }

    @Test func aTestFileThatImportsOtherModulesThanItsSampleIsReported() {
        var file = testFile
        file[0] = "import Glibc"
        let problems = checker(document: document, testFile: file).problems()
        #expect(problems.count == 1)
        #expect(problems.first?.contains("the sample imports Foundation, M, but") == true)
    }

    @Test func aRegionForAnotherDocumentDoesNotCount() {
        var file = testFile
        file[4] = "    // sample: Other.md, opening"
        #expect(checker(document: document, testFile: file).problems().count == 2)
    }

    @Test func mainIsCommentedOutInARegion() {
        let document = ["```swift", "@main", "struct App {", "    static func main() {}", "}", "```"]
        let file = [
            "// sample: Guide.md", "// @main", "struct App {", "    static func main() {}", "}", "// end sample",
        ]
        #expect(checker(document: document, testFile: file).problems() == [])
    }

    @Test func aRegionWithoutItsEndIsReported() {
        let problems = checker(document: document, testFile: Array(testFile.prefix(7))).problems()
        #expect(problems.contains { $0.contains("has no \"// end sample\"") })
    }

    @Test func aManifestFragmentNamesOnlyProductsThePackageHasOrUses() {
        let manifest = [
            "let package = Package(", "    name: \"M\",", "    products: [.library(name: \"M\", targets: [\"M\"])],",
            "    targets: [.target(name: \"S\", dependencies: [.product(name: \"Logging\", package: \"swift-log\")])]",
            ")",
        ]
        let good = [
            "```swift", ".target(", "    name: \"App\",", "    dependencies: [",
            "        .product(name: \"M\", package: \"M\"),",
            "        .product(name: \"Logging\", package: \"swift-log\"),", "    ]", ")", "```",
        ]
        #expect(checker(document: good, testFile: [], manifest: manifest).problems() == [])

        var bad = good
        bad[4] = "        .product(name: \"MKit\", package: \"M\"),"
        bad[5] = "        .product(name: \"Logging\", package: \"swift-logging\"),"
        let problems = checker(document: bad, testFile: [], manifest: manifest).problems()
        #expect(problems.count == 2)
        #expect(problems.first?.contains("\"MKit\"") == true)
    }
}
