import Foundation
import StateJournal

/// One epoch in `--json` output: `epoch`, `timestamp` (ISO 8601, UTC), `metadata`, `entries`, `bytes`.
struct EpochJSON: Codable {
    var epoch: UInt64
    var timestamp: Date
    var metadata: [String: String]
    var entries: Int
    var bytes: Int

    init(_ info: EpochInfo) {
        epoch = info.epoch
        timestamp = info.timestamp
        metadata = info.metadata
        entries = info.entryCount
        bytes = info.bytes
    }
}
