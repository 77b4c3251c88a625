import Foundation
import StateJournal

extension DemoCommand {
    /// The path of the demo's store that the most epochs wrote and that is still in its latest
    /// state: the one whose `history` shows the most.
    static func mostWrittenPath(in store: String) throws -> String {
        let inspector = try StoreInspector(at: URL(fileURLWithPath: store))
        let live = try inspector.state().entries
        var writes: [RestorationPath: Int] = [:]
        try inspector.reader.forEachEpoch { _, changes in
            for case .put(let path, _) in changes where live[path] != nil && !path.description.hasPrefix("@") {
                writes[path, default: 0] += 1
            }
            return true
        }
        let best = writes.max { ($0.value, $1.key.description) < ($1.value, $0.key.description) }
        return (best?.key ?? live.keys.min { $0.description < $1.description })?.description ?? "Main"
    }
}
