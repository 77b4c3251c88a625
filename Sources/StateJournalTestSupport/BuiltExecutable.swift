import Foundation

/// The executables the package builds, as the tests run them.
package enum BuiltExecutable {
    /// The executable `name` in the build's products directory, next to the test bundle (or, when it
    /// is not found, where it would be).
    package static func url(of name: String) -> URL {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent(name),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }
}
