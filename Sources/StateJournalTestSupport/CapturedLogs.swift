import Foundation
import Logging

/// A log that keeps every message a ``logger`` was given, for tests to read.
public final class CapturedLogs: @unchecked Sendable {
    // @unchecked Sendable: `entries` is read and written with `lock` held.

    /// One logged message.
    public struct Entry: Sendable {
        /// The level it was logged at.
        public var level: Logger.Level
        /// The message.
        public var message: String
        /// The metadata, the logger's own merged with the call's.
        public var metadata: Logger.Metadata
    }

    private let lock = NSLock()
    private var entries: [Entry] = []

    /// Creates an empty log.
    public init() {}

    /// A logger at `trace` level that writes into this log.
    public var logger: Logger {
        Logger(label: "test", factory: { _ in Handler(log: self) })
    }

    /// What was logged so far, oldest first.
    public var all: [Entry] {
        lock.withLock { entries }
    }

    /// The messages logged at `level` whose text contains `text`.
    public func entries(_ level: Logger.Level, containing text: String) -> [Entry] {
        all.filter { $0.level == level && $0.message.contains(text) }
    }

    fileprivate func append(_ entry: Entry) {
        lock.withLock { entries.append(entry) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            log.append(
                Entry(
                    level: event.level, message: event.message.description,
                    metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
        }
    }
}
