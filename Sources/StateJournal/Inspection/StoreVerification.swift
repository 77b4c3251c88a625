import Foundation

/// The result of checking every checksum of a store.
public struct StoreVerification: Sendable, Hashable {
    /// How usable the store is.
    public enum Status: Int, Sendable, Hashable {
        /// Every record, checkpoint and the manifest is intact.
        case clean = 0
        /// Something is damaged, but replay reaches a consistent epoch.
        case damaged = 1
        /// The directory holds no store, or nothing consistent is left.
        case unusable = 2
    }

    /// How usable the store is; its raw value is the exit status of `statejournal verify`.
    public var status: Status
    /// The epoch replay reaches, if any.
    public var consistentEpoch: UInt64?
    /// Damage found in the segments, if any.
    public var damage: DamageReport?
    /// Checkpoints that failed their checks.
    public var damagedCheckpoints: [DamageReport]
    /// Bytes after the last commit that belong to no committed epoch (not damage).
    public var uncommittedTailBytes: Int64
    /// The end of the journal a power cut left only partly on the disk, which replay stops before
    /// and a writer's open cuts off: unsynced bytes, not damage. The store is still clean.
    public var unsyncedTail: UnsyncedTail? = nil
    /// Retained epochs checked.
    public var epochsChecked: Int
    /// Files in the directory that the manifest does not name, older than the newest file it names.
    /// Newer ones are a writer's work in progress, or its leftovers after a crash, which the next
    /// writer removes, and are not listed.
    public var unnamedFiles: [String]
    /// Why the store is unusable, when it is.
    public var failure: String?
    /// The epoch ``consistentEpoch`` names, as the check found it: for a restore, which reports it
    /// without reading the store again.
    package var consistentEpochInfo: EpochInfo? = nil
}

extension StoreInspector {
    /// Checks every record of every retained segment, every retained checkpoint, and the manifest.
    /// Never modifies the store.
    public static func verify(_ directory: URL) -> StoreVerification {
        verify(directory, decoding: true)
    }

    /// Checks the store as ``verify(_:)`` does, down to the framing: every record's checksum and
    /// length, every commit against the records of its epoch and the epoch before it, and every
    /// retained checkpoint's checksum and structure, but without decoding the entries or replaying
    /// the state, in memory that does not grow with the store (about two records and a few windows
    /// of 1 MiB). What it does not check (that each batch decompresses to entries, and each patch
    /// applies) is checked when the store is opened, which recovers from it as from any damage.
    package static func verifyFraming(_ directory: URL) -> StoreVerification {
        verify(directory, decoding: false)
    }

    private static func verify(_ directory: URL, decoding: Bool) -> StoreVerification {
        // A writer compacting beside the check can replace the manifest after the listing of
        // unnamed files: the check is run again against the new generation.
        let store = StoreDirectory(fileSystem: PosixFileSystem(), path: directory.path)
        var result = verifyOnce(directory, decoding: decoding)
        for _ in 0..<20 {
            guard let manifest = result.manifest, (try? store.readManifest()) != manifest else { break }
            result = verifyOnce(directory, decoding: decoding)
        }
        // A live writer removes the files of the generation it replaced just after the new
        // manifest: files that go within half a second were being removed, not left behind.
        for _ in 0..<5 where !result.verification.unnamedFiles.isEmpty {
            usleep(100_000)
            let present = Set((try? store.names()) ?? [])
            result.verification.unnamedFiles.removeAll { !present.contains($0) }
        }
        return result.verification
    }

    /// One pass of ``verify(_:)`` (`decoding`) or ``verifyFraming(_:)`` over the store at `path`
    /// in `fileSystem`, without the passes again that a writer's compaction beside it calls for:
    /// for the fuzz harnesses, which compare the two on stores held in memory.
    package static func verifyOnce(path: String, fileSystem: any FileSystem, decoding: Bool) -> StoreVerification {
        verifyOnce(URL(fileURLWithPath: path), decoding: decoding, fileSystem: fileSystem).verification
    }

