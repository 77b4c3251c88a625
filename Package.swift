// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "StateJournal",
    products: [
        .library(name: "StateJournal", targets: ["StateJournal"]),
        .library(name: "StateRestoration", targets: ["StateRestoration"]),
        .executable(name: "statejournal", targets: ["statejournal"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "StateJournal",
            dependencies: ["CLZ4"]
        ),
        .target(
            name: "StateRestoration",
            dependencies: ["StateJournal"]
        ),
        .target(
            name: "StateRestorationExample",
            dependencies: ["StateRestoration"]
        ),
        .target(
            name: "StateJournalComparison",
            dependencies: ["StateJournal", "CLZ4", "CSQLite"]
        ),
        .executableTarget(
            name: "statejournal",
            dependencies: [
                "StateJournal",
                "StateJournalComparison",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "StateJournalTestSupport",
            dependencies: ["StateJournal"]
        ),
        .testTarget(
            name: "StateJournalTests",
            dependencies: ["StateJournal", "StateJournalTestSupport"],
            resources: [.copy("Golden")]
        ),
        .testTarget(
            name: "StatejournalToolTests",
            dependencies: ["StateJournal", "StateJournalTestSupport", "StateJournalComparison"]
        ),
        .testTarget(
            name: "StateRestorationTests",
            dependencies: ["StateRestoration", "StateRestorationExample", "StateJournalTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
