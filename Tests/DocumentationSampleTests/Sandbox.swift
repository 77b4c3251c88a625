import Foundation
import StateJournalTestSupport

/// The functions that hold the samples which are statements (see `Samples/`); each returns what
/// its test checks.
enum DocumentationSamples {}

/// The temporary directory in which a test runs a documentation sample.
///
/// Samples name their stores as an app would, by absolute paths such as `/var/lib/notes/state`. In
/// this test target, `URL(fileURLWithPath:)` puts such a path inside the sandbox of the running
/// task instead (see the extension of `URL` below), so that a sample runs unchanged against a
/// temporary store, and several samples run at once without meeting.
enum SampleSandbox {
    /// The sandbox of the running task, or `nil` outside ``run(creating:_:)``.
    @TaskLocal static var current: TemporaryDirectory?

    /// Runs `body` with a new sandbox in which the directories `parents` exist (absolute paths,
    /// such as `/var/lib/notes`, which an app's installation would have created).
    static func run<Result>(
        creating parents: [String], _ body: (TemporaryDirectory) async throws -> Result
    ) async throws -> Result {
        let directory = TemporaryDirectory(prefix: "documentation-sample")
        for parent in parents {
            try FileManager.default.createDirectory(atPath: directory.path + parent, withIntermediateDirectories: true)
        }
        return try await $current.withValue(directory) {
            // Were this target's `URL(fileURLWithPath:)` not the one samples call, they would touch
            // the real paths: refuse to run them.
            let probe = URL(fileURLWithPath: "/var/lib/probe")
            guard probe.path.hasPrefix(directory.path + "/") else { throw SandboxNotInUse(path: probe.path) }
            return try await body(directory)
        }
    }

    /// Where `path`, an absolute path of a sample, is inside `sandbox`.
    static func url(of path: String, in sandbox: TemporaryDirectory) -> URL {
        URL(fileURLWithPath: sandbox.path + path, isDirectory: true)
    }
}

/// Thrown when `URL(fileURLWithPath:)` does not put paths inside the sandbox.
struct SandboxNotInUse: Error, CustomStringConvertible {
    /// Where a path of a sample would go.
    var path: String

    var description: String {
        "URL(fileURLWithPath:) put a sample's path at \(path), outside its sandbox; no sample was run."
    }
}

extension URL {
    /// Foundation's `URL(fileURLWithPath:)` for the documentation samples: an absolute path is put
    /// inside the running task's ``SampleSandbox``.
    ///
    /// It shadows Foundation's initializer in this target only (a declaration of the module being
    /// compiled wins over the same declaration imported), so a sample keeps the path its article
    /// shows. Outside a sandbox it stops the test rather than touch the real path.
    init(fileURLWithPath path: __shared String) {
        guard let sandbox = SampleSandbox.current else {
            preconditionFailure("A documentation sample opened \(path) outside SampleSandbox.run")
        }
        precondition(path.hasPrefix("/"), "Documentation samples name their stores by absolute paths, not \(path)")
        self = SampleSandbox.url(of: path, in: sandbox)
    }
}
