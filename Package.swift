// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "StateJournal",
    products: [
        .library(name: "StateJournal", targets: ["StateJournal"]),
        .library(name: "StateRestoration", targets: ["StateRestoration"]),
        .library(name: "StateRestorationService", targets: ["StateRestorationService"]),
        .library(name: "UIKitRestoration", targets: ["UIKitRestoration"]),
        .library(name: "StateJournalReplication", targets: ["StateJournalReplication"]),
        .executable(name: "statejournal", targets: ["statejournal"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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
        .target(name: "CCRC32C"),
        .target(
            name: "StateJournal",
            dependencies: [
                "CLZ4",
                "CCRC32C",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "StateRestoration",
            dependencies: [
                "StateJournal",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // UIKit's restoration names (UIViewController, UIStateRestoring, UIApplication's keys...)
        // over StateRestoration, so that ported UIKit code compiles with one import.
        .target(
            name: "UIKitRestoration",
            dependencies: ["StateRestoration"]
        ),
        .target(
            name: "StateRestorationService",
            dependencies: [
                "StateRestoration",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Shipping a store to S3-compatible object storage and bringing it back: the only product that
        // pulls an HTTP client (Foundation's URLSession) and crypto, so that apps that do not ship build
        // neither.
        .target(
            name: "StateJournalReplication",
            dependencies: [
                "StateJournal",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
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
                "StateRestoration",
                "StateRestorationExample",
                "StateJournalComparison",
                "StateJournalReplication",
                "CLZ4",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The timeline page's template, style sheet and scripts, compiled into the tool as byte
            // arrays (PackageResources): the tool writes a page wherever it is copied, without a
            // resource bundle beside it.
            resources: [
                .embedInCode("Timeline/Assets/timeline.html"),
                .embedInCode("Timeline/Assets/timeline.css"),
                .embedInCode("Timeline/Assets/timeline.js"),
                .embedInCode("Timeline/Assets/timeline-errors.js"),
            ]
        ),
        .executableTarget(
            name: "StateJournalFuzz",
            dependencies: [
                "StateJournal", "StateRestoration", "StateRestorationExample", "StateJournalReplication", "CLZ4",
            ]
        ),
        .target(
            name: "StateJournalTestSupport",
            dependencies: ["StateJournal", "StateJournalComparison", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "StateJournalTests",
            dependencies: [
                "StateJournal", "StateJournalTestSupport", "StateJournalComparison",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            resources: [.copy("Golden")]
        ),
        // Needs a real S3 server: .ci/run starts one (.ci/ceph-rgw-start) and names its env file in
        // STATEJOURNAL_S3_ENV; the tests that need it fail, saying why, when it is not there.
        .testTarget(
            name: "StateJournalReplicationTests",
            dependencies: [
                "StateJournal", "StateJournalReplication", "StateJournalTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            // The misbehaving S3 endpoint the untrusted-bucket tests run (a redirect, a slow body), the
            // fault proxy put before the gateway, and the golden replicas, read from the source tree.
            exclude: ["HostileEndpoint.py", "FaultProxy.py", "Golden"]
        ),
        .testTarget(
            name: "StatejournalToolTests",
            dependencies: ["StateJournal", "StateRestoration", "StateJournalTestSupport", "StateJournalComparison"]
        ),
        .testTarget(
            name: "StateRestorationTests",
            dependencies: [
                "StateRestoration", "StateRestorationExample", "StateJournalTestSupport",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // Every ```swift sample of README.md and the DocC articles, compiled and run; see
        // Tests/DocumentationSampleTests/SampleChecker.swift for the rules.
        .testTarget(
            name: "DocumentationSampleTests",
            dependencies: [
                "StateJournal", "StateRestoration", "StateRestorationService", "UIKitRestoration",
                "StateJournalTestSupport",
                "StateJournalReplication",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "UIKitRestorationTests",
            dependencies: ["UIKitRestoration", "StateRestorationService", "StateJournalTestSupport"]
        ),
        .testTarget(
            name: "StateRestorationServiceTests",
            dependencies: [
                "StateRestorationService", "StateRestorationExample", "StateJournalTestSupport",
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// `.ci/sanitizers` runs the engine, restoration and service suites under ThreadSanitizer and
// AddressSanitizer, each in a build of its own. With STATEJOURNAL_SANITIZED_SUITES_ONLY set, as it
// sets it, the package declares only those suites and what they link, so that the two sanitized
// builds do not compile the replication product (swift-crypto's BoringSSL among it), the tool and
// the tests that no sanitizer runs. Nothing else sets it.
if Context.environment["STATEJOURNAL_SANITIZED_SUITES_ONLY"] != nil {
    let kept: Set<String> = [
        "CLZ4", "CSQLite", "CCRC32C", "StateJournal", "StateRestoration", "StateRestorationService",
        "StateRestorationExample", "StateJournalComparison", "StateJournalTestSupport", "StateJournalTests",
        "StateRestorationTests", "StateRestorationServiceTests",
    ]
    package.targets.removeAll { !kept.contains($0.name) }
    package.products.removeAll { product in
        let targets = (product as? Product.Library)?.targets ?? (product as? Product.Executable)?.targets ?? []
        return !targets.allSatisfy(kept.contains)
    }
}
