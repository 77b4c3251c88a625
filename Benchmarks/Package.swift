// swift-tools-version:6.1
import PackageDescription

// The benchmark suites live in their own package so that the library's users never resolve the
// benchmark tooling. Run them from this directory with `swift package benchmark`.
let package = Package(
    name: "StateJournalBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "StateJournal", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Not a benchmark suite: the program `.ci/commit-instructions` counts a commit's
        // instructions with, under callgrind.
        .executableTarget(
            name: "CommitInstructions",
            dependencies: [.product(name: "StateJournal", package: "StateJournal")],
            path: "Benchmarks/CommitInstructions"
        ),
        // Not a benchmark suite: the program that counts a restoration pass's instructions with,
        // under callgrind, the default pass beside the incremental one.
        .executableTarget(
            name: "PassInstructions",
            dependencies: [
                .product(name: "StateJournal", package: "StateJournal"),
                .product(name: "StateRestoration", package: "StateJournal"),
            ],
            path: "Benchmarks/PassInstructions"
        ),
        // Not a benchmark suite: the engine at scale (write, open, growth), one figure per run.
        .executableTarget(
            name: "ScaleProbe",
            dependencies: [.product(name: "StateJournal", package: "StateJournal")],
            path: "Benchmarks/ScaleProbe"
        ),
        .executableTarget(
            name: "EngineBenchmarks",
            dependencies: [
                .product(name: "StateJournal", package: "StateJournal"),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/EngineBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .executableTarget(
            name: "RestorationBenchmarks",
            dependencies: [
                .product(name: "StateJournal", package: "StateJournal"),
                .product(name: "StateRestoration", package: "StateJournal"),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/RestorationBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