    private static func verifyOnce(
        _ directory: URL, decoding: Bool, fileSystem: any FileSystem = PosixFileSystem()
    ) -> (
        verification: StoreVerification, manifest: Manifest?
    ) {
        var result = StoreVerification(
            status: .clean, consistentEpoch: nil, damage: nil, damagedCheckpoints: [], uncommittedTailBytes: 0,
            epochsChecked: 0,
            unnamedFiles: [], failure: nil)
        let listing = StoreDirectory(fileSystem: fileSystem, path: directory.path)
        var checked: Manifest?
        do {
            try JournalReading.consistently(
                fileSystem: fileSystem, directory: directory.path, { (try listing.readManifest(), nil) }
            ) { manifest, _, files in
                checked = manifest
                let store = StoreDirectory(fileSystem: files, path: directory.path)
                // Checked down to the framing, a checkpoint is read once: the scans below start from
                // it without reading it again. Decoding, they load the state they replay.
                let checked = decoding ? nil : CheckedCheckpoints()
                for checkpoint in manifest.checkpoints {
                    do {
                        if decoding {
                            _ = try CheckpointFile.load(checkpoint, storeID: manifest.storeID, in: store)
                        } else {
                            checked?.record(try CheckpointFile.check(checkpoint, storeID: manifest.storeID, in: store))
                        }
                    } catch let violation as FormatViolation where violation.unsupportedVersion != nil {
                        throw JournalScanner.unsupported(
                            violation, file: store.file(FileNames.checkpoint(checkpoint.sequence)))
                    } catch {
                        result.damagedCheckpoints.append(
                            DamageReport(
                                file: FileNames.checkpoint(checkpoint.sequence), offset: 0,
                                reason: (error as? FormatViolation)?.reason ?? "\(error)",
                                bytesDropped: 0, lastConsistentEpoch: nil, epochsLost: 0))
                    }
                }
                var epochs = 0
                // Both scans meet the same damage, if any: what lies beyond it is counted once.
                let damageCounts = DamageCounts()
                let scan = try JournalScanner(
                    fileSystem: files, directory: store.path, manifest: manifest,
                    options: ScanOptions(
                        decode: decoding, fromOldest: true, recovery: .stopAtDamage, streamsCheckpoint: !decoding,
                        checkedCheckpoints: checked),
                    damageCounts: damageCounts
                ).run { _, _ in
                    epochs += 1
                    return true
                }
                result.epochsChecked = epochs
                result.damage = scan.damage
                result.uncommittedTailBytes = scan.uncommittedTailBytes
                result.unsyncedTail = scan.unsyncedTail
                // Undamaged, and past the newest checkpoint, the scan from the oldest read every
                // segment a scan from the newest would read, with the same framing: the latest
                // consistent epoch is where it ended, and the segments are not read again.
                if !decoding, scan.damage == nil, result.damagedCheckpoints.isEmpty,
                    let last = scan.lastEpoch?.epoch, last >= manifest.checkpoints.last?.epoch ?? 0
                {
                    result.consistentEpoch = last
                    result.consistentEpochInfo = scan.lastEpoch
                } else {
                    result.consistentEpochInfo = try JournalScanner(
                        fileSystem: files, directory: store.path, manifest: manifest,
                        options: ScanOptions(
                            decode: decoding, recovery: .stopAtDamage, streamsCheckpoint: !decoding,
                            checkedCheckpoints: checked),
                        damageCounts: damageCounts
                    ).run().lastEpoch
                    result.consistentEpoch = result.consistentEpochInfo?.epoch
                }
                let named = Set(
                    manifest.segments.map(FileNames.segment)
                        + manifest.checkpoints.map { FileNames.checkpoint($0.sequence) })
                // Temporary files, files newer than every file the manifest names, and checkpoints
                // newer than every checkpoint it names are a writer's work in progress (a manifest
                // it replaces, a segment it rolled to, the checkpoint it folds into while it rolls
                // on to newer segments), or what a crash left of it, which the next writer removes:
                // neither is a problem of this generation.
                let newest = (manifest.segments + manifest.checkpoints.map(\.sequence)).max() ?? 0
                let newestCheckpoint = manifest.checkpoints.map(\.sequence).max() ?? 0
                result.unnamedFiles = (try store.names() ?? []).filter { name in
                    // The lock, a history hold and a crash note are the store's own and named by no
                    // manifest.
                    guard !named.contains(name) && name != FileNames.manifest && name != FileNames.lock,
                        name != FileNames.historyHold && name != FileNames.crashNote,
                        !name.hasSuffix(FileNames.temporarySuffix)
                    else { return false }
                    if let sequence = FileNames.checkpointSequence(name) { return sequence < newestCheckpoint }
                    guard let sequence = FileNames.segmentSequence(name) else { return true }
                    return sequence < newest
                }.sorted()
            }
            if result.damage != nil || !result.damagedCheckpoints.isEmpty { result.status = .damaged }
        } catch let error as JournalError {
            result.status = .unusable
            result.failure = error.message
        } catch {
            result.status = .unusable
            result.failure = "\(error)"
        }
        return (result, checked)
    }
}
