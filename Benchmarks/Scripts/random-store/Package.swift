// swift-tools-version:5.9
// A store of mostly random state bytes, for the restore figures of BackingUpAndMovingAStore.md:
//   swift build -c release && .build/release/random-store DIR MIB
import PackageDescription

let package = Package(
    name: "random-store",
    dependencies: [.package(name: "StateJournal", path: "../../..")],
    targets: [
        .executableTarget(
            name: "random-store",
            dependencies: [.product(name: "StateJournal", package: "StateJournal")],
            path: ".", sources: ["main.swift"])
    ]
)
