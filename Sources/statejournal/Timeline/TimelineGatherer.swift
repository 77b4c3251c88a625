import Foundation
import StateJournal
import StateRestoration

/// Reads a store through ``StoreInspector`` once, oldest epoch first, into a ``TimelineModel`` and
/// the ``VersionArchive`` of the states its epochs wrote.
struct TimelineGatherer {
    /// The metadata keys of the restoration layer and of `rewind`.
    private enum Key {
        static let kind = EpochMetadataKey.kind
        static let rewoundFrom = StoreInspector.rewoundFromKey
    }

    let inspector: StoreInspector
    let storePath: String
    /// How many bytes of rendered states the page may embed before older versions are left out.
    var stateBudget = 24 << 20

    /// Everything the page shows.
    func gather(progress: (String) -> Void = { _ in }) throws -> (TimelineModel, VersionArchive) {
        let files = try inspector.files()
        var epochs = TimelineModel.Epochs()
        var metadataIndex: [[String: String]: Int] = [:]
        var perPath: [RestorationPath: [(row: Int, state: [UInt8]?)]] = [:]
        var live: Set<RestorationPath> = []
        var launches: [TimelineModel.Launch] = []
        var markers: [TimelineModel.Marker] = []
        let checkpointEpoch = files.checkpoints.first?.epoch

        try inspector.reader.forEachEpoch { info, changes in
            let row = epochs.n.count
            if row % 500 == 0 { progress("reading epoch \(info.epoch)") }
            epochs.n.append(info.epoch)
            epochs.t.append(Int64((info.timestamp.timeIntervalSince1970 * 1000).rounded()))
            epochs.b.append(info.bytes)
            epochs.c.append(info.entryCount)
            let metadataRow =
                metadataIndex[info.metadata]
                ?? {
                    epochs.metadata.append(info.metadata)
                    metadataIndex[info.metadata] = epochs.metadata.count - 1
                    return epochs.metadata.count - 1
                }()
            epochs.m.append(metadataRow)
            let kind = Self.kind(of: info, isCheckpoint: row == 0 && info.epoch == checkpointEpoch)
            epochs.k.append(EpochKind.allCases.firstIndex(of: kind)!)
            if let source = info.metadata[Key.rewoundFrom], !info.isEventMarker {
                markers.append(.init(type: "rewound", row: row, text: "A store rewound from \(source) starts here."))
            }
            if info.eventMarkerKind == .replicaTermBegan {
                markers.append(.init(type: "termBegan", row: row, text: Self.termText(info)))
            }
            Self.followLaunches(info, row: row, kind: kind, launches: &launches, markers: &markers)
            if !info.isEventMarker { Self.noteClosedScenes(info, row: row, changes: changes, markers: &markers) }

            // One event per path and epoch, what the epoch left: a catch-up pass clears the store
            // and writes every live object again, and its paths were changed, not removed.
            func record(_ path: RestorationPath, _ bytes: [UInt8]?) {
                if perPath[path]?.last?.row == row { perPath[path, default: []].removeLast() }
                perPath[path, default: []].append((row, bytes))
            }
            for change in changes {
                switch change {
                case .put(let path, let bytes):
                    record(path, bytes)
                    live.insert(path)
                case .remove(let path):
                    record(path, nil)
                    live.remove(path)
                case .removeAll:
                    for path in live { record(path, nil) }
                    live.removeAll()
                }
            }
            return true
        }
        for launch in launches where launch.completed == nil && launch.began != launches.last?.began {
            markers.append(
                .init(
                    type: "unfinished", row: launch.began,
                    text:
                        """
                        This restoration began and never completed: the app died while restoring, or \
                        extendStateRestoration() was not balanced.
                        """
                ))
        }

        progress("reading the latest state")
        let latest = try inspector.state()
        let lastRow = max(0, epochs.n.count - 1)
        if let tail = latest.unsyncedTail {
            markers.append(.init(type: "unsyncedTail", row: lastRow, text: "Unsynced tail: \(tail.description)."))
        }
        if latest.uncommittedTailBytes > 0 {
            markers.append(
                .init(
                    type: "uncommittedTail", row: lastRow,
                    text:
                        """
                        \(latest.uncommittedTailBytes) bytes after the last commit belong to no committed epoch (an \
                        epoch being written, or one a crash cut short); the next writer cuts them off.
                        """
                ))
        }
        if let damage = latest.damage {
            markers.append(.init(type: "damage", row: lastRow, text: "Damage: \(damage.description)."))
        }

        progress("rendering states")
        let (paths, archive) = VersionArchive.build(perPath, rows: epochs.n.count, budget: stateBudget)
        let rowOfEpoch = Dictionary(epochs.n.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let model = TimelineModel(
            store: storePath, generated: Date().iso8601, epochs: epochs, paths: paths, launches: launches,
            markers: markers.sorted { $0.row < $1.row },
            compactions: files.checkpoints.map {
                TimelineModel.Compaction(
                    epoch: $0.epoch, row: rowOfEpoch[$0.epoch], file: $0.file, bytes: $0.bytes,
                    written: $0.written.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) })
            },
            files: TimelineModel.FilesSummary(
                totalBytes: files.totalBytes, segments: files.segments.count,
                segmentBytes: files.segments.reduce(0) { $0 + $1.bytes },
                checkpointBytes: files.checkpoints.reduce(0) { $0 + $1.bytes }, generation: files.generation,
                liveObjects: latest.count),
            archive: archive.summary)
        return (model, archive)
    }

    /// The colour an epoch gets.
    static func kind(of info: EpochInfo, isCheckpoint: Bool) -> EpochKind {
        if isCheckpoint { return .checkpoint }
        // A marker copies the metadata of the epoch before it: its own kind comes first.
        if info.eventMarkerKind == .replicaTermBegan { return .term }
        if info.metadata[Key.rewoundFrom] != nil { return .rewind }
        switch info.metadata[Key.kind].flatMap(RestorationEpochKind.init(rawValue:)) {
        case .preservation: return .pass
        case .discard: return .discard
        case .restorationBegan: return .restorationBegan
        case .restorationCompleted: return .restorationCompleted
        // A held or crashed restoration is a marker of the launch that began it: the timeline
        // draws it as a commit of no state, and the launch as one that never completed.
        case .restorationHeld, .restorationFailed, nil: return .commit
        }
    }

    /// Marks the epoch that discarded closed scenes (windows) with what it removed.
    private static func noteClosedScenes(
        _ info: EpochInfo, row: Int, changes: [JournalChange], markers: inout [TimelineModel.Marker]
    ) {
        guard let listed = info.metadata[EpochMetadataKey.discardedScenes] else { return }
        let names =
            (try? JSONDecoder().decode([String].self, from: Data(listed.utf8)))?.joined(separator: ", ") ?? listed
        markers.append(
            .init(
                type: "sceneDiscarded", row: row,
                text: "Window \(names) closed: its \(changes.count) saved paths were removed."))
    }

    /// What a term marker says, in a sentence: where the previous primary's history ends.
    static func termText(_ info: EpochInfo) -> String {
        let term = info.metadata[EventMarkerKey.term] ?? "?"
        let previous = info.metadata[EventMarkerKey.previousTerm] ?? "?"
        let how = info.metadata[EventMarkerKey.takenOver] == "1" ? "taken over by the operator's decision" : "promoted"
        guard let last = info.metadata[EventMarkerKey.continuesFrom] else {
            return "Replication term \(term) began here (\(how))."
        }
        return "Replication term \(term) began here (\(how)): the replica held epochs through \(last) of term "
            + "\(previous); whatever term \(previous)'s primary committed after them is not in this store."
    }

    /// Pairs restoration markers into launches, and flags crash-loop fallbacks and recoveries.
    private static func followLaunches(
        _ info: EpochInfo, row: Int, kind: EpochKind, launches: inout [TimelineModel.Launch],
        markers: inout [TimelineModel.Marker]
    ) {
        let restoring = info.metadata[EpochMetadataKey.restoringEpoch].flatMap { UInt64($0) }
        let scene = info.metadata[EpochMetadataKey.scene]
        switch kind {
        case .restorationBegan:
            launches.append(
                .init(
                    began: row, completed: nil, restoring: restoring,
                    unfinishedAttempts: info.metadata[EpochMetadataKey.unfinishedAttempts].flatMap { Int($0) },
                    report: nil, scene: scene))
        case .restorationCompleted:
            var launch: TimelineModel.Launch
            var slot = launches.endIndex
            // Scenes restore on their own: a marker completes the last restoration of its own scene.
            if let index = launches.lastIndex(where: { $0.scene == scene }), launches[index].completed == nil {
                launch = launches.remove(at: index)
                slot = index
            } else {
                // Its restorationBegan was folded into a checkpoint.
                launch = .init(
                    began: row, completed: nil, restoring: restoring, unfinishedAttempts: nil, report: nil, scene: scene
                )
            }
            launch.completed = row
            if let text = info.metadata[EpochMetadataKey.restorationReport] {
                launch.report = report(text)
            }
            switch launch.report?.reason {
            case let reason? where reason.hasPrefix("crashLoopFallback"):
                markers.append(
                    .init(
                        type: "crashLoopFallback", row: launch.began,
                        text:
                            """
                            Crash-loop fallback: restoring epoch \(reason.split(separator: " ").last ?? "?") had \
                            failed twice, so epoch \(launch.restoring.map(String.init) ?? "?") was restored instead.
                            """
                    ))
            case "recoveryAfterCrash":
                markers.append(
                    .init(
                        type: "recovered", row: launch.began,
                        text:
                            """
                            Recovered after a crash: opening the store cut off an epoch that never committed, or met \
                            damage; the latest consistent state was restored.
                            """
                    ))
            default: break
            }
            launches.insert(launch, at: slot)
        default: break
        }
    }

    /// The recorded report in the model's form.
    static func report(_ text: String) -> TimelineModel.Report {
        do {
            let record = try RecordedRestorationReport(decoding: text)
            return TimelineModel.Report(
                epoch: record.epoch, reason: record.reason.map(describe), restoredCount: record.restoredCount,
                skippedCount: record.skippedCount, diagnosticCount: record.diagnosticCount,
                restored: record.restored.map {
                    [
                        $0.path.description, $0.savedTypeName, "\($0.source)", $0.decoded ? "decoded" : "not decoded",
                        $0.migrated ? "migrated" : "",
                    ]
                },
                skipped: record.skipped.map { [$0.path.description, $0.savedTypeName ?? "", $0.reason, $0.detail] },
                diagnostics: record.diagnostics.map { [$0.code, $0.path?.description ?? "", $0.text] })
        } catch {
            return TimelineModel.Report(
                restoredCount: 0, skippedCount: 0, diagnosticCount: 0, restored: [], skipped: [], diagnostics: [],
                error: (error as? RestorationError)?.message ?? "\(error)")
        }
    }

    /// A reason in words the page shows: `launch`, `recoveryAfterCrash`, `crashLoopFallback 9`, ...
    static func describe(_ reason: RestorationReason) -> String {
        switch reason {
        case .launch: "launch"
        case .recoveryAfterCrash: "recoveryAfterCrash"
        case .crashLoopFallback(let avoided): "crashLoopFallback \(avoided)"
        case .requestedEpoch(let epoch): "requestedEpoch \(epoch)"
        case .restoredEpochCompacted(let epoch, let readThrough): "restoredEpochCompacted \(epoch) \(readThrough)"
        }
    }
}
