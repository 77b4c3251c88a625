import Foundation

/// A fresh directory under the system's temporary directory, removed when the value goes away.
public final class TemporaryDirectory: @unchecked Sendable {
    // @unchecked Sendable: immutable after init.

    /// The directory's path.
    public let path: String

    /// The directory as a file URL.
    public var url: URL { URL(fileURLWithPath: path) }

    /// Creates a new, empty directory.
    public init(prefix: String = "statejournal-test") {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/\(prefix)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func appending(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
